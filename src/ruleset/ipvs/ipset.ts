// `ipset save` text, which is also `ipset restore` input:
//   create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
//   add KUBE-CLUSTER-IP 10.96.0.1,tcp:443
//   create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
//   add KUBE-NODE-PORT-TCP 30080
// Members follow their set. `create` options are kept in order as written (the kernel adds
// `bucketsize`/`initval` in a real save); members are checked against the set type.

import { isIP } from 'node:net';
import { joinLines, parseError, splitLines } from './parse-error.js';
import {
  IPSET_TYPES, type IpSet, type IpSetEntry, type IpSetOption, type IpSetType,
} from './types.js';

const FLAG_OPTIONS = new Set(['comment', 'counters', 'skbinfo', 'forceadd']);
const PROTOCOLS = new Set(['tcp', 'udp', 'sctp', 'udplite', 'icmp', 'icmpv6']);

export function formatIpSet(set: IpSet): string[] {
  const opts = set.options.map((o) => (o.value === undefined ? o.key : `${o.key} ${o.value}`));
  const lines = [[`create ${set.name} ${set.type}`, ...opts].join(' ')];
  for (const e of set.entries) {
    const comment = e.comment === undefined ? '' : ` comment "${e.comment}"`;
    lines.push(`add ${set.name} ${e.value}${comment}`);
  }
  return lines;
}

export function formatIpsetSave(sets: readonly IpSet[]): string {
  return joinLines(sets.flatMap(formatIpSet));
}

/** Words of one line; a double-quoted word keeps its spaces (quotes removed). */
function tokenize(line: string): string[] | undefined {
  const out: string[] = [];
  const re = /\s*(?:"([^"]*)"|([^\s"]+))/y;
  let pos = 0;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    out.push(m[1] ?? m[2] ?? '');
    pos = re.lastIndex;
  }
  return line.slice(pos).trim() === '' ? out : undefined;
}

function isPort(s: string): boolean {
  return /^\d{1,5}$/.test(s) && Number(s) <= 65535;
}

function isProtoPort(s: string): boolean {
  const i = s.indexOf(':');
  return i > 0 && PROTOCOLS.has(s.slice(0, i)) && isPort(s.slice(i + 1));
}

function isNet(s: string): boolean {
  const [ip = '', len, ...more] = s.split('/');
  if (more.length > 0 || isIP(ip) === 0) return false;
  if (len === undefined) return true;
  return /^\d{1,3}$/.test(len) && Number(len) <= (isIP(ip) === 4 ? 32 : 128);
}

/** Whether `value` is a well-formed member of a set of `type` (as ipset prints members). */
export function isValidEntry(type: IpSetType, value: string): boolean {
  if (type === 'bitmap:port') return isPort(value);
  const parts = value.split(',');
  const ipOk = isIP(parts[0] ?? '') !== 0;
  switch (type) {
    case 'hash:ip': return parts.length === 1 && ipOk;
    case 'hash:ip,port': return parts.length === 2 && ipOk && isProtoPort(parts[1] ?? '');
    case 'hash:ip,port,ip':
      return parts.length === 3 && ipOk && isProtoPort(parts[1] ?? '') &&
        isIP(parts[2] ?? '') !== 0;
    case 'hash:ip,port,net':
      return parts.length === 3 && ipOk && isProtoPort(parts[1] ?? '') && isNet(parts[2] ?? '');
  }
}

interface MutableSet extends Omit<IpSet, 'entries'> {
  entries: IpSetEntry[];
}

/** Parse `ipset save` output / `ipset restore` input. Throws KDP_PARSE naming the line. */
export function parseIpsetSave(text: string, firstLine = 1): IpSet[] {
  const sets: MutableSet[] = [];
  const byName = new Map<string, MutableSet>();
  splitLines(text).forEach((line, i) => {
    const fail = (reason: string): never => {
      throw parseError('ipset', i + firstLine, line, reason);
    };
    const tok = tokenize(line) ?? fail('unbalanced quotes');
    const [cmd, name = '', third = '', ...rest] = tok;
    if (!/^[A-Za-z0-9_.:-]{1,31}$/.test(name)) fail(`invalid set name ${JSON.stringify(name)}`);
    if (cmd === 'create') {
      if (byName.has(name)) fail(`set ${name} created twice`);
      const type = IPSET_TYPES.find((t) => t === third) ?? fail(`unsupported set type ${third}`);
      const set = { name, type, options: parseCreateOptions(rest, fail), entries: [] };
      sets.push(set);
      byName.set(name, set);
    } else if (cmd === 'add') {
      const set = byName.get(name) ?? fail(`add to undeclared set ${name}`);
      if (!isValidEntry(set.type, third)) {
        fail(`invalid ${set.type} member ${JSON.stringify(third)}`);
      }
      set.entries.push(parseEntryOptions(third, rest, fail));
    } else {
      fail('expected create or add');
    }
  });
  return sets;
}

function parseCreateOptions(rest: string[], fail: (r: string) => never): IpSetOption[] {
  const options: IpSetOption[] = [];
  for (let i = 0; i < rest.length; i++) {
    const key = rest[i] ?? '';
    if (FLAG_OPTIONS.has(key)) {
      options.push({ key });
    } else if (/^[a-z]+$/.test(key) && rest[i + 1] !== undefined) {
      options.push({ key, value: rest[i + 1] });
      i++;
    } else {
      fail(`invalid create option ${JSON.stringify(key)}`);
    }
  }
  return options;
}

function parseEntryOptions(value: string, rest: string[], fail: (r: string) => never): IpSetEntry {
  if (rest.length === 0) return { value };
  if (rest.length === 2 && rest[0] === 'comment') return { value, comment: rest[1] };
  return fail(`unsupported member option ${JSON.stringify(rest.join(' '))}`);
}
