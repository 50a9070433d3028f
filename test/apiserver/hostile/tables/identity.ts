// Requests that try to change what an object is: its kind, apiVersion, name, namespace or uid,
// by update and by every patch type. Upstream (handlers/patch.go, rest.go checkName, registry
// BeforeUpdate): a patched kind/apiVersion no longer decodes (422 Invalid, cause `patch`); a
// name or namespace that differs from the URL is 400 BadRequest; a patched uid fails
// ValidateObjectMetaUpdate (422, metadata.uid); a PUT with a different uid fails its implied
// uid precondition (409 Conflict). Each case acts on its own object, so one wrongly stored
// change spoils no other case.

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { expectStored, KINDS, CORE } from '../fixtures.js';
import type { KindName } from '../fixtures.js';

const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

const PATCH_INVALID: Refused = { code: 422, reason: 'Invalid', field: 'patch' };
const NAME_MISMATCH: Refused = { code: 400, reason: 'BadRequest', mentions: ['name'] };
const NS_MISMATCH: Refused = { code: 400, reason: 'BadRequest', mentions: ['namespace'] };
const UID_IMMUTABLE: Refused = { code: 422, reason: 'Invalid', field: 'metadata.uid' };

interface IdentityCase {
  readonly kind: KindName;
  readonly name: string;
  readonly method: 'PUT' | 'PATCH';
  readonly contentType?: string;
  readonly query?: string;
  /** The body, given the target object as the fixture makes it. */
  readonly body: (obj: Record<string, any>) => unknown;
  readonly expect: Refused | { ok: number; writes: boolean };
}

const with_ = (o: Record<string, any>, patch: Record<string, any>) =>
  ({ ...o, ...patch, metadata: { ...o.metadata, ...(patch.metadata ?? {}) } });

const IDENTITY: readonly IdentityCase[] = [
  { kind: 'Pod', name: 'merge patch kind "Foo" on a Pod', method: 'PATCH', contentType: MERGE,
    body: () => ({ kind: 'Foo' }), expect: PATCH_INVALID },
  { kind: 'Pod', name: 'merge patch kind "ConfigMap" on a Pod', method: 'PATCH',
    contentType: MERGE, body: () => ({ kind: 'ConfigMap' }), expect: PATCH_INVALID },
  { kind: 'ConfigMap', name: 'merge patch apiVersion "v9" on a ConfigMap', method: 'PATCH',
    contentType: MERGE, body: () => ({ apiVersion: 'v9' }), expect: PATCH_INVALID },
  { kind: 'Deployment', name: 'merge patch apiVersion "apps/v1beta9" on a Deployment',
    method: 'PATCH', contentType: MERGE, body: () => ({ apiVersion: 'apps/v1beta9' }),
    expect: PATCH_INVALID },
  { kind: 'ConfigMap', name: 'JSON patch replace /kind with "Secret"', method: 'PATCH',
    contentType: JSONP, body: () => [{ op: 'replace', path: '/kind', value: 'Secret' }],
    expect: PATCH_INVALID },
  { kind: 'Service', name: 'JSON patch replace /apiVersion with "v2"', method: 'PATCH',
    contentType: JSONP, body: () => [{ op: 'replace', path: '/apiVersion', value: 'v2' }],
    expect: PATCH_INVALID },
  { kind: 'ConfigMap', name: 'merge patch metadata.name', method: 'PATCH', contentType: MERGE,
    body: () => ({ metadata: { name: 'renamed' } }), expect: NAME_MISMATCH },
  { kind: 'Pod', name: 'merge patch metadata.name on a Pod', method: 'PATCH', contentType: MERGE,
    body: () => ({ metadata: { name: 'renamed' } }), expect: NAME_MISMATCH },
  { kind: 'ConfigMap', name: 'JSON patch replace /metadata/name', method: 'PATCH',
    contentType: JSONP, body: () => [{ op: 'replace', path: '/metadata/name', value: 'renamed' }],
    expect: NAME_MISMATCH },
  { kind: 'ConfigMap', name: 'JSON patch remove /metadata/name', method: 'PATCH',
    contentType: JSONP, body: () => [{ op: 'remove', path: '/metadata/name' }],
    expect: NAME_MISMATCH },
  { kind: 'Deployment', name: 'strategic merge patch metadata.name', method: 'PATCH',
    contentType: SMP, body: () => ({ metadata: { name: 'renamed' } }), expect: NAME_MISMATCH },
  { kind: 'Secret', name: 'apply with another metadata.name', method: 'PATCH',
    contentType: APPLY, query: '?fieldManager=hostile',
    body: () => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'renamed' } }),
    expect: NAME_MISMATCH },
  { kind: 'ConfigMap', name: 'merge patch metadata.namespace', method: 'PATCH', contentType: MERGE,
    body: () => ({ metadata: { namespace: 'victim' } }), expect: NS_MISMATCH },
  { kind: 'Service', name: 'JSON patch replace /metadata/namespace', method: 'PATCH',
    contentType: JSONP,
    body: () => [{ op: 'replace', path: '/metadata/namespace', value: 'victim' }],
    expect: NS_MISMATCH },
  { kind: 'Deployment', name: 'strategic merge patch metadata.namespace', method: 'PATCH',
    contentType: SMP, body: () => ({ metadata: { namespace: 'victim' } }), expect: NS_MISMATCH },
  { kind: 'ConfigMap', name: 'merge patch metadata.uid', method: 'PATCH', contentType: MERGE,
    body: () => ({ metadata: { uid: '00000000-0000-0000-0000-000000000000' } }),
    expect: UID_IMMUTABLE },
  { kind: 'Pod', name: 'JSON patch replace /metadata/uid', method: 'PATCH', contentType: JSONP,
    body: () => [{ op: 'replace', path: '/metadata/uid', value: 'forged' }],
    expect: UID_IMMUTABLE },
  { kind: 'Secret', name: 'strategic merge patch metadata.uid', method: 'PATCH', contentType: SMP,
    body: () => ({ metadata: { uid: 'forged' } }), expect: UID_IMMUTABLE },
  { kind: 'ConfigMap', name: 'apply with apiVersion "v9"', method: 'PATCH', contentType: APPLY,
    query: '?fieldManager=hostile',
    body: (o) => ({ apiVersion: 'v9', kind: 'ConfigMap', metadata: { name: o.metadata.name } }),
    expect: { code: 400, reason: 'BadRequest', mentions: ['v9'] } },
  { kind: 'ConfigMap', name: 'update with kind "Foo"', method: 'PUT',
    body: (o) => with_(o, { kind: 'Foo' }), expect: { code: 400, reason: 'BadRequest' } },
  { kind: 'ConfigMap', name: 'update with apiVersion "v9"', method: 'PUT',
    body: (o) => with_(o, { apiVersion: 'v9' }), expect: { code: 400, reason: 'BadRequest' } },
  { kind: 'ConfigMap', name: 'update with another metadata.name', method: 'PUT',
    body: (o) => with_(o, { metadata: { name: 'renamed' } }), expect: NAME_MISMATCH },
  { kind: 'Deployment', name: 'update with another metadata.namespace', method: 'PUT',
    body: (o) => with_(o, { metadata: { namespace: 'victim' } }), expect: NS_MISMATCH },
  { kind: 'ConfigMap', name: 'update with a forged metadata.uid', method: 'PUT',
    body: (o) => with_(o, { metadata: { uid: '00000000-0000-0000-0000-000000000000' } }),
    expect: { code: 409, reason: 'Conflict' } },
  { kind: 'ConfigMap', name: 'merge patch of a label (control)', method: 'PATCH',
    contentType: MERGE, body: () => ({ metadata: { labels: { changed: 'yes' } } }),
    expect: { ok: 200, writes: true } },
];

