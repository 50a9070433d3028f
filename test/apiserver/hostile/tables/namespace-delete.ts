// Namespace deletes that must be refused before anything is removed: the namespaces upstream's
// NamespaceLifecycle admission never lets go (`default`, `kube-system`, `kube-public`: 403
// "this namespace may not be deleted", also under dryRun), callers without the right (403/401),
// dry runs (200, nothing written), failed preconditions (409), bad options (400/422) and an
// Accept nothing satisfies (406). After each, the namespace is Active and its contents remain
// (each deletable target is a namespace of its own, so one wrongly deleted spoils no other).

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { APPS, contentsSurvive, expectAbsent, expectStored, KINDS } from '../fixtures.js';
import type { HostileServer } from '../harness.js';

const NS_URL = (ns: string) => `/api/v1/namespaces/${ns}`;
/** Each case that targets a deletable namespace has its own (`nsd-<n>`, with contents). */
let victims = 0;
const V = () => NS_URL(`nsd-${victims++}`);
const IMMORTAL: Refused = { code: 403, reason: 'Forbidden',
  mentions: ['this namespace may not be deleted'] };

const survives = (ns: string) => contentsSurvive(ns, [
  `/api/v1/namespaces/${ns}/secrets/keep`, `/apis/apps/v1/namespaces/${ns}/deployments/keep`,
]);

async function defaultSurvives(h: HostileServer): Promise<void> {
  await contentsSurvive('default', ['/api/v1/namespaces/default/services/kubernetes'])(h);
}

const REFUSED: HostileCase[] = [
  { name: 'delete of namespace default', method: 'DELETE', path: NS_URL('default'),
    expect: IMMORTAL, after: defaultSurvives },
  { name: 'delete of namespace default with dryRun=All', method: 'DELETE',
    path: `${NS_URL('default')}?dryRun=All`, expect: IMMORTAL, after: defaultSurvives },
  { name: 'delete of namespace kube-system', method: 'DELETE', path: NS_URL('kube-system'),
    expect: IMMORTAL, after: contentsSurvive('kube-system') },
  { name: 'delete of namespace kube-public', method: 'DELETE', path: NS_URL('kube-public'),
    expect: IMMORTAL, after: contentsSurvive('kube-public') },
  { name: 'nobody deletes a namespace', method: 'DELETE', path: V(), as: 'nobody',
    expect: { code: 403, reason: 'Forbidden',
      mentions: ['cannot delete resource "namespaces"'] } },
  { name: 'anonymous deletes a namespace', method: 'DELETE', path: V(), as: 'anonymous',
    expect: { code: 403, reason: 'Forbidden' } },
  { name: 'a bad token deletes a namespace', method: 'DELETE', path: V(), as: 'badtoken',
    expect: { code: 401, reason: 'Unauthorized' } },
  { name: 'cm-reader deletes a namespace', method: 'DELETE', path: V(), as: 'cm-reader',
    expect: { code: 403, reason: 'Forbidden' } },
  { name: 'delete of a namespace with dryRun=All', method: 'DELETE', path: `${V()}?dryRun=All`,
    expect: { ok: 200, writes: false } },
  { name: 'delete of a namespace with a uid precondition that fails', method: 'DELETE',
    path: V(),
    body: { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } },
    expect: { code: 409, reason: 'Conflict' } },
  { name: 'delete of a namespace with a stale resourceVersion precondition', method: 'DELETE',
    path: V(), body: { preconditions: { resourceVersion: '1' } },
    expect: { code: 409, reason: 'Conflict' } },
  { name: 'delete of a namespace with propagationPolicy=Bogus', method: 'DELETE',
    path: `${V()}?propagationPolicy=Bogus`,
    expect: { code: 422, reason: 'Invalid', field: 'propagationPolicy' } },
  { name: 'delete of a namespace with dryRun=Bogus', method: 'DELETE',
    path: `${V()}?dryRun=Bogus`,
    expect: { code: 422, reason: 'Invalid', field: 'dryRun' } },
  { name: 'delete of a namespace with gracePeriodSeconds=abc', method: 'DELETE',
    path: `${V()}?gracePeriodSeconds=abc`, expect: { code: 400, reason: 'BadRequest' } },
  { name: 'delete of a namespace with a malformed body', method: 'DELETE', path: V(),
    body: '{"preconditions":', expect: { code: 400, reason: 'BadRequest' } },
  { name: 'delete of a namespace with orphanDependents and propagationPolicy', method: 'DELETE',
    path: V(), body: { orphanDependents: true, propagationPolicy: 'Foreground' },
    expect: { code: 422, reason: 'Invalid', field: 'propagationPolicy' } },
  { name: 'delete of a namespace with Accept: application/xml', method: 'DELETE', path: V(),
    headers: { accept: 'application/xml' }, expect: { code: 406, reason: 'NotAcceptable' } },
  { name: 'delete of a namespace that does not exist', method: 'DELETE',
    path: NS_URL('no-such-ns'), expect: { code: 404, reason: 'NotFound' },
    after: (h) => expectAbsent(h, NS_URL('no-such-ns')) },
];

export const NAMESPACE_DELETE_TABLE: HostileTable = {
  fixtures: Array.from({ length: victims }, (_x, i) => `nsd-${i}`).flatMap((ns) => [
    { path: '/api/v1/namespaces', body: { metadata: { name: ns } } },
    { path: `${NS_URL(ns)}/configmaps`, body: { metadata: { name: 'keep' }, data: { k: 'v' } } },
    { path: `${NS_URL(ns)}/secrets`, body: { metadata: { name: 'keep' }, data: { k: 'dg==' } } },
    { path: `/apis/apps/v1/namespaces/${ns}/deployments`, body: KINDS.Deployment.make('keep') },
  ]),
  cases: [
    ...REFUSED.map((c): HostileCase => c.after ? c :
      { ...c, after: survives(c.path.split('?')[0]!.split('/').pop()!) }),
    { name: 'delete of namespace doomed (control)', method: 'DELETE', path: NS_URL('doomed'),
      expect: { ok: 200, writes: true },
      after: async (h) => {
        const r = await h.send('GET', NS_URL('doomed'));
        if (r.status !== 404 && r.body?.status?.phase !== 'Terminating') {
          throw new Error(`namespace doomed after delete: ${r.status} ${r.text.slice(0, 200)}`);
        }
        await expectStored(h, `${APPS}/deployments/web`);
      } },
  ],
};
