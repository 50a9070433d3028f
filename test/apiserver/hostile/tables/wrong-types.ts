// Values of the wrong type, per field per kind, sent by every write verb. Upstream decodes the
// body into the Go type first: a create or update answers 400 BadRequest whose message carries
// Go's `json: cannot unmarshal … into Go struct field <Type>.<field path>`; a JSON or merge patch
// decodes the patched document and answers 422 Invalid with one cause on field `patch`
// (handlers/patch.go, jsonPatcher/applyPatchToObject); a strategic merge patch the same unless
// the patch itself does not decode (400). Values that decode but fail validation answer 422
// Invalid naming the field on every verb.

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { patchAt, setPath } from '../cases.js';
import { KINDS, RawJson } from '../fixtures.js';
import type { KindInfo, KindName } from '../fixtures.js';

export interface WrongType<K extends string = KindName> {
  readonly kind: K;
  /** Dotted path; numeric segments index arrays. */
  readonly path: string;
  readonly value: unknown;
  readonly what: string;
  /** Text the create/update message must contain (the field's path). */
  readonly mentions: string;
  /** Decodes, but validation refuses it: 422 naming `invalidField` on every verb. */
  readonly invalidField?: string;
  /** The field strategic merge and apply name instead (they merge list items by key). */
  readonly mergedField?: string;
  /** The patch document itself does not decode as JSON numbers go (1e400): SMP/apply 400. */
  readonly undecodable?: boolean;
}

const NOT_BASE64 = 'not base64!!';

