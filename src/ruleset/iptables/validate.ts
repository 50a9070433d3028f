// What `iptables-restore` (and the kernel, on commit) refuses in a parsed document, beyond the
// syntax parse.ts checks: unknown tables, rules in chains that do not exist, jumps to chains that
// do not exist or to built-in chains, jump loops (the kernel answers ELOOP), built-in policies,
// and values iptables' own option parsers refuse (addresses, ports, DNAT/SNAT targets, marks,
// probabilities, recent's --seconds). The first problem is KDP_PARSE naming the line, as
// `iptables-restore` names it ("Error occurred at line: N").
//
// Addresses must be literal: iptables would resolve a host name through DNS, an offline table
// cannot. Matches and targets this module does not know are left to the tracer (strict there).

import { parseCIDR, parseIP } from '../../api/net.js';
import { kdpError } from '../../errors.js';
import { splitArgs } from './parse.js';
import { JumpGraph, type JumpNode } from '../jump-loop.js';
import { wordOffsets, words } from '../words.js';

/** Built-in chains per table, as the kernel's iptable_* modules register them. */
const TABLE_CHAINS: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** Standard verdicts and the target extensions of a stock kernel (xt_*.ko, ipt_*.ko). */
const TARGETS = new Set([
  'ACCEPT', 'DROP', 'RETURN', 'QUEUE', 'REJECT', 'DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT',
  'NETMAP', 'MARK', 'CONNMARK', 'LOG', 'NFLOG', 'NFQUEUE', 'TRACE', 'CT', 'NOTRACK', 'CHECKSUM',
  'TCPMSS', 'TCPOPTSTRIP', 'CLASSIFY', 'DSCP', 'TOS', 'TTL', 'HL', 'HMARK', 'SET', 'AUDIT', 'TEE',
  'SECMARK', 'CONNSECMARK', 'IDLETIMER', 'LED', 'RATEEST', 'SYNPROXY', 'TPROXY', 'ECN', 'ULOG',
  'CLUSTERIP',
]);

/** XT_EXTENSION_MAXNAMELEN - 1: the longest chain name iptables accepts. */
const MAX_CHAIN_NAME = 28;

/** Options whose value this module checks (or must skip: -j/-g name the target). */
const OPTIONS_WITH_VALUES = new Set(['-j', '--jump', '-g', '--goto', '-s', '--source', '-d',
  '--destination', '-p', '--protocol', '--dport', '--destination-port', '--sport',
  '--source-port', '--dports', '--destination-ports', '--sports', '--source-ports', '--ports',
  '--to-ports', '--to-destination', '--to-source', '--probability', '--seconds', '--hitcount',
  '--mark', '--set-mark', '--set-xmark', '--or-mark', '--and-mark', '--xor-mark']);

const PROTOCOLS = new Set(['all', 'tcp', 'udp', 'udplite', 'icmp', 'icmpv6', 'ipv6-icmp', 'esp',
  'ah', 'sctp', 'mh', 'gre', 'ipip', 'igmp', 'dccp']);


function fail(lineNo: number, reason: string, text: string): never {
  throw kdpError('KDP_PARSE', `iptables line ${lineNo}: ${reason}: ${text.slice(0, 200)}`, {
    causes: [{ field: `line ${lineNo}`, reason: 'FieldValueInvalid', message: reason }],
  });
}

/**
 * Throws KDP_PARSE for the first line `iptables-restore` (or the kernel, on commit) would
 * refuse. One pass over the text without building the model (a 10,000-Service dump is 440,000
 * lines, and `kdp diff` parses only what differs); syntax it does not need is left to parse().
 * `firstLine` is the number of the text's first line in a larger input.
 */
