// RFC 6902 JSON Patch: add, remove, replace, move, copy, test; `~1` and `~0` escapes; `-`
// appends. A patch that is not a list of operation objects is 400; one that does not apply
// (a missing path, a failed test, an unknown op) is 422 Invalid with upstream's message
// (handlers/patch.go: NewGenericServerResponse(422, ...)), the reason as the cause.

import { isDeepStrictEqual } from 'node:util';
import { isKdpError, kdpError } from '../../errors.js';
import { getOwn, setOwn } from './own.js';
import { deeperThan, MAX_DEPTH } from '../http/depth.js';

type Json = unknown;
interface Op { op: string; path: string; from?: string; value?: Json }

const DEEP = 'exceeded max depth';

function bad(msg: string) {
  return kdpError('KDP_BAD_REQUEST', msg);
}

function parsePointer(p: unknown): string[] {
  if (typeof p !== 'string') throw bad('json patch operation is missing its path');
  if (p === '') return [];
  if (!p.startsWith('/')) throw bad(`invalid JSON pointer "${p}"`);
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isContainer(v: unknown): v is Record<string, Json> | Json[] {
  return !!v && typeof v === 'object';
}

function index(arr: Json[], seg: string, forAdd: boolean): number {
  if (forAdd && seg === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(seg)) throw bad(`invalid array index "${seg}"`);
  const i = Number(seg);
  if (i > arr.length || (!forAdd && i === arr.length)) throw bad(`array index ${i} out of bounds`);
  return i;
}

function parentOf(doc: Json, path: string[], opName: string): { parent: Json; key: string } {
  if (!path.length) throw bad(`${opName}: the root cannot be the target`);
  let cur = doc;
  for (const seg of path.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[index(cur, seg, false)];
    else if (isContainer(cur) && Object.hasOwn(cur, seg)) cur = getOwn(cur, seg);
    else throw bad(`${opName} operation does not apply: doc is missing path: /${path.join('/')}`);
  }
  if (!isContainer(cur)) throw bad(`${opName}: doc is missing path: /${path.join('/')}`);
  return { parent: cur, key: path.at(-1)! };
}

function getAt(doc: Json, path: string[]): Json {
  let cur = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[index(cur, seg, false)];
    else if (isContainer(cur) && Object.hasOwn(cur, seg)) cur = getOwn(cur, seg);
    else throw bad(`doc is missing path: /${path.join('/')}`);
  }
  return cur;
}

function add(doc: Json, path: string[], value: Json): Json {
  // Decoding bounds the patch's depth; an add could still stack its value below a deep path.
  if (deeperThan(value, MAX_DEPTH - path.length)) throw bad(DEEP);
  if (!path.length) return value;
  const { parent, key } = parentOf(doc, path, 'add');
  if (Array.isArray(parent)) parent.splice(index(parent, key, true), 0, value);
  else setOwn(parent as object, key, value);
  return doc;
}

function remove(doc: Json, path: string[], opName = 'remove'): Json {
  const { parent, key } = parentOf(doc, path, opName);
  if (Array.isArray(parent)) parent.splice(index(parent, key, false), 1);
  else if (Object.hasOwn(parent as object, key)) delete (parent as Record<string, Json>)[key];
  else throw bad(`${opName} operation does not apply: doc is missing path: /${path.join('/')}`);
  return doc;
}

/** Upstream's maxJSONPatchOperations (handlers/patch.go): more answer 413. */
const MAX_OPERATIONS = 10_000;

export function applyJsonPatch(doc: Json, patch: unknown): Json {
  if (!Array.isArray(patch)) throw bad('json patch must be an array of operations');
  if (patch.length > MAX_OPERATIONS) {
    throw kdpError('KDP_TOO_LARGE', 'The allowed maximum operations in a JSON patch is ' +
      `${MAX_OPERATIONS}, got ${patch.length}`);
  }
  for (const raw of patch as Op[]) {
    if (!raw || typeof raw !== 'object') throw bad('json patch operation must be an object');
  }
  try {
    return applyOps(structuredClone(doc), patch as Op[]);
  } catch (e) {
    if (!isKdpError(e, 'KDP_BAD_REQUEST') || e.message === DEEP) throw e;
    throw kdpError('KDP_INVALID', 'the server rejected our request due to an error in our ' +
      'request', { causes: [{ field: '', reason: '', message: e.message }] });
  }
}

function applyOps(doc: Json, ops: Op[]): Json {
  let out = doc;
  for (const raw of ops) {
    const path = parsePointer(raw.path);
    switch (raw.op) {
      case 'add': out = add(out, path, structuredClone(raw.value)); break;
      case 'remove': out = remove(out, path); break;
      case 'replace':
        getAt(out, path);
        out = path.length ? add(remove(out, path, 'replace'), path, structuredClone(raw.value)) :
          structuredClone(raw.value);
        break;
      case 'move': {
        const from = parsePointer(raw.from);
        const v = getAt(out, from);
        out = add(remove(out, from, 'move'), path, v);
        break;
      }
      case 'copy': out = add(out, path, structuredClone(getAt(out, parsePointer(raw.from)))); break;
      case 'test':
        if (!isDeepStrictEqual(getAt(out, path), raw.value)) {
          throw bad(`testing value ${raw.path} failed`);
        }
        break;
      default: throw bad(`Unexpected kind: ${String(raw.op)}`);
    }
  }
  return out;
}
