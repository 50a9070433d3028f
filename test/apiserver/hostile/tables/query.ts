// Query parameters upstream refuses (and booleans it never refuses): integers that do not
// parse, resourceVersions that are not revisions, resourceVersionMatch values ListOptions
// validation does not allow, continue tokens that do not decode, label and
// field selectors that do not parse, and watch options. Upstream (handlers/get.go ListResource):
// a parameter that does not decode is 400 BadRequest; ListOptions that decode but break the rules
// are 422 Invalid (`ListOptions`, causes naming the parameter); a selector that does not parse or
// names an unsupported field is 400; an exact list at a compacted revision is 410 Expired.

import type { HostileCase, HostileTable, Refused } from '../cases.js';
import { CORE } from '../fixtures.js';

const CM = `${CORE}/configmaps`;
const BAD: Refused = { code: 400, reason: 'BadRequest' };
const invalidOption = (field: string): Refused => ({ code: 422, reason: 'Invalid', field });
const LIST = { ok: 200, writes: false, kind: 'ConfigMapList' } as const;
const WATCHING = { ok: 200, writes: false } as const;

const list = (name: string, query: string, expect: HostileCase['expect']): HostileCase =>
  ({ name: `list with ${name}`, method: 'GET', path: `${CM}?${query}`, expect });
const watch = (name: string, query: string, expect: HostileCase['expect']): HostileCase =>
  ({ name: `watch with ${name}`, method: 'GET', path: `${CM}?watch=1&${query}`, expect,
    streaming: true });

/**
 * Upstream reads a boolean parameter with apimachinery's Convert_Slice_string_To_bool, not
 * strconv.ParseBool: absent, "0" and any case of "false" are false, every other value (even ""
 * or "yes") is true, and none is refused. So each of these is a list or a watch, never a 400.
 */
const BOOLEANS: HostileCase[] = [
  ...['yes', '2', 'tRuE', '', 'f', 'True', 'T', '1'].map((v): HostileCase => ({
    name: `watch=${v} (true upstream: a watch)`, method: 'GET',
    path: `${CM}?watch=${v}&timeoutSeconds=1`, streaming: true, expect: WATCHING })),
  ...['FALSE', 'False', '0'].map((v) => list(`watch=${v} (false: a list)`, `watch=${v}`, LIST)),
  list('allowWatchBookmarks=maybe (true, ignored by a list)', 'allowWatchBookmarks=maybe', LIST),
];

const INTEGERS: HostileCase[] = [
  list('limit=abc', 'limit=abc', BAD),
  list('limit=1.5', 'limit=1.5', BAD),
  list('limit=99999999999999999999', 'limit=99999999999999999999', BAD),
  list('timeoutSeconds=abc', 'timeoutSeconds=abc', BAD),
  list('limit=2 (control)', 'limit=2', LIST),
];

/** The revision before a write that is then compacted away (set by the first case). */
let compacted = 0;

const VERSIONS: HostileCase[] = [
  list('resourceVersion=abc', 'resourceVersion=abc', BAD),
  list('resourceVersion=-1', 'resourceVersion=-1', BAD),
  list('resourceVersion=1.5', 'resourceVersion=1.5', BAD),
  { name: 'get with resourceVersion=abc', method: 'GET', path: `${CM}/cm?resourceVersion=abc`,
    expect: BAD },
  list('resourceVersionMatch=Garbage', 'resourceVersion=0&resourceVersionMatch=Garbage',
    invalidOption('resourceVersionMatch')),
  list('resourceVersionMatch=Exact without a resourceVersion', 'resourceVersionMatch=Exact',
    invalidOption('resourceVersionMatch')),
  list('resourceVersionMatch=Exact at resourceVersion 0', 'resourceVersion=0&' +
    'resourceVersionMatch=Exact', invalidOption('resourceVersionMatch')),
  list('sendInitialEvents=true (watch only)', 'sendInitialEvents=true',
    invalidOption('sendInitialEvents')),
  list('a resourceVersion far in the future', 'resourceVersion=999999999&' +
    'resourceVersionMatch=NotOlderThan', { code: 504, reason: 'Timeout' }),
  list('continue=garbage', 'limit=1&continue=garbage', BAD),
  list('continue that is base64 of garbage', 'limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ',
    BAD),
  { name: 'list exact at a compacted revision', method: 'GET', path: CM,
    prepare: async (h) => {
      compacted = await h.revision();
      await h.must('POST', CM, { body: { metadata: { name: 'q-compact' } } });
      await h.server.store.compact(await h.revision());
      return { path: `${CM}?resourceVersion=${compacted}&resourceVersionMatch=Exact` };
    }, expect: { code: 410, reason: 'Expired' } },
  { name: 'list not older than a compacted revision (served current)', method: 'GET', path: CM,
    prepare: async () => ({ path: `${CM}?resourceVersion=${compacted}&` +
      'resourceVersionMatch=NotOlderThan' }), expect: LIST },
];

