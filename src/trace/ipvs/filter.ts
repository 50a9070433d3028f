// The ipvs NodeFilter: the supplementary iptables rules (with ipsets) in their hooks, and the
// IPVS director where the kernel runs it — LOCAL_IN for arriving packets (after filter INPUT),
// LOCAL_OUT for the node's own (after nat OUTPUT, before filter OUTPUT). A scheduled packet is
// DNATed to each real server with the scheduler's share; a virtual server without real servers
// is answered by the node itself (connection refused: REJECT).

import { parseIpvsState } from '../../ruleset/ipvs/state-text.js';
import type { IpvsState, VirtualServer } from '../../ruleset/ipvs/types.js';
import { parse, tablesOf } from '../../ruleset/iptables/parse.js';
import { formatArgs } from '../../ruleset/iptables/format.js';
import { IPTABLES_JUMPS } from '../../proxy/ipvs/iptables-rules.js';
import { compileTables, type TraceTables } from '../iptables/ruleset.js';
import { runHook } from '../iptables/interpreter.js';
import { hookEnv, hookEnvCache, originFromComment } from '../iptables/filter.js';
import { endpointString, withDst } from '../packet.js';
import type { FilterEnv, NodeFilter } from '../topology.js';
import { forkWorld, isRecording, type World } from '../world.js';
import { buildSetLookup } from './ipsets.js';

/**
 * The jumps upstream's ipvs proxier ensures outside the restore input (its IPTABLES_JUMPS,
 * each prepended in turn), as `iptables-save` would show them on a fresh node.
 */
function ipvsJumpsText(): string {
  const byChain = new Map<string, string[]>();
  for (const j of IPTABLES_JUMPS) {
    const key = `${j.table} ${j.from}`;
    byChain.set(key, [`-A ${j.from} ${formatArgs(['-m', 'comment', '--comment', j.comment, '-j', j.to])}`,
      ...(byChain.get(key) ?? [])]);
  }
  const out: string[] = [];
  for (const table of ['nat', 'filter']) {
    const chains = [...byChain.keys()].filter((k) => k.startsWith(`${table} `));
    if (chains.length === 0) continue;
    out.push(`*${table}`, ...chains.map((k) => `:${k.split(' ')[1]} ACCEPT [0:0]`));
    for (const k of chains) out.push(...byChain.get(k)!);
    out.push('COMMIT');
  }
  return `${out.join('\n')}\n`;
}

/** kube-proxy's restore input lacks the built-in chains; a live dump (iptables-save) has them. */
function ipvsTables(state: IpvsState): TraceTables {
  const tables = tablesOf(parse(state.iptables));
  const hasJumps = tables.some((t) => t.chains.some((c) => c.name === 'PREROUTING' || c.name === 'INPUT'));
  if (!hasJumps) {
    for (const j of tablesOf(parse(ipvsJumpsText()))) {
      const t = tables.find((x) => x.name === j.name);
      if (t) t.chains.unshift(...j.chains);
    }
  }
  return compileTables(tables, false);
}

export function buildIpvsFilter(text: string): NodeFilter {
  const state = parseIpvsState(text);
  const tables = ipvsTables(state);
  const inSet = buildSetLookup(state.ipsets);
  const vsIndex = indexVirtualServers(state);
  const vips = new Set(state.dummyAddresses.map((a) => a.split('/')[0]!));
  const origin = (_chain: string, rule: Parameters<typeof originFromComment>[0]) => originFromComment(rule);
  const env = hookEnvCache((e: FilterEnv) =>
    hookEnv({ ...e, isLocal: (ip: string) => e.isLocal(ip) || vips.has(ip) }, origin, inSet));
  return {
    mode: 'ipvs',
    isLocal: (ip) => vips.has(ip),
    runHook(hook, worlds, e) {
      const en = env(e);
      if (hook === 'INPUT') return director(vsIndex, runHook(tables, 'INPUT', worlds, en), e.where);
      if (hook === 'OUTPUT') {
        const natted = runHook(tables, 'OUTPUT', worlds, en, ['raw', 'mangle', 'nat']);
        return runHook(tables, 'OUTPUT', director(vsIndex, natted, e.where), en, ['filter']);
      }
      return runHook(tables, hook, worlds, en);
    },
  };
}

/** A virtual server as the director uses it: its live real servers with their shares, the
 *  strings its hops show, and the IPVS connection record every scheduled packet carries. */
interface Director {
  readonly vs: VirtualServer;
  readonly vip: string;
  readonly live: readonly { readonly address: string; readonly port: number; readonly weight: number;
    readonly share: number }[];
  readonly conn: NonNullable<World['ipvs']>;
}

type VsIndex = ReadonlyMap<string, Director>;

const vsKey = (proto: string, address: string, port: number) => `${proto} ${address} ${port}`;

/** Virtual servers by protocol, address and port (the first of duplicates wins). */
function indexVirtualServers(state: IpvsState): VsIndex {
  const out = new Map<string, Director>();
  for (const vs of state.ipvs.virtualServers) {
    const k = vsKey(vs.protocol, vs.address, vs.port);
    if (out.has(k)) continue;
    const live = vs.realServers.filter((rs) => rs.weight > 0);
    const total = live.reduce((a, rs) => a + rs.weight, 0);
    out.set(k, {
      vs, vip: endpointString(vs.address, vs.port),
      live: live.map((rs) => ({ address: rs.address, port: rs.port, weight: rs.weight, share: rs.weight / total })),
      // The packet's protocol is the virtual server's (the index is keyed by it).
      conn: { vaddr: vs.address, vport: vs.port, vproto: vs.protocol.toLowerCase() },
    });
  }
  return out;
}

function findVs(index: VsIndex, w: World): Director | undefined {
  return index.get(vsKey(w.pkt.proto.toUpperCase(), w.pkt.dst, w.pkt.dport));
}

function director(index: VsIndex, worlds: readonly World[], where: string): World[] {
  const out: World[] = [];
  for (const w of worlds) {
    const d = w.verdict && w.verdict !== 'ACCEPT' ? undefined : findVs(index, w);
    if (!d) {
      out.push(w);
      continue;
    }
    const { vs, vip, live } = d;
    if (live.length === 0) {
      w.verdict = 'REJECT';
      w.hops.push({ where, stage: 'ipvs', text: `-A -t ${vip} -s ${vs.scheduler}: no real servers; the node refuses the connection` });
      out.push(w);
      continue;
    }
    for (const rs of live) {
      const x = forkWorld(w, w.probability * rs.share);
      if (isRecording(x)) {
        const to = endpointString(rs.address, rs.port);
        x.hops.push({ where, stage: 'ipvs', text: `-a -t ${vip} -r ${to} -m -w ${rs.weight} (${vs.scheduler})`, nat: `IPVS ${vip} → ${to}` });
      }
      x.ipvs = d.conn;
      x.pkt = withDst(x.pkt, rs.address, rs.port);
      x.dnat = true;
      out.push(x);
    }
  }
  return out;
}