export function validateText(text: string, firstLine = 1): void {
  let table: TableCheck | undefined;
  let tableLine = 0;
  let at = 0;
  let lineNo = firstLine - 1;
  while (at < text.length) {
    let nl = text.indexOf('\n', at);
    if (nl < 0) nl = text.length;
    const line = text.slice(at, nl);
    at = nl + 1;
    lineNo++;
    const c = line.charCodeAt(0);
    if (line === '' || c === 0x23 /* # */) continue;
    if (c === 0x2a /* * */) {
      if (table) fail(lineNo, 'table started before COMMIT of the previous one', line);
      const name = line.slice(1);
      if (!TABLE_CHAINS[name]) fail(lineNo, `table ${name} does not exist`, line);
      table = new TableCheck(name);
      tableLine = lineNo;
    } else if (line === 'COMMIT') {
      if (!table) fail(lineNo, 'COMMIT outside a table', line);
      table.commit();
      table = undefined;
    } else {
      if (!table) fail(lineNo, 'line outside a table (missing *table)', line);
      table.add(line, lineNo);
    }
  }
  if (table) fail(tableLine, 'table has no COMMIT (input truncated?)', `*${table.name}`);
}

/** One table between `*name` and COMMIT. Chains may be declared after their first use. */
class TableCheck {
  private readonly builtins: ReadonlySet<string>;
  /**
   * Every chain named so far, declared (`known`) or not, with its jumps: one lookup per name
   * serves the declaration, the reference check and the loop search.
   */
  private readonly graph = new JumpGraph();
  /** Chains used before any declaration, in order of first use: checked at COMMIT. */
  private readonly pending: JumpNode[] = [];
  private family: { v6: boolean; lineNo: number } | undefined;
  /** The chain of the previous rule (already through use()) and its node. */
  private lastChain = '';
  private lastNode: JumpNode | undefined;
  /** The previous jump's target (already through use()) and its node. */
  private lastTarget = '';
  private lastTargetNode: JumpNode | undefined;

  constructor(readonly name: string) {
    this.builtins = new Set(TABLE_CHAINS[name]);
  }

  add(line: string, lineNo: number): void {
    if (line.charCodeAt(0) === 0x3a /* : */) return this.chainLine(line, lineNo);
    let from = 0;
    if (line.charCodeAt(0) === 0x5b /* [ */) from = line.indexOf(' ') + 1;
    // Words as offsets into `src` (no string per word): the line itself split at spaces, or,
    // when it quotes, its words (splitArgs) joined with newlines, which no word can hold.
    let src = line;
    let sep = ' ';
    if (line.indexOf('"', from) >= 0) {
      const args = splitArgs(line.slice(from), lineNo);
      src = args.join('\n');
      sep = '\n';
      from = 0;
      if (args.length === 0) return;
    }
    const n = wordOffsets(src, from, sep);
    const op = tokenOp(src);
    if (op === 0x4e /* -N */) {
      if (n > 1 && words.te[1]! > words.ts[1]!) {
        this.graph.node(src.slice(words.ts[1], words.te[1])).known = true;
      }
      return;
    }
    if (op !== 0x41 && op !== 0x49 && op !== 0x44 && op !== 0x52 /* -A -I -D -R */) return;
    if (n < 2 || words.te[1] === words.ts[1]) return;
    // Rules of a chain are mostly consecutive: the previous rule's chain is reused unsliced.
    let node = this.lastNode;
    if (!node || words.te[1]! - words.ts[1]! !== this.lastChain.length ||
      !src.startsWith(this.lastChain, words.ts[1])) {
      const chain = this.lastChain = src.slice(words.ts[1], words.te[1]);
      node = this.lastNode = this.use(chain, lineNo, line, false);
    }
    const target = checkRuleArgs(src, n, 2, lineNo, line, this);
    if (target === undefined || TARGETS.has(target)) return;
    // The same target (KUBE-MARK-MASQ) comes back every other rule: its node is kept.
    let to = this.lastTargetNode;
    if (!to || target !== this.lastTarget) {
      to = this.lastTargetNode = this.use(target, lineNo, line, true);
      this.lastTarget = target;
    }
    if (op === 0x44) return;
    node.out.push({ to: target, line: lineNo, text: line, node: to });
  }

