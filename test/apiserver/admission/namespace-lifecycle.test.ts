import { describe, expect, it } from 'vitest';
import {
  buildAdmissionPlugins, buildNamespaceLifecyclePlugin,
} from '../../../src/apiserver/admission/index.js';
import type { AdmissionRequest } from '../../../src/apiserver/pipeline-types.js';
import type { KubeObject } from '../../../src/client/types.js';
import type { KdpError } from '../../../src/errors.js';
import { Harness } from './harness.js';

const user = { name: 'u', groups: [] };

function ns(name: string, phase = 'Active'): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase } };
}

function req(more: Partial<AdmissionRequest>): AdmissionRequest {
  return { operation: 'CREATE', group: '', version: 'v1', resource: 'configmaps', user,
    dryRun: false, ...more };
}

async function rejection(p: Promise<unknown>): Promise<KdpError | undefined> {
  return p.then(() => undefined, (e: KdpError) => e);
}

describe('NamespaceLifecycle', () => {
  const h = new Harness();
  h.put(ns('default'));
  h.put(ns('team'));
  h.put(ns('leaving', 'Terminating'));
  const plugin = buildNamespaceLifecyclePlugin(h);
  const cm = (namespace: string): KubeObject =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace } });

  it('allows creating objects in an existing active namespace', async () => {
    expect(await rejection(plugin.admit!(req({ namespace: 'team', object: cm('team') }))))
      .toBeUndefined();
  });

  it('rejects objects in a missing namespace with 404 namespaces "x" not found', async () => {
    const e = await rejection(plugin.admit!(req({ namespace: 'ghost', object: cm('ghost') })));
    expect(e?.code).toBe('KDP_NOT_FOUND');
    expect(e?.message).toBe('namespaces "ghost" not found');
    const upd = await rejection(plugin.admit!(req({ operation: 'UPDATE', namespace: 'ghost',
      name: 'c', object: cm('ghost') })));
    expect(upd?.code).toBe('KDP_NOT_FOUND');
  });

  it('rejects creating in a terminating namespace with upstream\'s message and cause',
    async () => {
      const e = await rejection(plugin.admit!(req({ namespace: 'leaving',
        object: cm('leaving') })));
      expect(e?.code).toBe('KDP_FORBIDDEN');
      expect(e?.message).toBe('configmaps "c" is forbidden: unable to create new content in ' +
        'namespace leaving because it is being terminated');
      expect(e?.details.causes).toEqual([{ field: 'metadata.namespace',
        reason: 'NamespaceTerminating', message: 'namespace leaving is being terminated' }]);
    });

  it('still allows updates and deletes in a terminating namespace', async () => {
    expect(await rejection(plugin.admit!(req({ operation: 'UPDATE', namespace: 'leaving',
      name: 'c', object: cm('leaving') })))).toBeUndefined();
    expect(await rejection(plugin.admit!(req({ operation: 'DELETE', namespace: 'ghost',
      name: 'c' })))).toBeUndefined();
  });

  it('forbids deleting default, kube-system and kube-public', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const e = await rejection(plugin.admit!(req({ operation: 'DELETE',
        resource: 'namespaces', name })));
      expect(e?.code).toBe('KDP_FORBIDDEN');
      expect(e?.message).toBe(`namespaces "${name}" is forbidden: this namespace may not be ` +
        'deleted');
    }
    expect(await rejection(plugin.admit!(req({ operation: 'DELETE', resource: 'namespaces',
      name: 'team' })))).toBeUndefined();
  });

  it('ignores cluster-scoped objects and access reviews', async () => {
    expect(await rejection(plugin.admit!(req({ resource: 'nodes' })))).toBeUndefined();
    expect(await rejection(plugin.admit!(req({ group: 'authorization.k8s.io',
      resource: 'localsubjectaccessreviews', namespace: 'ghost' })))).toBeUndefined();
  });
});

describe('buildAdmissionPlugins', () => {
  it('accepts a source addressed by group first, as the API server wiring passes it',
    async () => {
      const h = new Harness();
      h.put(ns('team'));
      const calls: string[] = [];
      const grouped = {
        get: (group: string, resource: string, namespace: string | undefined, name: string) => {
          calls.push(`${group}/${resource}`);
          return h.get(resource, namespace, name);
        },
        list: (group: string, resource: string, namespace?: string) => h.list(resource, namespace),
      };
      const [lifecycle] = buildAdmissionPlugins({ serviceCIDRs: ['10.96.0.0/12'],
        source: grouped });
      const e = await rejection(lifecycle!.admit!(req({ namespace: 'gone' })));
      expect(e?.code).toBe('KDP_NOT_FOUND');
      expect(calls).toEqual(['/namespaces']);
    });
});
