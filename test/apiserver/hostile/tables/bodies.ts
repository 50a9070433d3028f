// Bodies a JSON decoder should refuse or bound: deep nesting, sizes past the limits, text that is
// not one JSON object, YAML alias bombs, and strategic-merge directives upstream does not know.
// Upstream: the decoder's nesting limit (10,000) and every syntax error are 400 BadRequest on
// create, update and every patch type; a body past 3 MiB is 413; a JSON patch of more than 10,000
// operations is 413; a ConfigMap or Secret past 1 MiB and annotations past 256 KiB are 422
// Invalid; a strategic-merge directive the patch cannot use is 400.

import { isAccepted } from '../cases.js';
import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { APPS, CORE, expectAbsent, expectStored, KINDS } from '../fixtures.js';

const CM = `${CORE}/configmaps`;
const BAD: Refused = { code: 400, reason: 'BadRequest' };
const TOO_LARGE: Refused = { code: 413, reason: 'RequestEntityTooLarge' };
const INVALID: Refused = { code: 422, reason: 'Invalid' };
const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** A ConfigMap document whose data value `k` is the raw JSON `value`. */
const cmWith = (name: string, value: string) =>
  `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"k":${value}}}`;

const DEEP: HostileCase[] = [
  { name: 'create nesting 10,000 arrays', method: 'POST', path: CM,
    body: cmWith('deep-1', arrays(10_000)), expect: BAD },
  { name: 'create nesting 100,000 objects', method: 'POST', path: CM,
    body: cmWith('deep-2', objects(100_000)), expect: BAD },
  { name: 'create nesting 1,000,000 arrays', method: 'POST', path: CM,
    body: cmWith('deep-3', arrays(1_000_000)), expect: BAD },
  { name: 'update nesting 10,000 arrays', method: 'PUT', path: `${CM}/body-3`,
    body: cmWith('body-3', arrays(10_000)), expect: BAD },
  { name: 'merge patch nesting 10,000 objects', method: 'PATCH', path: `${CM}/body-4`,
    contentType: MERGE, body: `{"data":{"k":${objects(10_000)}}}`, expect: BAD },
  { name: 'JSON patch value nesting 10,000 arrays', method: 'PATCH', path: `${CM}/body-5`,
    contentType: JSONP, body: `[{"op":"add","path":"/data/k","value":${arrays(10_000)}}]`,
    expect: BAD },
  { name: 'strategic merge patch nesting 10,000 arrays', method: 'PATCH', path: `${CM}/body-6`,
    contentType: SMP, body: `{"data":{"k":${arrays(10_000)}}}`, expect: BAD },
  { name: 'apply nesting 10,000 flow sequences', method: 'PATCH',
    path: `${CM}/body-7?fieldManager=hostile`, contentType: APPLY,
    body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"body-7"},` +
      `"data":{"k":${arrays(10_000)}}}`, expect: BAD },
  // Under both bounds (upstream's 10,000; kdp's 512, see src/apiserver/http/depth.ts): decoded,
  // then refused as a type error naming the field.
  { name: 'create nesting 400 arrays in a label value (a type error)', method: 'POST', path: CM,
    body: `{"metadata":{"name":"deep-4","labels":{"a":${arrays(400)}}}}`,
    expect: { ...BAD, mentions: ['metadata.labels'] } },
  { name: 'create of a Deployment nesting 10,000 objects in its template', method: 'POST',
    path: `${APPS}/deployments`,
    body: `{"metadata":{"name":"deep-5"},"spec":{"template":${objects(10_000)}}}`, expect: BAD },
];

const big = (n: number) => 'x'.repeat(n);
const SIZES: HostileCase[] = [
  { name: 'create of a body over 3 MiB', method: 'POST', path: CM,
    body: { metadata: { name: 'size-1' }, data: { k: big(3 * 1024 * 1024 + 1) } },
    expect: TOO_LARGE },
  { name: 'merge patch of a body over 3 MiB', method: 'PATCH', path: `${CM}/body-12`,
    contentType: MERGE, body: { data: { k: big(3 * 1024 * 1024 + 1) } }, expect: TOO_LARGE },
  { name: 'update of a body over 3 MiB', method: 'PUT', path: `${CM}/body-13`,
    body: { ...KINDS.ConfigMap.make('body-13'), data: { k: big(3 * 1024 * 1024 + 1) } },
    expect: TOO_LARGE },
  { name: 'JSON patch of 10,001 operations', method: 'PATCH', path: `${CM}/body-14`,
    contentType: JSONP,
    body: Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'ConfigMap' })),
    expect: { ...TOO_LARGE, mentions: ['10000'] } },
  { name: 'create of a ConfigMap holding 1.5 MiB', method: 'POST', path: CM,
    body: { metadata: { name: 'size-2' }, data: { k: big(1536 * 1024) } }, expect: INVALID },
  { name: 'create of a Secret holding 1.5 MiB', method: 'POST', path: `${CORE}/secrets`,
    body: { metadata: { name: 'size-3' },
      data: { k: Buffer.alloc(1536 * 1024).toString('base64') } },
    expect: INVALID },
  { name: 'create with 300 KiB of annotations', method: 'POST', path: CM,
    body: { metadata: { name: 'size-4', annotations: { a: big(300 * 1024) } } },
    expect: { ...INVALID, field: 'metadata.annotations' } },
  { name: 'create with a 64-character label value', method: 'POST', path: CM,
    body: { metadata: { name: 'size-5', labels: { a: big(64) } } },
    expect: { ...INVALID, field: 'metadata.labels' } },
  { name: 'merge patch adding a 1.5 MiB data value', method: 'PATCH', path: `${CM}/body-23`,
    contentType: MERGE, body: { data: { big: big(1536 * 1024) } }, expect: INVALID },
];

const NOT_ONE_OBJECT: Array<[string, string]> = [
  ['a truncated document', '{"metadata":{"name":"x"'],
  ['an empty body', ''],
  ['null', 'null'],
  ['a string', '"configmap"'],
  ['a number', '42'],
  ['an array', '[{"metadata":{"name":"x"}}]'],
  ['two documents', '{"metadata":{"name":"x"}} {"metadata":{"name":"y"}}'],
  ['trailing garbage', '{"metadata":{"name":"x"}}garbage'],
  ['NaN', '{"metadata":{"name":"x"},"data":{"k":NaN}}'],
  ['single quotes', "{'metadata':{'name':'x'}}"],
  ['a comment', '{"metadata":{"name":"x"} /* c */}'],
  ['a byte-order mark', '\ufeff{"metadata":{"name":"x"}}'],
  ['a NUL byte outside strings', '{"metadata":\u0000{"name":"x"}}'],
];

const SYNTAX: HostileCase[] = [
  ...NOT_ONE_OBJECT.map(([what, body]): HostileCase => ({
    name: `create of ${what}`, method: 'POST', path: CM, body, expect: BAD })),
  { name: 'merge patch of a truncated document', method: 'PATCH', path: `${CM}/body-24`,
    contentType: MERGE, body: '{"data":', expect: BAD },
  { name: 'JSON patch of a truncated document', method: 'PATCH', path: `${CM}/body-25`,
    contentType: JSONP, body: '[{"op":"add"', expect: BAD },
  { name: 'JSON patch that is an object', method: 'PATCH', path: `${CM}/body-26`,
    contentType: JSONP, body: '{"op":"add","path":"/data/k","value":"x"}', expect: BAD },
  { name: 'strategic merge patch of a truncated document', method: 'PATCH', path: `${CM}/body-27`,
    contentType: SMP, body: '{"data":', expect: BAD },
  { name: 'apply of malformed YAML', method: 'PATCH', path: `${CM}/body-28?fieldManager=hostile`,
    contentType: APPLY, body: 'a: [b', expect: BAD },
  { name: 'create with a NUL in metadata.name', method: 'POST', path: CM,
    body: { metadata: { name: 'a\u0000b' } }, expect: { ...INVALID, field: 'metadata.name' } },
  { name: 'create of a YAML alias bomb', method: 'POST', path: CM,
    contentType: 'application/yaml',
    body: ['a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...'bcdefghi'.split('').map((l, i) => {
        const prev = 'abcdefghi'[i];
        return `${l}: &${l} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},` +
          `*${prev},*${prev}]`;
      }), 'metadata: {name: bomb}', 'data: {k: v}', ''].join('\n'),
    expect: BAD, after: (h) => expectAbsent(h, `${CM}/bomb`) },
  { name: 'create of YAML that is not a mapping', method: 'POST', path: CM,
    contentType: 'application/yaml', body: '- a\n- b\n', expect: BAD },
  { name: 'create of protobuf garbage', method: 'POST', path: CM,
    contentType: 'application/vnd.kubernetes.protobuf', body: Buffer.from([1, 2, 3, 4, 5]),
    expect: BAD },
  { name: 'create of YAML sent as application/json', method: 'POST', path: CM,
    body: 'metadata:\n  name: yaml-as-json\n', expect: BAD },
];

const SMP_DIRECTIVES: HostileCase[] = [
  { name: 'strategic merge patch with $patch: bogus at the root', method: 'PATCH',
    path: `${CM}/body-35`, contentType: SMP, body: { $patch: 'bogus' }, expect: BAD },
  { name: 'strategic merge patch with $patch: bogus in labels', method: 'PATCH',
    path: `${CM}/body-36`, contentType: SMP,
    body: { metadata: { labels: { $patch: 'bogus' } } }, expect: BAD },
  { name: 'strategic merge patch with $patch: bogus in a container', method: 'PATCH',
    path: `${APPS}/deployments/body-dep-a`, contentType: SMP,
    body: { spec: { template: { spec: { containers: [{ name: 'c', $patch: 'bogus' }] } } } },
    expect: BAD },
  { name: 'strategic merge patch with $retainKeys that is not a list', method: 'PATCH',
    path: `${CM}/body-39`, contentType: SMP, body: { metadata: { $retainKeys: 5 } },
    expect: BAD },
  { name: 'strategic merge patch with $setElementOrder that is not a list', method: 'PATCH',
    path: `${APPS}/deployments/body-dep-b`, contentType: SMP,
    body: { spec: { template: { spec: { '$setElementOrder/containers': 5 } } } }, expect: BAD },
  { name: 'strategic merge patch with $deleteFromPrimitiveList that is not a list',
    method: 'PATCH', path: `${CM}/body-41`, contentType: SMP,
    body: { metadata: { '$deleteFromPrimitiveList/finalizers': 'x' } }, expect: BAD },
  { name: 'strategic merge patch of a label (control)', method: 'PATCH', path: `${CM}/body-42`,
    contentType: SMP, body: { metadata: { labels: { smp: 'ok' } } },
    expect: { ok: 200, writes: true } },
];

/** The cases that update or patch each act on their own object, `body-<case number>`. */
const TARGETS = [3, 4, 5, 6, 7, 12, 13, 14, 23, 24, 25, 26, 27, 28, 35, 36, 39, 41, 42];

export const BODIES_TABLE: HostileTable = {
  fixtures: [
    ...TARGETS.map((i) => ({ path: CM, body: KINDS.ConfigMap.make(`body-${i}`) })),
    ...['a', 'b'].map((x) => ({ path: `${APPS}/deployments`,
      body: KINDS.Deployment.make(`body-dep-${x}`) })),
  ],
  cases: [...DEEP, ...SIZES, ...SYNTAX, ...SMP_DIRECTIVES].map((c) => c.method === 'POST' ||
    c.after || c.path.includes('/deployments/') ? c : { ...c, after: (h) =>
      expectStored(h, c.path.split('?')[0]!, isAccepted(c.expect) ? {} : { data: { k: 'v' } }) }),
};