function target(c: IdentityCase, i: number) {
  const k = KINDS[c.kind];
  const obj = k.make(`id-${i}`);
  return { collection: k.collection, obj, path: `${k.collection}/id-${i}` };
}

/** Creates that lie about what they create. */
const CREATES: HostileCase[] = [
  { name: 'create of a Secret body at the ConfigMap URL', method: 'POST',
    path: `${CORE}/configmaps`, body: { ...KINDS.Secret.make('id-kind') },
    expect: { code: 400, reason: 'BadRequest' } },
  { name: 'create of an apps/v1 body at a core URL', method: 'POST',
    path: `${CORE}/configmaps`,
    body: { ...KINDS.ConfigMap.make('id-group'), apiVersion: 'apps/v1' },
    expect: { code: 400, reason: 'BadRequest' } },
  { name: 'create with metadata.namespace other than the URL', method: 'POST',
    path: `${CORE}/configmaps`,
    body: { ...KINDS.ConfigMap.make('id-ns'), metadata: { name: 'id-ns', namespace: 'victim' } },
    expect: NS_MISMATCH },
  { name: 'create with kind "Foo"', method: 'POST', path: `${CORE}/configmaps`,
    body: { ...KINDS.ConfigMap.make('id-foo'), kind: 'Foo' },
    expect: { code: 400, reason: 'BadRequest' } },
];

export const IDENTITY_TABLE: HostileTable = {
  fixtures: IDENTITY.map((c, i) => ({ path: target(c, i).collection, body: target(c, i).obj })),
  cases: [
    ...IDENTITY.map((c, i): HostileCase => {
      const t = target(c, i);
      const keep = { apiVersion: t.obj.apiVersion, kind: t.obj.kind,
        metadata: { name: t.obj.metadata.name, namespace: 'hostile' } };
      return {
        name: c.name, method: c.method, path: `${t.path}${c.query ?? ''}`,
        contentType: c.contentType, body: c.body(t.obj), expect: c.expect,
        // Whatever was answered, the object is still itself at its own URL.
        after: (h) => expectStored(h, t.path, keep),
      };
    }),
    ...CREATES,
  ],
};
