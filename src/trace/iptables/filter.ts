// The iptables NodeFilter: runs hooks over compiled tables and labels every matched rule with
// the Service / endpoint it was generated for.

import type { RuleOrigin } from '../../proxy/backend.js';
import type { FilterEnv, NodeFilter } from '../topology.js';
import type { HopOrigin, World } from '../world.js';
import { runHook, type Hook, type HookEnv } from './interpreter.js';
import type { CompiledRule } from './rule.js';
import type { TraceTables } from './ruleset.js';

export interface IptablesFilterOptions {
  /** The compiler's bookkeeping (chain → origin); absent for foreign dumps. */
  readonly origins?: ReadonlyMap<string, RuleOrigin>;
  readonly inSet?: (name: string, flags: readonly string[], pkt: World['pkt']) => boolean;
}

export function buildIptablesFilter(tables: TraceTables, opts: IptablesFilterOptions = {}): NodeFilter {
  const origin = (chain: string, rule: CompiledRule): HopOrigin | undefined =>
    opts.origins?.get(chain) ?? originFromComment(rule);
  const envs = hookEnvCache((e) => hookEnv(e, origin, opts.inSet));
  return {
    mode: 'iptables',
    runHook(hook: Hook, worlds: readonly World[], env: FilterEnv) {
      return runHook(tables, hook, worlds, envs(env));
    },
  };
}

/** kube-proxy's comments start with the service port name: `ns/name:port ...`. */
export function originFromComment(rule: CompiledRule): HopOrigin | undefined {
  const m = /^([a-z0-9][-a-z0-9.]*\/[a-z0-9][-a-z0-9.]*(?::[-a-z0-9]+)?)(?: -> (\S+))?/.exec(rule.comment ?? '');
  if (!m) return undefined;
  return { servicePort: m[1], ...(m[2] ? { endpoint: m[2] } : {}) };
}

/** The interpreter's environment for a walk's environment, made once per environment object
 *  (the walk keeps one per node, hook and interface: see node-context.ts). */
export function hookEnvCache<T>(make: (env: FilterEnv) => T): (env: FilterEnv) => T {
  const cache = new WeakMap<FilterEnv, T>();
  return (env) => {
    let h = cache.get(env);
    if (h === undefined) cache.set(env, (h = make(env)));
    return h;
  };
}

/** The interpreter's environment, built with one fixed shape (a spread of the caller's object
 *  would give every hook call a differently shaped object and slow every rule test). */
export function hookEnv(env: FilterEnv, origin: HookEnv['origin'], inSet: HookEnv['inSet']): HookEnv {
  return {
    where: env.where, isLocal: env.isLocal, inIface: env.inIface, outIface: env.outIface,
    masqueradeAddress: env.masqueradeAddress, bridged: env.bridged, origin, inSet,
  };
}