  private chainLine(line: string, lineNo: number): void {
    const sp = line.indexOf(' ');
    const name = line.slice(1, sp < 0 ? undefined : sp);
    const end = sp < 0 ? -1 : line.indexOf(' ', sp + 1);
    const policy = sp < 0 ? '' : line.slice(sp + 1, end < 0 ? undefined : end);
    const builtin = this.builtins.has(name);
    if (!builtin && name.length > MAX_CHAIN_NAME) {
      fail(lineNo, `chain name longer than ${MAX_CHAIN_NAME} characters`, line);
    }
    if (builtin && policy !== 'ACCEPT' && policy !== 'DROP') {
      fail(lineNo, `bad policy ${policy} for built-in chain ${name}`, line);
    }
    if (!builtin && policy !== '-') {
      fail(lineNo, `a policy (${policy}) is only for built-in chains`, line);
    }
    this.graph.node(name).known = true;
  }

  /** Notes a use of chain `name` (a jump when `jump`); answers its node. */
  private use(name: string, lineNo: number, text: string, jump: boolean): JumpNode {
    if (this.builtins.has(name)) {
      if (jump) fail(lineNo, `cannot jump to built-in chain ${name}`, text);
      return this.graph.node(name);
    }
    const node = this.graph.node(name);
    if (!node.known && !node.firstUse) {
      node.firstUse = { lineNo, text, jump };
      this.pending.push(node);
    }
    return node;
  }

  /**
   * A table holds rules of one family (iptables-restore refuses an IPv6 address, ip6tables-
   * restore an IPv4 one); dual-stack dumps hold each family's tables separately.
   */
  seeFamily(v6: boolean, lineNo: number, text: string): void {
    if (this.family === undefined) {
      this.family = { v6, lineNo };
    } else if (this.family.v6 !== v6) {
      fail(lineNo, `an ${v6 ? 'IPv6' : 'IPv4'} address in a table of ${v6 ? 'IPv4' : 'IPv6'} ` +
        `rules (first at line ${this.family.lineNo})`, text);
    }
  }

  commit(): void {
    for (const node of this.pending) {
      const u = node.firstUse!;
      if (node.known) continue;
      fail(u.lineNo, u.jump ? `jump to chain ${node.name}, which does not exist (nor is it a ` +
        'target)' : `chain ${node.name} does not exist`, u.text);
    }
    const loop = this.graph.findLoop(this.builtins);
    if (loop) {
      fail(loop.line, `jumps loop (${loop.path.join(' → ')}): the kernel refuses it (ELOOP)`,
        loop.text);
    }
  }
}

/** The letter of word 0 when it is `-X`, else 0. */
function tokenOp(src: string): number {
  const s = words.ts[0]!;
  return words.te[0]! - s === 2 && src.charCodeAt(s) === 0x2d ? src.charCodeAt(s + 1) : 0;
}

/** Option words of one letter this module checks: -j -g -s -d -p. */
const SHORT: Readonly<Record<number, string>> = {
  0x6a: '-j', 0x67: '-g', 0x73: '-s', 0x64: '-d', 0x70: '-p',
};

/**
 * Verdicts on values seen before, one map per kind of value: a dump repeats the same few
 * thousand (prefixes, marks, probabilities). No closures here: the loader names each one.
 */
const seenAddress = new Map<string, boolean>();
const seenProbability = new Map<string, boolean>();
const seenMark = new Map<string, boolean>();

function remember(seen: Map<string, boolean>, key: string, ok: boolean): boolean {
  if (seen.size >= 100_000) seen.clear();
  seen.set(key, ok);
  return ok;
}

/**
 * Checks option values of words `from`.. (offsets in `words` over `src`); returns the rule's -j/-g
 * target. Plain dotted-quad addresses, numeric ports and ADDR:PORT are checked in place; the
 * rest by the general checks below.
 */
