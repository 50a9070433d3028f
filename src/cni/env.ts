// CNI_* environment variables, validated in the order and with the messages of the reference's
// skel package (cni.md §1.3, §1.8).

import { CNI_CODES, CniError, goQuoteList } from './spec.js';
import { ifNameProblem } from './if-name.js';

export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'GC' | 'STATUS' | 'VERSION';

export interface CniEnv {
  readonly command: CniCommand;
  readonly containerID: string;
  readonly netns: string;
  readonly ifname: string;
  readonly args: string;
  readonly path: string;
}

const ID_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

const REQUIRED: Record<CniCommand, readonly string[]> = {
  ADD: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  CHECK: ['CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_PATH'],
  DEL: ['CNI_CONTAINERID', 'CNI_IFNAME', 'CNI_PATH'],
  GC: ['CNI_PATH'],
  STATUS: [],
  VERSION: [],
};

export function validateContainerID(id: string): void {
  if (id === '') throw new CniError(CNI_CODES.unknownContainer, 'missing containerID');
  if (!ID_RE.test(id)) throw new CniError(CNI_CODES.invalidEnvironment, 'invalid characters in containerID', id);
}

export function validateIfname(name: string): void {
  const p = ifNameProblem(name);
  if (p) throw new CniError(CNI_CODES.invalidEnvironment, p.msg, p.details);
}

/** Parses the environment. `CNI_COMMAND` empty is the "about" case, handled by the caller. */
export function parseCniEnv(env: Readonly<Record<string, string | undefined>>): CniEnv {
  const get = (k: string) => env[k] ?? '';
  const command = get('CNI_COMMAND');
  const missing: string[] = [];
  if (command === '') missing.push('CNI_COMMAND');
  const known = (REQUIRED as Record<string, readonly string[]>)[command];
  if (command !== '' && !known) {
    throw new CniError(CNI_CODES.invalidEnvironment, `unknown CNI_COMMAND: ${command}`);
  }
  for (const k of known ?? []) {
    const v = get(k);
    if (v === '') {
      missing.push(k);
      continue;
    }
    if (k === 'CNI_CONTAINERID') validateContainerID(v);
    if (k === 'CNI_IFNAME') validateIfname(v);
  }
  if (missing.length > 0) {
    throw new CniError(CNI_CODES.invalidEnvironment, `required env variables [${missing.join(',')}] missing`);
  }
  return {
    command: command as CniCommand,
    containerID: get('CNI_CONTAINERID'),
    netns: get('CNI_NETNS'),
    ifname: get('CNI_IFNAME'),
    args: get('CNI_ARGS'),
    path: get('CNI_PATH'),
  };
}

/** `K1=V1;K2=V2`. Unknown keys are an error unless `IgnoreUnknown=1` (as the bridge plugin). */
export function parseCniArgs(raw: string, known: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (raw === '') return out;
  const pairs = raw.split(';').filter(Boolean);
  const unknown: string[] = [];
  let ignoreUnknown = false;
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i < 0) throw new CniError(CNI_CODES.internal, `ARGS: invalid pair "${p}"`);
    const k = p.slice(0, i);
    const v = p.slice(i + 1);
    if (k === 'IgnoreUnknown') ignoreUnknown = v === '1' || v.toLowerCase() === 'true';
    else if (known.includes(k)) out.set(k, v);
    else unknown.push(p);
  }
  if (unknown.length > 0 && !ignoreUnknown) {
    throw new CniError(CNI_CODES.internal, `ARGS: unknown args ${goQuoteList(unknown)}`);
  }
  return out;
}
