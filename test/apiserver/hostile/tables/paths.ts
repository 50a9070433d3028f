// Names, namespaces and paths: names validation refuses (422 Invalid, metadata.name), path
// segments upstream's key functions refuse ("." and ".." are 400 BadRequest, `Name parameter
// invalid`), traversal through `..` and `%2F` that must never reach another resource or
// namespace, namespaces that do not exist (404 from NamespaceLifecycle), methods a resource does
// not serve (405 MethodNotAllowed) and subresources that do not exist (404 NotFound).

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { APPS, CORE, contentsSurvive, expectStored, KINDS, NS, VICTIM } from '../fixtures.js';

const CM = `${CORE}/configmaps`;
const BAD: Refused = { code: 400, reason: 'BadRequest' };
const NOT_FOUND: Refused = { code: 404, reason: 'NotFound' };
const NOT_ALLOWED: Refused = { code: 405, reason: 'MethodNotAllowed' };
const badName = (field = 'metadata.name'): Refused => ({ code: 422, reason: 'Invalid', field });
/** Any refusal a traversal may meet (as long as it reaches nothing and writes nothing). */
const REFUSED_ANYHOW: Refused = { code: 404, reason: 'NotFound', alt: [
  { code: 400, reason: 'BadRequest' }, { code: 403, reason: 'Forbidden' },
  { code: 405, reason: 'MethodNotAllowed' }, { code: 422, reason: 'Invalid' }] };

/** Namespaces of their own for the cases that, mishandled, delete a namespace. */
const TRAVERSED = ['trav-a', 'trav-b', 'trav-c'];
const inTrav = (i: number) => `/api/v1/namespaces/${TRAVERSED[i]}`;

const BAD_NAMES: Array<[string, string]> = [
  ['upper case and "_"', 'Bad_Name'], ['".."', '..'], ['"."', '.'], ['a "/"', 'a/b'],
  ['a "%"', 'a%b'], ['254 characters', 'a'.repeat(254)], ['a non-ASCII letter', 'ñame'],
  ['an empty label', 'a..b'], ['a leading "-"', '-a'], ['a trailing "-"', 'a-'],
  ['a space', 'a b'], ['a newline', 'a\nb'], ['a right-to-left override', 'a\u202eb'],
];

const NAMES: HostileCase[] = [
  ...BAD_NAMES.map(([what, name]): HostileCase => ({
    name: `create of a ConfigMap named with ${what}`, method: 'POST', path: CM,
    body: { metadata: { name } }, expect: badName() })),
  { name: 'create with neither name nor generateName', method: 'POST', path: CM,
    body: { metadata: {} }, expect: badName() },
  { name: 'create with a 300-character generateName', method: 'POST', path: CM,
    body: { metadata: { generateName: 'g'.repeat(300) } },
    expect: badName('metadata.generateName') },
  { name: 'create with generateName "Bad_"', method: 'POST', path: CM,
    body: { metadata: { generateName: 'Bad_' } }, expect: badName('metadata.generateName') },
  { name: 'create of a Service named "a.b" (a DNS label only)', method: 'POST',
    path: `${CORE}/services`, body: { ...KINDS.Service.make('a.b') }, expect: badName() },
  { name: 'create of a Service with a 64-character name', method: 'POST',
    path: `${CORE}/services`, body: { ...KINDS.Service.make('s'.repeat(64)) }, expect: badName() },
  { name: 'create of a Namespace with a 64-character name', method: 'POST',
    path: '/api/v1/namespaces', body: { metadata: { name: 'n'.repeat(64) } }, expect: badName() },
  { name: 'create of a Namespace named "Hostile2"', method: 'POST', path: '/api/v1/namespaces',
    body: { metadata: { name: 'Hostile2' } }, expect: badName() },
  { name: 'create of a Namespace named "a.b"', method: 'POST', path: '/api/v1/namespaces',
    body: { metadata: { name: 'a.b' } }, expect: badName() },
  { name: 'create of a ConfigMap named "ok.name-1" (control)', method: 'POST', path: CM,
    body: { metadata: { name: 'ok.name-1' } }, expect: { ok: 201, writes: true } },
];

