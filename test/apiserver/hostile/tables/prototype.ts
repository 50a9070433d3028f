// Prototype-pollution paths and keys: `__proto__`, `constructor`, `prototype` as JSON-patch path
// segments, as keys of merge/strategic/apply patches, of created bodies and of selectors. The
// runner checks after every case that Object.prototype in this process (the server's) gained
// nothing. Upstream: a JSON-patch path through a member that does not exist is 422 (json-patch
// "doc is missing path"); a `__proto__` label/annotation key fails validation (422); an unknown
// top-level field is dropped (200, nothing written), and `__proto__` is a valid ConfigMap key.
// kdp may refuse those last ones outright (400), as issue 17 asks: both are tolerated.

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { CORE, expectStored, KINDS } from '../fixtures.js';

const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

/** Upstream's missing-path 422; a segment refused up front (400) is as good. */
const MISSING: Refused = { code: 422, reason: 'Invalid',
  alt: [{ code: 400, reason: 'BadRequest' }] };
const BAD_KEY = (field: string): Refused => ({ code: 422, reason: 'Invalid', field,
  alt: [{ code: 400, reason: 'BadRequest' }] });

interface ProtoCase {
  readonly name: string;
  readonly contentType: string;
  readonly query?: string;
  /** A string is sent as is (JSON.stringify would drop a `__proto__` key). */
  readonly body: (name: string) => unknown;
  readonly expect: HostileCase['expect'];
}

const op = (o: Record<string, unknown>) => () => [o];