const SELECTORS: Array<[string, string]> = [
  ['an unclosed set', 'labelSelector=a%20in%20('],
  ['a set with no close', 'labelSelector=a%20in%20(b'],
  ['"!!"', 'labelSelector=!!'],
  ['two values', 'labelSelector=a%3Db%20c'],
  ['a 64-character key', `labelSelector=${'k'.repeat(64)}%3Dv`],
  ['a value with "$"', 'labelSelector=a%3Db%24'],
  ['notin without a set', 'labelSelector=a%20notin'],
  ['a==b==c', 'labelSelector=a%3D%3Db%3D%3Dc'],
  ['a key with two slashes', 'labelSelector=x%2Fy%2Fz%3D1'],
  ['a key with an empty prefix', 'labelSelector=%2Fa%3D1'],
  ['an unsupported field', 'fieldSelector=data.k%3Dv'],
  ['a field with no operator', 'fieldSelector=metadata.name'],
  ['a field operator ~=', 'fieldSelector=metadata.name~%3Dx'],
  ['a field value ending in a backslash', 'fieldSelector=metadata.name%3Da%5C'],
];

const SELECTOR_CASES: HostileCase[] = [
  ...SELECTORS.map(([what, q]) => list(`a selector with ${what}`, q, BAD)),
  { name: 'list pods with an unsupported field', method: 'GET',
    path: `${CORE}/pods?fieldSelector=spec.bogus%3Dx`, expect: BAD },
  list('a label selector a=b,!missing (control)', 'labelSelector=a%3Db%2C!missing', LIST),
  { name: 'list pods by spec.nodeName and status.phase (control)', method: 'GET',
    path: `${CORE}/pods?fieldSelector=spec.nodeName%3Dn1%2Cstatus.phase!%3DRunning`,
    expect: { ok: 200, writes: false, kind: 'PodList' } },
];

const WATCHES: HostileCase[] = [
  watch('resourceVersion=abc', 'resourceVersion=abc', BAD),
  watch('timeoutSeconds=abc', 'timeoutSeconds=abc', BAD),
  watch('timeoutSeconds=1.5', 'timeoutSeconds=1.5', BAD),
  watch('labelSelector=!!', 'labelSelector=!!', BAD),
  watch('an unsupported fieldSelector', 'fieldSelector=data.k%3Dv', BAD),
  watch('resourceVersionMatch=Exact', 'resourceVersion=1&resourceVersionMatch=Exact',
    invalidOption('resourceVersionMatch')),
  watch('sendInitialEvents=true and no resourceVersionMatch', 'sendInitialEvents=true',
    invalidOption('resourceVersionMatch')),
  watch('sendInitialEvents=maybe (true) and no resourceVersionMatch', 'sendInitialEvents=maybe',
    invalidOption('resourceVersionMatch')),
  { name: 'watch of one object with a fieldSelector naming another', method: 'GET',
    path: '/api/v1/watch/namespaces/hostile/configmaps/cm?fieldSelector=metadata.name%3Dother',
    streaming: true, expect: { ...BAD, mentions: ['metadata.name'] } },
  { name: 'watch of a resource that cannot be watched', method: 'GET',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?watch=1', streaming: true,
    expect: { code: 405, reason: 'MethodNotAllowed' } },
  watch('allowWatchBookmarks=true (control)', 'allowWatchBookmarks=true&timeoutSeconds=1',
    WATCHING),
];

export const QUERY_TABLE: HostileTable = {
  cases: [...BOOLEANS, ...INTEGERS, ...VERSIONS, ...SELECTOR_CASES, ...WATCHES],
};
