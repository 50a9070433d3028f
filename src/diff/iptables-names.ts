// Maps kube-proxy's hashed iptables chain names (KUBE-SVC/SVL/EXT/FW/SEP-<hash>) back to the
// Service port and endpoint they serve: first by the compiler's bookkeeping (kdp snapshots),
// then by rule comments, then by recomputing upstream's hash for every Service port and
// endpoint the comments name (foreign dumps whose chains carry no comment of their own).

import type { RuleOrigin } from '../proxy/backend.js';
import { endpointChainName, isServiceChainName, servicePortChains } from
  '../proxy/iptables/chain-names.js';
import type { IptablesTable } from '../ruleset/iptables/model.js';

export function commentOf(args: readonly string[]): string | undefined {
  const i = args.indexOf('--comment');
  return i >= 0 ? args[i + 1] : undefined;
}

export function argAfter(args: readonly string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

/** `ns/name:port` at the start of a kube-proxy comment, when it has one. */
export function serviceOfComment(c: string | undefined): string | undefined {
  if (!c) return undefined;
  const first = c.split(' ')[0]!;
  return /^[a-z0-9.-]+\/[a-z0-9.-]+(?::[a-z0-9-]+)?$/i.test(first) ? first : undefined;
}

export function resolveChainOrigins(tables: readonly IptablesTable[],
  origins?: ReadonlyMap<string, RuleOrigin>): Map<string, RuleOrigin> {
  const out = new Map<string, RuleOrigin>();
  const ports = new Set<string>();
  const endpoints = new Set<string>();
  for (const t of tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        const sp = serviceOfComment(commentOf(r.args));
        const proto = argAfter(r.args, '-p');
        if (!sp) continue;
        if (proto) ports.add(`${sp}\n${proto}`);
        const ep = / -> (\S+)$/.exec(commentOf(r.args)!)?.[1];
        if (ep) endpoints.add(`${sp}\n${ep}`);
        if (isServiceChainName(c.name) && !out.has(c.name)) out.set(c.name, { servicePort: sp });
        const dnat = argAfter(r.args, '--to-destination');
        if (c.name.startsWith('KUBE-SEP-') && dnat) {
          out.set(c.name, { servicePort: sp, endpoint: dnat });
        }
      }
    }
  }
  for (const key of ports) {
    const [sp, proto] = key.split('\n') as [string, string];
    for (const name of Object.values(servicePortChains(sp, proto))) {
      if (!out.has(name)) out.set(name, { servicePort: sp });
    }
  }
  const protos = new Map<string, string[]>();
  for (const key of ports) {
    const [sp, proto] = key.split('\n') as [string, string];
    protos.set(sp, [...(protos.get(sp) ?? []), proto]);
  }
  for (const key of endpoints) {
    const [sp, ep] = key.split('\n') as [string, string];
    for (const proto of protos.get(sp) ?? ['tcp', 'udp', 'sctp']) {
      const name = endpointChainName(sp, proto, ep);
      if (!out.get(name)?.endpoint) out.set(name, { servicePort: sp, endpoint: ep });
    }
  }
  for (const [k, v] of origins ?? []) out.set(k, v);
  endpointsByJump(tables, out);
  return out;
}

/**
 * Large clusters (over 1,000 endpoints) write KUBE-SEP rules without comments: an endpoint
 * chain is then named by the service chain jumping to it and its own DNAT target.
 */
function endpointsByJump(tables: readonly IptablesTable[], out: Map<string, RuleOrigin>): void {
  for (const t of tables) {
    const dnat = new Map<string, string>();
    for (const c of t.chains) {
      if (!c.name.startsWith('KUBE-SEP-') || out.get(c.name)?.endpoint) continue;
      for (const r of c.rules) {
        const to = argAfter(r.args, '--to-destination');
        if (to) dnat.set(c.name, to);
      }
    }
    if (dnat.size === 0) continue;
    for (const c of t.chains) {
      const sp = out.get(c.name)?.servicePort;
      if (!sp || !/^KUBE-SV[CL]-/.test(c.name)) continue;
      for (const r of c.rules) {
        const target = argAfter(r.args, '-j');
        const ep = target ? dnat.get(target) : undefined;
        if (ep) out.set(target!, { servicePort: sp, endpoint: ep });
      }
    }
  }
}

/** A readable stand-in for a hashed chain name (`SVC[ns/name:port]`, `SEP[ip:port]`). */
export function chainAlias(name: string, origins: ReadonlyMap<string, RuleOrigin>): string {
  const o = origins.get(name);
  if (!o || !isServiceChainName(name)) return name;
  const kind = name.slice(5, name.indexOf('-', 5));
  return kind === 'SEP' && o.endpoint ? `SEP[${o.endpoint}]` : `${kind}[${o.servicePort}]`;
}
