// Content types a verb does not take and Accept headers the server cannot answer. Upstream
// (handlers/create.go, update.go, patch.go, negotiation): a body in a type the verb does not
// decode is 415 UnsupportedMediaType; an Accept nothing satisfies is 406 NotAcceptable, and the
// output type is negotiated before anything is executed, so a refused create, patch or delete
// writes nothing.

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { CORE, expectAbsent, expectStored, KINDS } from '../fixtures.js';

const CM = `${CORE}/configmaps`;
/** Upstream's messages (negotiation.NewUnsupportedMediaTypeError, NewNotAcceptableError). */
const UNSUPPORTED: Refused = { code: 415, reason: 'UnsupportedMediaType',
  mentions: ['the body of the request was in an unknown format - accepted media types include'] };
const NOT_ACCEPTABLE: Refused = { code: 406, reason: 'NotAcceptable',
  mentions: ['only the following media types are accepted'] };

const CREATE_TYPES = ['text/plain', 'application/json-patch+json', 'application/merge-patch+json',
  'application/strategic-merge-patch+json', 'application/apply-patch+yaml', 'application/xml',
  'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded'];
const UPDATE_TYPES = ['text/plain', 'application/merge-patch+json', 'application/json-patch+json',
  'application/xml'];
const PATCH_TYPES = ['application/json', 'text/plain', 'application/xml', 'application/yaml',
  'application/merge-patch+xml'];

/** Each state-changing case has its own object (`media-<n>`): one wrong write spoils no other. */
let objects = 0;
function own(): { name: string; path: string } {
  const name = `media-${objects++}`;
  return { name, path: `${CM}/${name}` };
}

function unchanged(o: { path: string }) {
  return (h: Parameters<NonNullable<HostileCase['after']>>[0]) =>
    expectStored(h, o.path, { data: { k: 'v' } });
}

const GOT = `${CM}/media-get`;
/** Only the deletecollection cases' object carries this label. */
const DC_SELECTOR = 'hostile-dc%3Dmedia';

const CONTENT: HostileCase[] = [
  ...CREATE_TYPES.map((type, i): HostileCase => ({
    name: `create sent as ${type}`, method: 'POST', path: CM, contentType: type,
    body: KINDS.ConfigMap.make(`ct-${i}`), expect: UNSUPPORTED,
    after: (h) => expectAbsent(h, `${CM}/ct-${i}`) })),
  ...UPDATE_TYPES.map((type): HostileCase => {
    const o = own();
    return { name: `update sent as ${type}`, method: 'PUT', path: o.path, contentType: type,
      body: { ...KINDS.ConfigMap.make(o.name), data: { k: 'changed' } }, expect: UNSUPPORTED,
      after: unchanged(o) };
  }),
  ...PATCH_TYPES.map((type): HostileCase => {
    const o = own();
    return { name: `patch sent as ${type}`, method: 'PATCH', path: o.path, contentType: type,
      body: { data: { k: 'changed' } }, expect: UNSUPPORTED, after: unchanged(o) };
  }),
  { name: 'create sent as application/json; charset=utf-8 (control)', method: 'POST', path: CM,
    contentType: 'application/json; charset=utf-8', body: KINDS.ConfigMap.make('ct-ok'),
    expect: { ok: 201, writes: true } },
  { name: 'create sent as application/yaml (control)', method: 'POST', path: CM,
    contentType: 'application/yaml', body: 'metadata:\n  name: ct-yaml\ndata:\n  k: v\n',
    expect: { ok: 201, writes: true } },
];

const BAD_ACCEPTS = ['application/xml', 'text/html', 'image/png',
  'application/json;as=Foo;g=meta.k8s.io;v=v1', 'application/json;as=Table;g=bogus.io;v=v1',
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v9'];

const ACCEPT: HostileCase[] = [
  ...BAD_ACCEPTS.map((accept): HostileCase => ({
    name: `get with Accept: ${accept}`, method: 'GET', path: GOT,
    headers: { accept }, expect: NOT_ACCEPTABLE })),
  { name: 'list with Accept: application/xml', method: 'GET', path: CM,
    headers: { accept: 'application/xml' }, expect: NOT_ACCEPTABLE },
  { name: 'watch with Accept: application/xml', method: 'GET',
    path: `${CM}?watch=1&timeoutSeconds=1`, headers: { accept: 'application/xml' },
    streaming: true, expect: NOT_ACCEPTABLE },
  { name: 'create with Accept: application/xml', method: 'POST', path: CM,
    headers: { accept: 'application/xml' }, body: KINDS.ConfigMap.make('acc-create'),
    expect: NOT_ACCEPTABLE, after: (h) => expectAbsent(h, `${CM}/acc-create`) },
  ...[own()].map((o): HostileCase => ({ name: 'update with Accept: text/html', method: 'PUT',
    path: o.path, headers: { accept: 'text/html' },
    body: { ...KINDS.ConfigMap.make(o.name), data: { k: 'changed' } }, expect: NOT_ACCEPTABLE,
    after: unchanged(o) })),
  ...[own()].map((o): HostileCase => ({ name: 'merge patch with Accept: application/xml',
    method: 'PATCH', path: o.path, headers: { accept: 'application/xml' },
    contentType: 'application/merge-patch+json', body: { data: { k: 'changed' } },
    expect: NOT_ACCEPTABLE, after: unchanged(o) })),
  ...[own()].map((o): HostileCase => ({ name: 'delete with Accept: application/xml',
    method: 'DELETE', path: o.path, headers: { accept: 'application/xml' },
    expect: NOT_ACCEPTABLE, after: unchanged(o) })),
  { name: 'deletecollection with Accept: application/xml', method: 'DELETE',
    path: `${CM}?labelSelector=${DC_SELECTOR}`, headers: { accept: 'application/xml' },
    expect: NOT_ACCEPTABLE, after: (h) => expectStored(h, `${CM}/media-dc`) },
  ...['*/*', 'application/json, application/xml', 'application/yaml',
    'application/vnd.kubernetes.protobuf',
    'application/json;as=Table;g=meta.k8s.io;v=v1'].map((accept): HostileCase => ({
    name: `get with Accept: ${accept} (control)`, method: 'GET', path: GOT,
    headers: { accept }, expect: { ok: 200, writes: false } })),
];

export const MEDIA_TABLE: HostileTable = {
  fixtures: [
    ...Array.from({ length: objects }, (_x, i) => ({ path: CM,
      body: KINDS.ConfigMap.make(`media-${i}`) })),
    { path: CM, body: KINDS.ConfigMap.make('media-get') },
    { path: CM, body: { ...KINDS.ConfigMap.make('media-dc'),
      metadata: { name: 'media-dc', labels: { 'hostile-dc': 'media' } } } },
  ],
  cases: [...CONTENT, ...ACCEPT],
};