export const WRONG_TYPES: readonly WrongType[] = [
  { kind: 'ConfigMap', path: 'data', value: ['a', 'b'], what: 'data as an array',
    mentions: 'data' },
  { kind: 'ConfigMap', path: 'data', value: 5, what: 'data as a number', mentions: 'data' },
  { kind: 'ConfigMap', path: 'data', value: 'text', what: 'data as a string', mentions: 'data' },
  { kind: 'ConfigMap', path: 'data.k', value: 1, what: 'a data value as a number',
    mentions: 'data' },
  { kind: 'ConfigMap', path: 'data.k', value: { x: 'y' }, what: 'a data value as an object',
    mentions: 'data' },
  { kind: 'ConfigMap', path: 'binaryData.b', value: NOT_BASE64, what: 'non-base64 binaryData',
    mentions: 'base64' },
  { kind: 'ConfigMap', path: 'binaryData', value: [1, 2], what: 'binaryData as an array',
    mentions: 'binaryData' },
  { kind: 'ConfigMap', path: 'immutable', value: 'yes', what: 'immutable as a string',
    mentions: 'immutable' },
  { kind: 'ConfigMap', path: 'metadata.labels', value: { a: 1 }, what: 'a label value as a number',
    mentions: 'metadata.labels' },
  { kind: 'ConfigMap', path: 'metadata.annotations', value: ['x'], what: 'annotations as an array',
    mentions: 'metadata.annotations' },
  { kind: 'Secret', path: 'data.k', value: NOT_BASE64, what: 'non-base64 Secret data',
    mentions: 'base64' },
  { kind: 'Secret', path: 'data', value: ['x'], what: 'Secret data as an array', mentions: 'data' },
  { kind: 'Secret', path: 'stringData', value: { k: 5 }, what: 'a stringData value as a number',
    mentions: 'stringData' },
  { kind: 'Secret', path: 'type', value: 5, what: 'type as a number', mentions: 'type' },
  { kind: 'Deployment', path: 'spec.replicas', value: 1.5, what: 'replicas 1.5',
    mentions: 'spec.replicas' },
  { kind: 'Deployment', path: 'spec.replicas', value: '3', what: 'replicas "3"',
    mentions: 'spec.replicas' },
  { kind: 'Deployment', path: 'spec.replicas', value: 2 ** 31, what: 'replicas 2^31',
    mentions: 'spec.replicas' },
  { kind: 'Deployment', path: 'spec.replicas', value: new RawJson('1e400'),
    what: 'replicas 1e400', mentions: 'spec.replicas', undecodable: true },
  { kind: 'Deployment', path: 'spec.replicas', value: -1, what: 'replicas -1',
    mentions: 'spec.replicas', invalidField: 'spec.replicas' },
  { kind: 'Deployment', path: 'spec.minReadySeconds', value: 'abc', what: 'minReadySeconds "abc"',
    mentions: 'spec.minReadySeconds' },
  { kind: 'Deployment', path: 'spec.template.spec.containers', value: { name: 'c', image: 'x' },
    what: 'containers as an object', mentions: 'spec.template.spec.containers' },
  { kind: 'Deployment', path: 'spec.selector', value: 'app=web', what: 'selector as a string',
    mentions: 'spec.selector' },
  { kind: 'Service', path: 'spec.selector', value: ['app', 'web'], what: 'selector as an array',
    mentions: 'spec.selector' },
  { kind: 'Service', path: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', value: 'abc',
    what: 'timeoutSeconds "abc"', mentions: 'timeoutSeconds' },
  { kind: 'Service', path: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', value: 99999999,
    what: 'timeoutSeconds 99999999', mentions: 'timeoutSeconds',
    invalidField: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds' },
  { kind: 'Service', path: 'spec.ports', value: { port: 80 }, what: 'ports as an object',
    mentions: 'spec.ports' },
  { kind: 'Service', path: 'spec.ports.0.port', value: '80', what: 'a port as a string',
    mentions: 'port' },
  { kind: 'Service', path: 'spec.ports.0.port', value: 70000, what: 'port 70000',
    mentions: 'port', invalidField: 'spec.ports[0].port',
    // Ports merge by `port`: strategic merge and apply add a second port rather than change it.
    mergedField: 'spec.ports[1].port' },
  { kind: 'Pod', path: 'spec.containers', value: { name: 'c', image: 'x' },
    what: 'containers as an object', mentions: 'spec.containers' },
  { kind: 'Pod', path: 'spec.containers.0.image', value: 5, what: 'an image as a number',
    mentions: 'image' },
  { kind: 'Pod', path: 'spec.containers.0.ports.0.containerPort', value: '80',
    what: 'containerPort "80"', mentions: 'containerPort' },
  { kind: 'Pod', path: 'spec.terminationGracePeriodSeconds', value: 'abc',
    what: 'terminationGracePeriodSeconds "abc"', mentions: 'terminationGracePeriodSeconds' },
];

const BAD_REQUEST = (mentions: string): Refused =>
  ({ code: 400, reason: 'BadRequest', mentions: [mentions] });
const PATCH_INVALID: Refused = { code: 422, reason: 'Invalid', field: 'patch' };

/** A JSON-patch path (`/spec/ports/0/port`) for a dotted path. */
function pointer(path: string): string {
  return `/${path.split('.').join('/')}`;
}

/** The apply configuration: identity plus the one field (array paths keep the fixture's list). */
function applyBody(t: WrongType<string>, k: KindInfo, name: string): Record<string, unknown> {
  const base = k.make(name);
  const head = t.path.split('.')[0]!;
  const out: Record<string, any> = { apiVersion: base.apiVersion, kind: base.kind,
    metadata: { name } };
  if (head === 'metadata') return setPath(out, t.path, t.value);
  if (/\.\d+\./.test(t.path)) {
    out[head] = setPath(base, t.path, t.value)[head];
    return out;
  }
  return setPath(out, t.path, t.value);
}

function mergeBody(t: WrongType<string>, k: KindInfo, name: string): Record<string, unknown> {
  if (!/\.\d+\./.test(t.path)) return patchAt(t.path, t.value);
  // A merge patch replaces lists whole: send the fixture's list with the one bad element.
  const listPath = t.path.slice(0, t.path.search(/\.\d+\./));
  const list = listPath.split('.').reduce((o: any, s) => o[s], setPath(k.make(name),
    t.path, t.value));
  return patchAt(listPath, list);
}



/** One case per verb for one wrong value, acting on the object `name`. */
function casesFor(t: WrongType<string>, k: KindInfo, name: string): HostileCase[] {
  const one = `${k.collection}/${name}`;
  const label = `${t.kind} ${t.what}`;
  const invalid: Refused | undefined = t.invalidField ?
    { code: 422, reason: 'Invalid', field: t.invalidField } : undefined;
  const patchRefusal = invalid ?? PATCH_INVALID;
  const merged: Refused | undefined = t.mergedField ?
    { code: 422, reason: 'Invalid', field: t.mergedField } : invalid;
  return [
    { name: `create: ${label}`, method: 'POST', path: k.collection,
      body: setPath(k.make(`${name}-new`), t.path, t.value),
      expect: invalid ?? BAD_REQUEST(t.mentions) },
    { name: `update: ${label}`, method: 'PUT', path: one,
      body: setPath(k.make(name), t.path, t.value),
      expect: invalid ?? BAD_REQUEST(t.mentions) },
    { name: `merge patch: ${label}`, method: 'PATCH', path: one, body: mergeBody(t, k, name),
      contentType: 'application/merge-patch+json', expect: patchRefusal },
    { name: `JSON patch: ${label}`, method: 'PATCH', path: one,
      body: [{ op: 'add', path: pointer(t.path), value: t.value }],
      contentType: 'application/json-patch+json', expect: patchRefusal },
    { name: `strategic merge patch: ${label}`, method: 'PATCH', path: one,
      body: mergeBody(t, k, name),
      contentType: 'application/strategic-merge-patch+json',
      expect: t.undecodable ? BAD_REQUEST(t.mentions) : merged ?? patchRefusal },
    // Upstream's apply answers a type error from the structured-merge-diff converter (a 500
    // there); kdp must answer a 4xx naming the field: 400 or 422.
    { name: `apply: ${label}`, method: 'PATCH',
      path: `${one}?fieldManager=hostile&force=true`, body: applyBody(t, k, name),
      contentType: 'application/apply-patch+yaml',
      expect: merged ?? { code: 422, reason: 'Invalid', mentions: [t.mentions],
        alt: [{ code: 400, reason: 'BadRequest' }] } },
  ];
}

/** Accepted controls: the same verbs with good values write (the revision moves). */
const CONTROLS: HostileCase[] = [
  { name: 'create: a valid ConfigMap (control)', method: 'POST', path: KINDS.ConfigMap.collection,
    body: KINDS.ConfigMap.make('wt-ok'), expect: { ok: 201, writes: true } },
  { name: 'update: a valid Deployment with replicas 2 (control)', method: 'PUT',
    path: `${KINDS.Deployment.collection}/web`,
    body: setPath(KINDS.Deployment.make('web'), 'spec.replicas', 2),
    expect: { ok: 200, writes: true } },
  { name: 'merge patch: replicas 3 (control)', method: 'PATCH',
    path: `${KINDS.Deployment.collection}/web`, body: patchAt('spec.replicas', 3),
    contentType: 'application/merge-patch+json', expect: { ok: 200, writes: true } },
  { name: 'JSON patch: a data value (control)', method: 'PATCH',
    path: `${KINDS.ConfigMap.collection}/cm`, body: [{ op: 'add', path: '/data/n', value: 'x' }],
    contentType: 'application/json-patch+json', expect: { ok: 200, writes: true } },
  { name: 'strategic merge patch: a timeoutSeconds (control)', method: 'PATCH',
    path: `${KINDS.Service.collection}/svc`,
    body: patchAt('spec.sessionAffinityConfig.clientIP.timeoutSeconds', 600),
    contentType: 'application/strategic-merge-patch+json', expect: { ok: 200, writes: true } },
  { name: 'create: a Secret with stringData, stored merged into data (control)', method: 'POST',
    path: KINDS.Secret.collection, body: { metadata: { name: 'wt-string' },
      data: { a: 'YQ==' }, stringData: { b: 'plain' } }, expect: { ok: 201, writes: true },
    after: async (h) => {
      const s = await h.must('GET', `${KINDS.Secret.collection}/wt-string`);
      if (s.stringData !== undefined || s.data?.a !== 'YQ==' || s.data?.b !== 'cGxhaW4=') {
        throw new Error(`after: stored Secret ${JSON.stringify({ data: s.data,
          stringData: s.stringData })}, expected data {a: YQ==, b: cGxhaW4=} and no stringData`);
      }
    } },
  { name: 'apply: a Secret stringData value (control)', method: 'PATCH',
    path: `${KINDS.Secret.collection}/sec?fieldManager=hostile&force=true`,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' },
      stringData: { s: 'plain' } },
    contentType: 'application/apply-patch+yaml', expect: { ok: 200, writes: true } },
];

/**
 * The table for `list`: each wrong value acts on an object of its own (`<prefix>-<n>`, created
 * first), so one wrongly stored value spoils no other case.
 */
export function wrongTypesTable<K extends string>(list: readonly WrongType<K>[],
  kinds: Readonly<Record<K, KindInfo>>, prefix: string,
  controls: readonly HostileCase[] = []): HostileTable {
  return {
    fixtures: list.map((t, i) => ({ path: kinds[t.kind].collection,
      body: kinds[t.kind].make(`${prefix}-${i}`) })),
    cases: [...list.flatMap((t, i) => casesFor(t, kinds[t.kind], `${prefix}-${i}`)), ...controls],
  };
}

export const WRONG_TYPES_TABLE = wrongTypesTable(WRONG_TYPES, KINDS, 'wt', CONTROLS);
