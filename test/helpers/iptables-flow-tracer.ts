// A packet tracer over iptables restore input with exactly the semantics of upstream's
// proxier_test.go tracer (reference §5.3), used to check rules/*/flows.yaml against the iptables
// goldens. (kdp's real tracer lives in src/trace; this one is deliberately as simple as
// upstream's so the flows mean what upstream's packet-flow tests mean.)

import { cidrContains, parseIP } from '../../src/api/net.js';
import type { IptablesTable } from '../../src/ruleset/iptables/model.js';
import { parse, tablesOf } from '../../src/ruleset/iptables/parse.js';

export interface TraceResult {
  /** DNAT destinations in rule order, or ACCEPT/DROP/REJECT; '' when nothing matched. */
  readonly outputs: readonly string[];
  readonly masquerade: boolean;
}

interface Packet { src: string; dst: string; proto: string; dport: string }

function ipMatches(value: string, ip: string): boolean {
  if (!parseIP(ip)) return false;
  if (value.includes('/')) {
    try { return cidrContains(value, ip); } catch { return false; }
  }
  return parseIP(value) !== null && parseIP(value)!.value === parseIP(ip)!.value &&
    parseIP(value)!.family === parseIP(ip)!.family;
}

class Tracer {
  outputs: string[] = [];
  masq = false;
  constructor(private readonly tables: IptablesTable[], private readonly local: string[]) {}

  private matches(args: readonly string[], p: Packet): boolean {
    let neg = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '-m') { i++; continue; }
      if (a === '!') { neg = true; continue; }
      const v = args[i + 1] ?? '';
      let ok: boolean | undefined;
      switch (a) {
        case '-p': ok = v === p.proto; break;
        case '-s': ok = ipMatches(v, p.src); break;
        case '-d': ok = ipMatches(v, p.dst); break;
        case '--src-type': ok = v === 'LOCAL' && this.local.includes(p.src); break;
        case '--dst-type': ok = v === 'LOCAL' && this.local.includes(p.dst); break;
        case '--dport': ok = v === p.dport; break;
        case '--rcheck': case '--mark': case '--ctstate': return false;
        default: break;
      }
      if (ok !== undefined) {
        if (ok === neg) return false;
        if (a !== '--rcheck') i++;
      }
      neg = false;
    }
    return true;
  }

  /** Runs a chain; true when it ended with a verdict. */
  run(table: string, chain: string, p: Packet): boolean {
    const c = this.tables.find((t) => t.name === table)?.chains.find((x) => x.name === chain);
    for (const r of c?.rules ?? []) {
      const j = r.args.indexOf('-j');
      if (j < 0 || !this.matches(r.args, p)) continue;
      const target = r.args[j + 1]!;
      if (target === 'KUBE-MARK-MASQ') { this.masq = true; continue; }
      if (target === 'ACCEPT' || target === 'REJECT' || target === 'DROP') {
        this.outputs.push(target);
        return true;
      }
      if (target === 'DNAT') {
        this.outputs.push(r.args[r.args.indexOf('--to-destination') + 1]!);
        return true;
      }
      const ended = this.run(table, target, p);
      if (ended && !r.args.includes('--probability')) return true;
    }
    return false;
  }
}

/** Traces one packet through restore input (node IPs count as LOCAL, with 127.0.0.1/::1). */
export function tracePacket(text: string, nodeIPs: readonly string[], src: string, proto: string,
  dst: string, dport: string): TraceResult {
  const tables = tablesOf(parse(text));
  const t = new Tracer(tables, ['127.0.0.1', '::1', ...nodeIPs]);
  const p = { src, dst, proto: proto.toLowerCase(), dport };
  t.run('nat', 'KUBE-SERVICES', p);
  if (t.outputs.length > 0) {
    const first = t.outputs[0]!;
    p.dst = first.startsWith('[') ? first.slice(1, first.indexOf(']')) : first.split(':')[0]!;
  }
  for (const chain of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-NODEPORTS',
    'KUBE-PROXY-FIREWALL']) t.run('filter', chain, p);
  return { outputs: t.outputs, masquerade: t.masq };
}