function checkRuleArgs(src: string, n: number, from: number, lineNo: number, line: string,
  table: TableCheck): string | undefined {
  let target: string | undefined;
  for (let i = from; i < n; i++) {
    const s = words.ts[i]!;
    const len = words.te[i]! - s;
    if (src.charCodeAt(s) !== 0x2d /* - */ || len < 2) continue;
    let a: string | undefined;
    if (len === 2) a = SHORT[src.charCodeAt(s + 1)];
    else {
      a = src.slice(s, s + len);
      if (!OPTIONS_WITH_VALUES.has(a)) continue;
    }
    if (a === undefined) continue;
    if (++i >= n) return fail(lineNo, `${a} needs a value`, line);
    const vs = words.ts[i]!;
    const ve = words.te[i]!;
    switch (a) {
      case '-j': case '--jump': case '-g': case '--goto': target = src.slice(vs, ve); break;
      case '-s': case '--source': case '-d': case '--destination': {
        if (dottedQuad(src, vs, ve, 0x2f /* / */) === ve) {
          table.seeFamily(false, lineNo, line);
          break;
        }
        const spec = src.slice(vs, ve);
        const ok = seenAddress.get(spec) ?? remember(seenAddress, spec, isAddressList(spec));
        if (!ok) {
          fail(lineNo, `host/network \`${spec}' is not an address`, line);
        }
        table.seeFamily(spec.includes(':'), lineNo, line);
        break;
      }
      case '-p': case '--protocol': {
        const p = src.slice(vs, ve).toLowerCase();
        if (!PROTOCOLS.has(p) && !isIntIn(p, 0, 255)) {
          fail(lineNo, `unknown protocol \`${p}'`, line);
        }
        break;
      }
      case '--dport': case '--destination-port': case '--sport': case '--source-port':
      case '--dports': case '--destination-ports': case '--sports': case '--source-ports':
      case '--ports': case '--to-ports': {
        if (portNumber(src, vs, ve) === ve) break;
        const spec = src.slice(vs, ve);
        for (const p of spec.split(',')) {
          if (!isPortRange(p, a === '--to-ports' ? '-' : ':')) {
            fail(lineNo, `invalid port/service \`${p}' specified`, line);
          }
        }
        break;
      }
      case '--to-destination': case '--to-source': {
        const q = dottedQuad(src, vs, ve, -1);
        if (q === ve || (q > 0 && src.charCodeAt(q) === 0x3a /* : */ &&
          portNumber(src, q + 1, ve) === ve)) {
          table.seeFamily(false, lineNo, line);
          break;
        }
        const spec = src.slice(vs, ve);
        if (!isNatSpec(spec)) {
          fail(lineNo, `bad ${a} \`${spec}' (want ADDR[-ADDR][:PORT[-PORT]])`, line);
        }
        const v6 = spec.startsWith('[') || (spec.match(/:/g) ?? []).length > 1;
        if (!spec.startsWith(':')) table.seeFamily(v6, lineNo, line);
        break;
      }
      case '--probability': {
        const p = src.slice(vs, ve);
        const ok = seenProbability.get(p) ?? remember(seenProbability, p, isProbability(p));
        if (!ok) fail(lineNo, `--probability ${p} is not a number from 0 to 1`, line);
        break;
      }
      case '--seconds': case '--hitcount': {
        const s = src.slice(vs, ve);
        if (!isIntIn(s, 1, 4294967295)) {
          fail(lineNo, `bad value for option "${a}", or out of range (1-4294967295)`, line);
        }
        break;
      }
      case '--mark': case '--set-mark': case '--set-xmark': case '--or-mark': case '--and-mark':
      case '--xor-mark': {
        const m = src.slice(vs, ve);
        const ok = seenMark.get(m) ?? remember(seenMark, m, isMark(m));
        if (!ok) fail(lineNo, `bad mark value \`${m}'`, line);
        break;
      }
    }
  }
  return target;
}

/**
 * The end of an IPv4 address `a.b.c.d` (each 1-3 digits, at most 255) starting at `s`, followed
 * by `/N` (N at most 32) when `slash` is `/` and one follows; -1 when `s` does not start one.
 * A result of `e` means the whole word is such an address (one the general checks accept).
 */
