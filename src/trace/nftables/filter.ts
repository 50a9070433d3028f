// The nftables NodeFilter: reads any nft form kdp knows (the `nft -f` transaction kube-proxy
// writes, `nft list ruleset` text, `nft -j list ruleset` JSON) into the shared model, compiles
// every rule once (strictly: an unknown statement fails here, naming its rule), lays each
// table's chains out as one program (program.ts), and runs hooks over it.

import type { RuleOrigin } from '../../proxy/backend.js';
import { applyTransaction } from '../../ruleset/nftables/fake.js';
import { parseListJson } from '../../ruleset/nftables/list-json.js';
import { parseListText } from '../../ruleset/nftables/list-text.js';
import { emptyRuleset, type NftRuleset } from '../../ruleset/nftables/model.js';
import { parseTransaction } from '../../ruleset/nftables/transaction.js';
import type { FilterEnv, NodeFilter } from '../topology.js';
import type { HopOrigin } from '../world.js';
import { hookEnvCache } from '../iptables/filter.js';
import { compileNftRule } from './compile.js';
import type { Hook } from '../iptables/interpreter.js';
import {
  hookBases, runNftHook, type HookBases, type NftChainIR, type NftHookEnv, type NftTableIR,
} from './interpreter.js';
import { buildProgram } from './program.js';

/** Detects the form: JSON, listing (`table ...{`), or transaction (`add ...`). */
export function parseNftAny(text: string): NftRuleset {
  const t = text.trimStart();
  if (t.startsWith('{')) return parseListJson(text).ruleset;
  if (/^table\s/m.test(text)) return parseListText(text);
  return applyTransaction(emptyRuleset(), parseTransaction(text));
}

export function compileNftRuleset(rs: NftRuleset): NftTableIR[] {
  return [...rs.tables.values()].map((t) => {
    const { program, starts } = buildProgram([...t.chains.values()].map((c) => ({
      name: c.name, rules: c.rules.map((r, i) => compileNftRule(c.name, i + 1, r.tokens, r.comment)),
    })));
    const baseChains: NftChainIR[] = [];
    for (const c of t.chains.values()) {
      if (c.hook === undefined) continue;
      baseChains.push({ name: c.name, hook: c.hook, priority: c.priority ?? 0,
        policy: c.policy ?? 'accept', start: starts.get(c.name)! });
    }
    const sets = new Map<string, { key: readonly string[]; value?: readonly string[] }[]>();
    for (const s of t.sets.values()) sets.set(s.name, [...s.elements.values()]);
    return {
      key: `${t.family} ${t.name}`, family: t.family, sets, indexes: new Map(), baseChains,
      verdicts: new WeakMap(), setElements: (name: string) => sets.get(name) ?? [], program, starts,
    };
  });
}

/** kube-proxy names its chains `service-HASH-ns/name/proto/port`, `endpoint-…__ip/port`. */
export function originFromNftChain(chain: string): HopOrigin | undefined {
  const m = /^(?:service|external|local|firewall|endpoint|affinity)-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/([^/]+)\/([^_]+)(?:__(.+)\/(\d+))?$/.exec(chain);
  if (!m) return undefined;
  const [, ns, name, , port, ip, epPort] = m;
  return {
    servicePort: `${ns}/${name}${port ? `:${port}` : ''}`,
    ...(ip ? { endpoint: ip.includes(':') ? `[${ip}]:${epPort}` : `${ip}:${epPort}` } : {}),
  };
}

export function buildNftFilter(
  text: string, origins?: ReadonlyMap<string, RuleOrigin>,
): NodeFilter {
  const tables = compileNftRuleset(parseNftAny(text));
  const origin = (chain: string) => origins?.get(chain) ?? originFromNftChain(chain);
  const bases: Record<Hook, HookBases> = {
    PREROUTING: hookBases(tables, 'PREROUTING'), INPUT: hookBases(tables, 'INPUT'),
    FORWARD: hookBases(tables, 'FORWARD'), OUTPUT: hookBases(tables, 'OUTPUT'),
    POSTROUTING: hookBases(tables, 'POSTROUTING'),
  };
  const envs = hookEnvCache((env: FilterEnv) => ({
    where: env.where, isLocal: env.isLocal, inIface: env.inIface, outIface: env.outIface,
    masqueradeAddress: env.masqueradeAddress, origin,
  }));
  // The walk calls hooks with a few environments in turn: the last one is kept at hand.
  let lastEnv: FilterEnv | undefined;
  let lastHookEnv: NftHookEnv | undefined;
  return {
    mode: 'nftables',
    runHook(hook, worlds, env: FilterEnv) {
      if (env !== lastEnv) {
        lastHookEnv = envs(env);
        lastEnv = env;
      }
      return runNftHook(tables, hook, worlds, lastHookEnv!, bases[hook]);
    },
  };
}