const PATH_SEGMENTS: HostileCase[] = [
  { name: 'get of a ConfigMap named ".."', method: 'GET', path: `${CM}/..`, expect: BAD },
  { name: 'get of a ConfigMap named "%2E%2E"', method: 'GET', path: `${CM}/%2E%2E`, expect: BAD },
  { name: 'get of a ConfigMap named "."', method: 'GET', path: `${CM}/.`, expect: BAD },
  { name: 'update of a ConfigMap named "%2E%2E"', method: 'PUT', path: `${CM}/%2E%2E`,
    body: { metadata: { name: '..' } }, expect: BAD },
  { name: 'get of "a%2Fb" (a subresource b of a)', method: 'GET', path: `${CM}/a%2Fb`,
    expect: NOT_FOUND },
  { name: 'get of a 300-character name', method: 'GET', path: `${CM}/${'x'.repeat(300)}`,
    expect: NOT_FOUND },
  { name: 'get of a non-ASCII name', method: 'GET', path: `${CM}/%C3%B1ame`, expect: NOT_FOUND },
  { name: 'get of a name with a NUL byte', method: 'GET', path: `${CM}/a%00b`,
    expect: { ...NOT_FOUND, alt: [{ code: 400, reason: 'BadRequest' }] } },
  { name: 'cm-reader reads a Secret through configmaps/../secrets', method: 'GET',
    path: `${CM}/../secrets/sec`, as: 'cm-reader', expect: REFUSED_ANYHOW },
  { name: 'cm-reader reads a Secret through %2E%2E%2F', method: 'GET',
    path: `${CM}/%2E%2E%2Fsecrets%2Fsec`, as: 'cm-reader', expect: REFUSED_ANYHOW },
  { name: 'cm-reader lists Secrets through namespaces/hostile/configmaps/../../../secrets',
    method: 'GET', path: `${CM}/../../../secrets`, as: 'cm-reader', expect: REFUSED_ANYHOW },
  { name: 'cm-reader reads ConfigMaps of another namespace through ..', method: 'GET',
    path: `${CM}/../../${VICTIM}/configmaps/keep`, as: 'cm-reader', expect: REFUSED_ANYHOW },
  { name: 'cm-reader reads a ConfigMap (control)', method: 'GET', path: `${CM}/cm`,
    as: 'cm-reader', expect: { ok: 200, writes: false } },
];

const NAMESPACES: HostileCase[] = [
  { name: 'create in a namespace that does not exist', method: 'POST',
    path: '/api/v1/namespaces/no-such-ns/configmaps', body: { metadata: { name: 'x' } },
    expect: { ...NOT_FOUND, mentions: ['no-such-ns'] } },
  { name: 'create in namespace "BAD_NS"', method: 'POST', path: '/api/v1/namespaces/BAD_NS/' +
    'configmaps', body: { metadata: { name: 'x' } }, expect: NOT_FOUND },
  { name: 'create in a non-ASCII namespace', method: 'POST',
    path: '/api/v1/namespaces/%C3%B1s/configmaps', body: { metadata: { name: 'x' } },
    expect: NOT_FOUND },
  { name: 'create in a 254-character namespace', method: 'POST',
    path: `/api/v1/namespaces/${'n'.repeat(254)}/configmaps`, body: { metadata: { name: 'x' } },
    expect: NOT_FOUND },
  { name: 'create in namespace ".."', method: 'POST', path: '/api/v1/namespaces/%2E%2E/configmaps',
    body: { metadata: { name: 'x' } }, expect: REFUSED_ANYHOW },
  { name: 'create of a Deployment in a namespace that does not exist', method: 'POST',
    path: '/apis/apps/v1/namespaces/no-such-ns/deployments',
    body: KINDS.Deployment.make('x'), expect: NOT_FOUND },
];