const PATCHES: readonly ProtoCase[] = [
  { name: 'JSON patch add /__proto__/polluted', contentType: JSONP,
    body: op({ op: 'add', path: '/__proto__/polluted', value: 'yes' }), expect: MISSING },
  { name: 'JSON patch add /metadata/__proto__/polluted', contentType: JSONP,
    body: op({ op: 'add', path: '/metadata/__proto__/polluted', value: 'yes' }), expect: MISSING },
  { name: 'JSON patch add /constructor/prototype/polluted', contentType: JSONP,
    body: op({ op: 'add', path: '/constructor/prototype/polluted', value: 'yes' }),
    expect: MISSING },
  { name: 'JSON patch add /data/constructor/prototype/polluted', contentType: JSONP,
    body: op({ op: 'add', path: '/data/constructor/prototype/polluted', value: 'yes' }),
    expect: MISSING },
  { name: 'JSON patch add /data/__proto__/polluted', contentType: JSONP,
    body: op({ op: 'add', path: '/data/__proto__/polluted', value: 'yes' }), expect: MISSING },
  { name: 'JSON patch replace /__proto__', contentType: JSONP,
    body: op({ op: 'replace', path: '/__proto__', value: { polluted: 'yes' } }), expect: MISSING },
  { name: 'JSON patch copy /data/k to /__proto__/polluted', contentType: JSONP,
    body: op({ op: 'copy', from: '/data/k', path: '/__proto__/polluted' }), expect: MISSING },
  { name: 'JSON patch move from /__proto__', contentType: JSONP,
    body: op({ op: 'move', from: '/__proto__', path: '/data/x' }), expect: MISSING },
  { name: 'JSON patch test /__proto__/hasOwnProperty', contentType: JSONP,
    body: op({ op: 'test', path: '/__proto__/hasOwnProperty', value: 'x' }), expect: MISSING },
  { name: 'JSON patch remove /data/__proto__', contentType: JSONP,
    body: op({ op: 'remove', path: '/data/__proto__' }), expect: MISSING },
  { name: 'JSON patch add label key __proto__', contentType: JSONP,
    body: op({ op: 'add', path: '/metadata/labels/__proto__', value: 'x' }),
    expect: BAD_KEY('metadata.labels') },
  { name: 'JSON patch add label key constructor (a valid key upstream)', contentType: JSONP,
    body: op({ op: 'add', path: '/metadata/labels/constructor', value: 'x' }),
    expect: { tolerated: true, mayWrite: true } },
  { name: 'JSON patch add data key __proto__', contentType: JSONP,
    body: op({ op: 'add', path: '/data/__proto__', value: 'x' }),
    expect: { tolerated: true, mayWrite: true } },
  { name: 'merge patch {"__proto__":{"polluted":"yes"}}', contentType: MERGE,
    body: () => '{"__proto__":{"polluted":"yes"}}', expect: { tolerated: true } },
  { name: 'merge patch metadata.__proto__', contentType: MERGE,
    body: () => '{"metadata":{"__proto__":{"polluted":"yes"}}}', expect: { tolerated: true } },
  { name: 'merge patch {"constructor":{"prototype":{"polluted":"yes"}}}', contentType: MERGE,
    body: () => '{"constructor":{"prototype":{"polluted":"yes"}}}', expect: { tolerated: true } },
  { name: 'merge patch data.__proto__ as an object', contentType: MERGE,
    body: () => '{"data":{"__proto__":{"polluted":"yes"}}}',
    expect: { code: 422, reason: 'Invalid', field: 'patch',
      alt: [{ code: 400, reason: 'BadRequest' }] } },
  { name: 'merge patch label key __proto__', contentType: MERGE,
    body: () => '{"metadata":{"labels":{"__proto__":"x"}}}', expect: BAD_KEY('metadata.labels') },
  { name: 'strategic merge patch {"__proto__":{"polluted":"yes"}}', contentType: SMP,
    body: () => '{"__proto__":{"polluted":"yes"}}', expect: { tolerated: true } },
  { name: 'strategic merge patch $patch on __proto__', contentType: SMP,
    body: () => '{"__proto__":{"$patch":"replace","polluted":"yes"}}',
    expect: { tolerated: true } },
  { name: 'strategic merge patch $setElementOrder/__proto__', contentType: SMP,
    body: () => '{"$setElementOrder/__proto__":[{"polluted":"yes"}]}',
    expect: { tolerated: true } },
  { name: 'apply with a top-level __proto__', contentType: APPLY, query: '?fieldManager=hostile',
    body: (n) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${n}"},` +
      '"__proto__":{"polluted":"yes"}}', expect: { tolerated: true } },
  { name: 'apply with YAML key __proto__ under data', contentType: APPLY,
    query: '?fieldManager=hostile',
    body: (n) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\n` +
      'data:\n  __proto__:\n    polluted: "yes"\n',
    expect: { code: 422, reason: 'Invalid', alt: [{ code: 400, reason: 'BadRequest' }] } },
  { name: 'JSON patch add /data/n (control)', contentType: JSONP,
    body: op({ op: 'add', path: '/data/n', value: 'x' }), expect: { ok: 200, writes: true } },
];

const CREATES: HostileCase[] = [
  { name: 'create with a top-level __proto__ key', method: 'POST', path: `${CORE}/configmaps`,
    body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pp-top"},' +
      '"__proto__":{"polluted":"yes"}}', expect: { tolerated: true, mayWrite: true } },
  { name: 'create with metadata.__proto__', method: 'POST', path: `${CORE}/configmaps`,
    body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pp-meta",' +
      '"__proto__":{"polluted":"yes"}}}', expect: { tolerated: true, mayWrite: true } },
  { name: 'create with a label key __proto__', method: 'POST', path: `${CORE}/configmaps`,
    body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pp-label",' +
      '"labels":{"__proto__":"x"}}}', expect: BAD_KEY('metadata.labels') },
  { name: 'create with data keys __proto__ and constructor', method: 'POST',
    path: `${CORE}/configmaps`,
    body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pp-data"},' +
      '"data":{"__proto__":"x","constructor":"y"}}', expect: { tolerated: true, mayWrite: true } },
  { name: 'create of a Pod with env name __proto__ as an object', method: 'POST',
    path: `${CORE}/pods`, body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pp-pod"},' +
      '"spec":{"containers":[{"name":"c","image":"x","__proto__":{"polluted":"yes"}}]}}',
    expect: { tolerated: true, mayWrite: true } },
  { name: 'list with labelSelector __proto__=x', method: 'GET',
    path: `${CORE}/configmaps?labelSelector=__proto__%3Dx`,
    expect: { code: 400, reason: 'BadRequest' } },
  { name: 'list with fieldSelector __proto__.polluted=x', method: 'GET',
    path: `${CORE}/configmaps?fieldSelector=__proto__.polluted%3Dx`,
    expect: { code: 400, reason: 'BadRequest' } },
  { name: 'list with query keys __proto__ and constructor (ignored)', method: 'GET',
    path: `${CORE}/configmaps?__proto__%5Bpolluted%5D=yes&constructor.prototype.polluted=yes`,
    expect: { ok: 200, writes: false } },
];

export const PROTOTYPE_TABLE: HostileTable = {
  fixtures: PATCHES.map((_c, i) => ({ path: KINDS.ConfigMap.collection,
    body: KINDS.ConfigMap.make(`pp-${i}`) })),
  cases: [
    ...PATCHES.map((c, i): HostileCase => {
      const path = `${KINDS.ConfigMap.collection}/pp-${i}`;
      return { name: c.name, method: 'PATCH', path: `${path}${c.query ?? ''}`,
        contentType: c.contentType, body: c.body(`pp-${i}`), expect: c.expect,
        after: (h) => expectStored(h, path, { kind: 'ConfigMap', data: { k: 'v' } }) };
    }),
    ...CREATES,
  ],
};
