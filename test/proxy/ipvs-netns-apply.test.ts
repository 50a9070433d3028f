// Root only: every scenario's ipvs ipsets, chain links, supplementary iptables input and
// kube-ipvs0 addresses are applied in a throwaway netns per scenario (ipsets and iptables are
// per network namespace; IPVS itself is not needed) and read back. This kernel may lack IP_VS:
// then the `-m ipvs` match (xt_ipvs) is unavailable and those lines are left out (reported).

import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWith } from '../../src/proxy/compile.js';
import { cleanupCommands, linkCommands } from '../../src/proxy/ipvs/cleanup.js';
import * as ipvs from '../../src/proxy/ipvs/proxier.js';
import { parse as parseIptables, tablesOf } from '../../src/ruleset/iptables/parse.js';
import { formatIpsetSave, parseIpsetSave, parseIpvsState } from '../../src/ruleset/ipvs/index.js';
import type { IpvsState } from '../../src/ruleset/ipvs/index.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';
import { compileOptions, listScenarios, loadScenario } from '../helpers/scenarios.js';

const enabled = canUseNetns(['ip', 'ipset', 'iptables-restore', 'ip6tables-restore']);
const created = new Set<string>();

function run(ns: string, args: readonly string[], input?: string): string {
  return execFileSync('ip', ['netns', 'exec', ns, ...args], {
    input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function succeeds(ns: string, args: readonly string[], input?: string): boolean {
  try {
    run(ns, args, input);
    return true;
  } catch {
    return false;
  }
}

function withNetns<T>(f: (ns: string) => T): T {
  const ns = testNetnsName();
  execFileSync('ip', ['netns', 'add', ns]);
  created.add(ns);
  try {
    return f(ns);
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
    created.delete(ns);
  }
}

/** Per kube chain: (target, match-set names, -s) of each rule, as upstream's ipvs tests compare. */
function reduced(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const t of tablesOf(parseIptables(text))) {
    for (const c of t.chains) {
      if (!c.name.startsWith('KUBE-')) continue;
      out.set(`${t.name}/${c.name}`, c.rules.map((r) => {
        const at = (flag: string) => r.args.flatMap((x, i) => (x === flag ? [r.args[i + 1]] : []));
        return [at('-j').join(), at('--match-set').join('+'), at('-s').join()].join(' ');
      }));
    }
  }
  return out;
}

function hasIpvsMatch(ns: string): boolean {
  return succeeds(ns, ['iptables-restore', '--noflush'], '*filter\n:KDP-PROBE - [0:0]\n' +
    '-A KDP-PROBE -m ipvs --vaddr 10.0.0.1 --vproto tcp --vport 1 -j DROP\nCOMMIT\n');
}

/** linkCommands as one restore input (same rules, one exec instead of twenty). */
function linkRestore(family: 'IPv4' | 'IPv6'): string {
  const cmds = linkCommands(family);
  return ['nat', 'filter'].map((table) => [
    `*${table}`,
    ...cmds.filter((c) => c[2] === table && c[3] === '-N').map((c) => `:${c[4]} - [0:0]`),
    ...cmds.filter((c) => c[2] === table && c[3] === '-I')
      .map((c) => `-I ${c[4]} -m comment --comment "${c[8]}" -j ${c[10]}`),
    'COMMIT',
  ].join('\n')).join('\n') + '\n';
}

/** Applies a whole ipvs state (minus IPVS itself) the way kube-proxy orders the work. */
function apply(ns: string, state: IpvsState, family: 'IPv4' | 'IPv6'): string {
  const bin = family === 'IPv6' ? 'ip6tables' : 'iptables';
  // A kernel without the dummy module gets a bridge instead: only its addresses matter here.
  if (!succeeds(ns, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'dummy'])) {
    run(ns, ['ip', 'link', 'add', 'kube-ipvs0', 'type', 'bridge']);
  }
  for (const a of state.dummyAddresses) run(ns, ['ip', 'addr', 'add', a, 'dev', 'kube-ipvs0']);
  run(ns, ['ipset', 'restore'], formatIpsetSave(state.ipsets));
  run(ns, [`${bin}-restore`, '--noflush'], linkRestore(family));
  const restore = hasIpvsMatch(ns) ? state.iptables
    : state.iptables.split('\n').filter((l) => !l.includes(' -m ipvs ')).join('\n');
  run(ns, [`${bin}-restore`, '--noflush'], restore);
  return restore;
}

describe.skipIf(!enabled)('ipvs artifacts apply in a throwaway netns', () => {
  afterAll(() => {
    for (const ns of created) execFileSync('ip', ['netns', 'del', ns]);
  });

  for (const name of listScenarios()) {
    it(`${name}: ipsets, iptables rules and kube-ipvs0 addresses read back as compiled`, () => {
      const s = loadScenario(name);
      const state = parseIpvsState(compileWith(ipvs, compileOptions(s, 'ipvs')));
      const family = s.node.ips[0]?.includes(':') ? 'IPv6' : 'IPv4';
      withNetns((ns) => {
        const restore = apply(ns, state, family);
        if (restore !== state.iptables) console.warn(`${name}: no xt_ipvs, -m ipvs lines skipped`);
        const saved = parseIpsetSave(run(ns, ['ipset', 'save']));
        const norm = (v: string) => v.replace(/\/(32|128)$/, '');
        for (const set of state.ipsets) {
          const got = saved.find((x) => x.name === set.name);
          expect(got?.type, set.name).toBe(set.type);
          expect(got!.entries.map((e) => norm(e.value)).sort())
            .toEqual(set.entries.map((e) => norm(e.value)).sort());
        }
        const dump = run(ns, [family === 'IPv6' ? 'ip6tables-save' : 'iptables-save']);
        const got = reduced(dump);
        for (const [chain, rules] of reduced(restore)) expect(got.get(chain), chain).toEqual(rules);
        expect(dump).toContain('-A PREROUTING -m comment --comment "kubernetes service portals"' +
          ' -j KUBE-SERVICES');
        const addrs = run(ns, ['ip', '-o', 'addr', 'show', 'dev', 'kube-ipvs0']).split('\n')
          .map((l) => /inet6? (\S+)/.exec(l)?.[1]).filter((a): a is string => a !== undefined);
        expect(addrs.filter((a) => !a.startsWith('fe80:')).sort())
          .toEqual([...state.dummyAddresses].sort());
      });
    });
  }

  it('the cleanup commands remove every chain, set and the dummy device', () => {
    const s = loadScenario(listScenarios()[0]!);
    const state = parseIpvsState(compileWith(ipvs, compileOptions(s, 'ipvs')));
    withNetns((ns) => {
      apply(ns, state, 'IPv4');
      for (const cmd of cleanupCommands()) {
        if (cmd[0] !== 'ipvsadm') succeeds(ns, cmd); // no ipvsadm / IP_VS on this host
      }
      expect(run(ns, ['ipset', 'list', '-n']).trim()).toBe('');
      expect(run(ns, ['iptables-save'])).not.toContain('KUBE-');
      expect(succeeds(ns, ['ip', 'link', 'show', 'kube-ipvs0'])).toBe(false);
    });
  });
});