const METHODS: HostileCase[] = [
  { name: 'update of a collection', method: 'PUT', path: CM, body: { metadata: { name: 'x' } },
    expect: NOT_ALLOWED },
  { name: 'patch of a collection', method: 'PATCH', path: CM, body: { data: {} },
    contentType: 'application/merge-patch+json', expect: NOT_ALLOWED },
  { name: 'create at an object URL', method: 'POST', path: `${CM}/cm`,
    body: KINDS.ConfigMap.make('cm'), expect: NOT_ALLOWED },
  { name: 'create of a pod log', method: 'POST', path: `${CORE}/pods/pod/log`, body: {},
    expect: NOT_ALLOWED },
  { name: 'delete of selfsubjectaccessreviews', method: 'DELETE',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', expect: NOT_ALLOWED },
  { name: 'get of selfsubjectaccessreviews', method: 'GET',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', expect: NOT_ALLOWED },
  { name: 'PROPFIND of a collection', method: 'PROPFIND', path: CM, expect: NOT_ALLOWED },
  { name: 'an unknown method FOO', method: 'FOO', path: CM,
    expect: { ...NOT_ALLOWED, alt: [{ code: 400, reason: 'BadRequest' },
      { code: 501, reason: 'NotImplemented' }] } },
];

const SUBRESOURCES: HostileCase[] = [
  { name: 'update of configmaps/status (none)', method: 'PUT', path: `${CM}/cm/status`,
    body: KINDS.ConfigMap.make('cm'), expect: NOT_FOUND },
  { name: 'get of configmaps/bogus', method: 'GET', path: `${CM}/cm/bogus`, expect: NOT_FOUND },
  { name: 'get of secrets/status (none)', method: 'GET', path: `${CORE}/secrets/sec/status`,
    expect: NOT_FOUND },
  { name: 'get of deployments/bogus', method: 'GET', path: `${APPS}/deployments/web/bogus`,
    expect: NOT_FOUND },
  { name: 'update of services/scale (none)', method: 'PUT', path: `${CORE}/services/svc/scale`,
    body: { spec: { replicas: 2 } }, expect: NOT_FOUND },
  { name: 'get of configmaps/status/extra', method: 'GET', path: `${CM}/cm/status/extra`,
    expect: NOT_FOUND },
  { name: 'get of /api/v2', method: 'GET', path: '/api/v2/namespaces', expect: NOT_FOUND },
  { name: 'get of apps/v9', method: 'GET', path: '/apis/apps/v9/deployments', expect: NOT_FOUND },
  { name: 'get of an unknown group', method: 'GET', path: '/apis/nosuch.io/v1/things',
    expect: NOT_FOUND },
  { name: 'get of an unknown resource', method: 'GET', path: `${APPS}/widgets`,
    expect: NOT_FOUND },
  { name: 'update of deployments/scale with replicas "3"', method: 'PUT',
    path: `${APPS}/deployments/web/scale`, body: { apiVersion: 'autoscaling/v1', kind: 'Scale',
      metadata: { name: 'web', namespace: NS }, spec: { replicas: '3' } },
    expect: { ...BAD, mentions: ['replicas'] } },
  { name: 'update of deployments/scale with replicas -1', method: 'PUT',
    path: `${APPS}/deployments/web/scale`, body: { apiVersion: 'autoscaling/v1', kind: 'Scale',
      metadata: { name: 'web', namespace: NS }, spec: { replicas: -1 } },
    expect: { code: 422, reason: 'Invalid', field: 'spec.replicas' } },
  { name: 'update of deployments/scale naming another object', method: 'PUT',
    path: `${APPS}/deployments/web/scale`, body: { apiVersion: 'autoscaling/v1', kind: 'Scale',
      metadata: { name: 'other', namespace: NS }, spec: { replicas: 2 } }, expect: BAD },
  { name: 'get of deployments/scale (control)', method: 'GET',
    path: `${APPS}/deployments/web/scale`, expect: { ok: 200, writes: false } },
  { name: 'get of /version (control)', method: 'GET', path: '/version',
    expect: { ok: 200, writes: false } },
];

/**
 * Last, because mishandled they delete far more than their target: a `..` that a URL normaliser
 * resolves turns a ConfigMap delete into a namespace delete, or a namespaced deletecollection
 * into a cluster-wide one.
 */
const DESTRUCTIVE: HostileCase[] = [
  { name: 'delete of a ConfigMap named ".."', method: 'DELETE',
    path: `${inTrav(0)}/configmaps/..`, expect: BAD, after: contentsSurvive(TRAVERSED[0]!) },
  { name: 'delete of a ConfigMap named "%2E%2E"', method: 'DELETE',
    path: `${inTrav(1)}/configmaps/%2E%2E`, expect: BAD, after: contentsSurvive(TRAVERSED[1]!) },
  { name: 'delete of a namespace through namespaces/<ns>/configmaps/keep/../..', method: 'DELETE',
    path: `${inTrav(2)}/configmaps/keep/../..`, expect: REFUSED_ANYHOW,
    after: contentsSurvive(TRAVERSED[2]!) },
  { name: 'deletecollection of namespaces (not served upstream)', method: 'DELETE',
    path: '/api/v1/namespaces', expect: NOT_ALLOWED,
    after: async (h) => {
      await contentsSurvive(VICTIM)(h);
      await expectStored(h, `/api/v1/namespaces/${NS}`);
      await expectStored(h, '/api/v1/namespaces/default');
    } },
  { name: 'deletecollection through namespaces/../configmaps', method: 'DELETE',
    path: '/api/v1/namespaces/../configmaps', expect: { tolerated: true },
    after: async (h) => {
      await expectStored(h, `${CM}/cm`);
      await contentsSurvive(VICTIM)(h);
    } },
];

export const PATHS_TABLE: HostileTable = {
  fixtures: TRAVERSED.flatMap((ns) => [
    { path: '/api/v1/namespaces', body: { metadata: { name: ns } } },
    { path: `/api/v1/namespaces/${ns}/configmaps`, body: KINDS.ConfigMap.make('keep') },
  ]),
  cases: [...NAMES, ...PATH_SEGMENTS, ...NAMESPACES, ...METHODS, ...SUBRESOURCES,
    ...DESTRUCTIVE],
};