export function dottedQuad(src: string, s: number, e: number, slash: number): number {
  let i = s;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= e || src.charCodeAt(i) !== 0x2e /* . */) return -1;
      i++;
    }
    let v = 0;
    const start = i;
    while (i < e && i - start < 4) {
      const c = src.charCodeAt(i) - 0x30;
      if (c < 0 || c > 9) break;
      v = v * 10 + c;
      i++;
    }
    if (i === start || i - start > 3 || v > 255) return -1;
  }
  if (i < e && src.charCodeAt(i) === slash) {
    const m = portNumber(src, i + 1, e);
    if (m !== e || e - i - 1 > 2) return -1;
    let v = 0;
    for (let k = i + 1; k < e; k++) v = v * 10 + src.charCodeAt(k) - 0x30;
    return v <= 32 ? e : -1;
  }
  return i;
}

/** The end of a decimal port (1-5 digits, at most 65535) from `s`, when it runs to `e`; else -1. */
export function portNumber(src: string, s: number, e: number): number {
  if (e <= s || e - s > 5) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const c = src.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v <= 65535 ? e : -1;
}

function isProbability(p: string): boolean {
  const x = /^(?:\d+(?:\.\d*)?|\.\d+)(?:e-?\d+)?$/i.test(p) ? Number(p) : NaN;
  return x >= 0 && x <= 1;
}

function isIntIn(s: string, lo: number, hi: number): boolean {
  if (!/^(?:\d+|0x[0-9a-f]+)$/i.test(s)) return false;
  const n = Number(s);
  return n >= lo && n <= hi;
}

const isPort = (s: string) => isIntIn(s, 0, 65535) || /^[a-z][a-z0-9-]*$/i.test(s);

function isPortRange(s: string, sep: ':' | '-'): boolean {
  const parts = s.split(sep);
  if (parts.length > 2 || parts.some((p) => p === '' && parts.length === 1)) return false;
  return parts.every((p) => p === '' || isPort(p));
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;

/** `a[/m],b[/m]`; the common IPv4 forms without the general (bigint) parser. */
function isAddressList(spec: string): boolean {
  for (const s of spec.split(',')) {
    const m = IPV4.exec(s);
    if (m) {
      if (+m[1]! > 255 || +m[2]! > 255 || +m[3]! > 255 || +m[4]! > 255) return false;
      if (m[5] !== undefined && +m[5] > 32) return false;
    } else if (!isAddressSpec(s)) return false;
  }
  return true;
}

function isLiteralIP(s: string): boolean {
  const m = IPV4.exec(s);
  if (!m) return parseIP(s) !== null;
  return m[5] === undefined && +m[1]! <= 255 && +m[2]! <= 255 && +m[3]! <= 255 && +m[4]! <= 255;
}

function isAddressSpec(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return parseIP(s) !== null;
  const mask = s.slice(slash + 1);
  if (/^\d+$/.test(mask)) return parseCIDR(s) !== null;
  const ip = parseIP(s.slice(0, slash));
  const m = parseIP(mask);
  return ip !== null && m !== null && m.family === ip.family;
}

/** `ADDR[-ADDR][:PORT[-PORT]]`, `[V6]:PORT`, `:PORT` (SNAT/DNAT --to). */
function isNatSpec(spec: string): boolean {
  let addrs = spec;
  let ports: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(spec);
  if (v6) {
    addrs = v6[1]!;
    ports = v6[2];
  } else if ((spec.match(/:/g) ?? []).length === 1) {
    [addrs, ports] = spec.split(':') as [string, string];
  }
  if (ports !== undefined && !/^\d+(?:-\d+)?$/.test(ports)) return false;
  if (ports !== undefined && !ports.split('-').every((p) => isIntIn(p, 0, 65535))) return false;
  if (addrs === '') return ports !== undefined;
  return addrs.split('-').every(isLiteralIP);
}

function isMark(s: string): boolean {
  const [value, mask, extra] = s.split('/');
  if (extra !== undefined) return false;
  return [value, mask].every((p) => p === undefined || isIntIn(p, 0, 0xffffffff));
}
