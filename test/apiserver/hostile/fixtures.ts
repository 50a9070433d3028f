// The objects every hostile table runs against: namespace `hostile` with one object of each
// kind the type tables cover (every field a table breaks exists, so JSON patches reach it),
// namespace `victim` (contents that refused namespace deletes must leave), `doomed` (deleted by
// an accepted control), and a user `cm-reader` who may only read ConfigMaps in `hostile`.

import { expect } from 'vitest';
import { CM_READER_USER } from './harness.js';
import type { HostileServer } from './harness.js';

export { RawJson } from './harness.js';

export const NS = 'hostile';
export const CORE = `/api/v1/namespaces/${NS}`;
export const APPS = `/apis/apps/v1/namespaces/${NS}`;
export const VICTIM = 'victim';

export type KindName = 'ConfigMap' | 'Secret' | 'Service' | 'Deployment' | 'Pod';

export interface KindInfo {
  readonly apiVersion: string;
  /** Collection path in `hostile`. */
  readonly collection: string;
  /** Name of the stored fixture object. */
  readonly fixture: string;
  /** A valid object of this kind named `name` (the fixture is `make(fixture)`). */
  make(name: string): Record<string, any>;
}

export const KINDS: Record<KindName, KindInfo> = {
  ConfigMap: {
    apiVersion: 'v1', collection: `${CORE}/configmaps`, fixture: 'cm',
    make: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { a: 'b' } },
      data: { k: 'v' }, binaryData: { b: 'AAEC' } }),
  },
  Secret: {
    apiVersion: 'v1', collection: `${CORE}/secrets`, fixture: 'sec',
    make: (name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque',
      data: { k: 'dmFsdWU=' } }),
  },
  Service: {
    apiVersion: 'v1', collection: `${CORE}/services`, fixture: 'svc',
    make: (name) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080,
        protocol: 'TCP' }], sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } } }),
  },
  Deployment: {
    apiVersion: 'apps/v1', collection: `${APPS}/deployments`, fixture: 'web',
    make: (name) => ({ apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name, labels: { app: name } },
      spec: { replicas: 1, minReadySeconds: 0, selector: { matchLabels: { app: name } },
        strategy: { type: 'RollingUpdate' },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c',
          image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } } }),
  },
  Pod: {
    apiVersion: 'v1', collection: `${CORE}/pods`, fixture: 'pod',
    make: (name) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } },
      spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'busybox:1.36',
        ports: [{ containerPort: 80 }] }] } }),
  },
};


/** Creates the fixtures (as admin); fails loudly if any set-up request is refused. */
export async function seed(h: HostileServer): Promise<void> {
  for (const ns of [NS, VICTIM, 'doomed']) {
    await h.must('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  }
  for (const k of Object.values(KINDS)) {
    await h.must('POST', k.collection, { body: k.make(k.fixture) });
  }
  for (const ns of [VICTIM, 'default', 'kube-system', 'kube-public', 'doomed']) {
    await h.must('POST', `/api/v1/namespaces/${ns}/configmaps`,
      { body: { metadata: { name: 'keep' }, data: { k: 'v' } } });
  }
  await h.must('POST', `/api/v1/namespaces/${VICTIM}/secrets`,
    { body: { metadata: { name: 'keep' }, data: { k: 'dg==' } } });
  await h.must('POST', `/apis/apps/v1/namespaces/${VICTIM}/deployments`,
    { body: KINDS.Deployment.make('keep') });
  await h.must('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, { body: {
    metadata: { name: 'cm-reader' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] } });
  await h.must('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    body: { metadata: { name: 'cm-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User',
        name: CM_READER_USER }] } });
}

/** Throws unless `path` reads back (as admin) with 200, optionally matching `like`. */
export async function expectStored(h: HostileServer, path: string, like?: object): Promise<void> {
  const r = await h.send('GET', path);
  if (r.status !== 200) {
    throw new Error(`after: GET ${path} answered ${r.status}, expected 200 (it must survive)`);
  }
  if (like) expect(r.body, `after: GET ${path}`).toMatchObject(like);
}

/** Throws unless `path` is absent (404). */
export async function expectAbsent(h: HostileServer, path: string): Promise<void> {
  const r = await h.send('GET', path);
  if (r.status !== 404) {
    throw new Error(`after: GET ${path} answered ${r.status}, expected 404 (nothing written)`);
  }
}

/** What a refused delete of namespace `ns` must leave: the namespace, Active, and its contents. */
export function contentsSurvive(ns: string, extra: string[] = []) {
  return async (h: HostileServer): Promise<void> => {
    const n = await h.send('GET', `/api/v1/namespaces/${ns}`);
    const phase = n.body?.status?.phase;
    const deleting = n.body?.metadata?.deletionTimestamp !== undefined;
    if (n.status !== 200 || phase !== 'Active' || deleting) {
      throw new Error(`after: namespace ${ns} answered ${n.status}, phase ${phase}, ` +
        `deletionTimestamp ${deleting ? 'set' : 'unset'}; expected 200, Active, unset`);
    }
    await expectStored(h, `/api/v1/namespaces/${ns}/configmaps/keep`);
    for (const p of extra) await expectStored(h, p);
  };
}
