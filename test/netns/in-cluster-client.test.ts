// An in-cluster client from inside a netns pod (issue 20): python3 with the pod's projected
// service-account token and CA and KUBERNETES_SERVICE_HOST/PORT lists pods through the
// `kubernetes` Service's ClusterIP — 403 until RBAC grants its ServiceAccount `view`, then the
// list, verified against the cluster CA for 10.96.0.1.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const SCRIPT = [
  'import json, os, ssl, urllib.request, urllib.error',
  "d = '/var/run/secrets/kubernetes.io/serviceaccount'",
  "tok = open(d + '/token').read(); ns = open(d + '/namespace').read()",
  "ctx = ssl.create_default_context(cafile=d + '/ca.crt')",
  "url = 'https://%s:%s/api/v1/namespaces/%s/pods' % (os.environ['KUBERNETES_SERVICE_HOST'], os.environ['KUBERNETES_SERVICE_PORT'], ns)",
  "req = urllib.request.Request(url, headers={'Authorization': 'Bearer ' + tok})",
  'try:',
  "    items = json.load(urllib.request.urlopen(req, context=ctx, timeout=10))['items']",
  "    print('OK', url, ' '.join(sorted(p['metadata']['name'] for p in items)))",
  'except urllib.error.HTTPError as e:',
  "    print('HTTP', e.code, json.load(e)['message'])",
].join('\n');

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare', 'python3']))('an in-cluster client in a netns pod', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-incluster-')));
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: 33 });
  const runClient = async (name: string) => {
    const r = await kubectl(['run', name, '--image=python:3.12-slim', '--restart=Never', '--command', '--',
      'python3', '-c', SCRIPT]);
    expect(r.err).toBe('');
    await waitFor(async () => {
      const p = await cluster.client.get<Pod>(PODS, name);
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? true : undefined;
    }, 60_000, `${name} finished`);
    return (await kubectl(['logs', name])).out.trim();
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      dns: false, progress: () => {} });
    await waitFor(async () => cluster.client.get({ group: '', version: 'v1', resource: 'configmaps',
      namespace: 'default' }, 'kube-root-ca.crt').then(() => true, () => undefined), 20_000, 'kube-root-ca.crt');
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  it('403 for the default ServiceAccount without RBAC, the pod list once it may view', async () => {
    expect(await runClient('before')).toBe('HTTP 403 pods is forbidden: User "system:serviceaccount:default:default" ' +
      'cannot list resource "pods" in API group "" in the namespace "default"');
    expect((await kubectl(['create', 'rolebinding', 'sa-view', '--clusterrole=view',
      '--serviceaccount=default:default'])).code).toBe(0);
    const out = await runClient('after');
    expect(out).toMatch(/^OK https:\/\/10\.96\.0\.1:443\/api\/v1\/namespaces\/default\/pods /);
    expect(out.split(' ').slice(2)).toEqual(expect.arrayContaining(['after', 'before']));
  }, 150_000);
});
