// A proxy mode is one registry entry (src/proxy/registry.ts). A toy fourth mode, registered
// here and nowhere else, must be taken up by everything that works with rule tables: the
// configuration, the compiler, the in-memory and kernel appliers, the dump check, the offline
// tracer and the diff (detection, semantic and behaviour views). And no file outside a mode's
// folder and the registry may switch on a mode's name (that is what would keep a new mode out).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDiff } from '../../src/diff/diff.js';
import { detectFormat } from '../../src/diff/load.js';
import type { LoadedTable } from '../../src/diff/types.js';
import { kdpError } from '../../src/errors.js';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { buildMemoryApplier } from '../../src/proxy/applier.js';
import type { Proxier, ProxierConfig, SyncResult } from '../../src/proxy/backend.js';
import { compileOffline } from '../../src/proxy/compile.js';
import { parseKubeProxyConfiguration } from '../../src/proxy/config.js';
import { buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { cleanupOtherModes } from '../../src/proxy/kernel-leftovers.js';
import {
  checkRuleText, proxyModeNames, registerProxyMode, type ProxyMode, type ProxyModeEntry,
} from '../../src/proxy/registry.js';
import { parseMode } from '../../src/cli/commands/rules-compile.js';
import { traceOffline } from '../../src/trace/offline.js';
import { withDst } from '../../src/trace/packet.js';
import { importsOf, sourceFiles } from '../architecture/source-imports.js';

const TOY = 'toy' as ProxyMode;

// The toy format: `toy SVC VIP:PORT/PROTO -> IP:PORT` lines, one per service port.
const LINE = /^toy (\S+) ([\d.]+):(\d+)\/(tcp|udp) -> ([\d.]+):(\d+)$/;

function parseToy(text: string): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const m = LINE.exec(line);
    if (!m) throw kdpError('KDP_PARSE', `line ${i + 1}: not a toy rule: ${line}`);
    out.push(m);
  });
  return out;
}

const toyProxier = (config: ProxierConfig): Proxier => ({
  mode: TOY,
  config,
  sync(input) {
    const lines: string[] = [];
    for (const [key, sp] of input.services) {
      const ep = input.endpoints.get(key)?.find((e) => e.ready);
      if (ep) lines.push(`toy ${sp.name.namespace}/${sp.name.name} ${sp.clusterIP}:${sp.port}/${sp.protocol.toLowerCase()} -> ${ep.ip}:${ep.port}\n`);
    }
    return { full: true, artifacts: [{ kind: 'toy', text: lines.join('') }], origins: new Map() };
  },
  commit() {},
});

const toyMode: ProxyModeEntry = {
  name: TOY,
  loadBackend: async () => ({ buildProxier: toyProxier }),
  configSection: 'toy',
  masqueradeSection: 'iptables',
  defaultNodePortAddresses: [],
  routeLocalnet: false,
  syncFailureMetric: { name: 'kubeproxy_sync_proxy_rules_toy_failures_total', help: 'toy failures' },
  canonicalByDefault: false,
  memoryTable() {
    let held = '';
    return {
      apply(result) {
        const next = result.artifacts.map((a) => a.text).join('');
        parseToy(next); // refused before anything is held
        held = next;
      },
      dump: () => held,
    };
  },
  check: (text) => { parseToy(text); },
  isEmpty: (text) => text.trim() === '',
  traceFilter: (rules) => {
    const rs = parseToy(rules);
    return {
      mode: TOY,
      runHook(hook, worlds, env) {
        if (hook !== 'PREROUTING' && hook !== 'OUTPUT') return [...worlds];
        for (const w of worlds) {
          const m = rs.find((r) => r[2] === w.pkt.dst && Number(r[3]) === w.pkt.dport && r[4] === w.pkt.proto);
          if (!m || w.dnat) continue;
          w.hops.push({ where: env.where, stage: 'toy', text: m[0], nat: `${m[2]}:${m[3]} → ${m[5]}:${m[6]}` });
          w.pkt = withDst(w.pkt, m[5]!, Number(m[6]));
          w.dnat = true;
        }
        return [...worlds];
      },
    };
  },
  diff: {
    claimsLine: (line) => line.startsWith('toy '),
    parse(table, facts) {
      const lines: string[] = [];
      for (const m of parseToy(table.text)) {
        const group = new Map([[`${m[4]} ${m[2]}:${m[3]}`, `${m[5]}:${m[6]}`]]);
        facts.groups.set(m[1]!, group);
        facts.targets.push({ kind: 'cluster', ip: m[2]!, port: Number(m[3]), proto: m[4] as 'tcp' });
        lines.push(m[0]);
      }
      return lines;
    },
    sections: (text) => [{ family: '', text }],
    familyFromAddresses: false,
    reparseWhole: false,
    emptyText: '',
  },
  kernel: {
    liveTrace: 'nft',
    dump: async (exec, netns) => (await exec.run('toyctl', ['show'], { netns })).stdout,
    apply: async (exec, netns, _family, input) => { await exec.run('toyctl', ['load'], { netns, input }); },
    restore: async (exec, netns, _family, want) => { await exec.run('toyctl', ['replace'], { netns, input: want }); },
    drift: (want, have) => (want === have ? [] : [`toy rules differ: want ${JSON.stringify(want)}`]),
    load: async (exec, netns, _family, text) => { await exec.run('toyctl', ['load'], { netns, input: text }); },
    cleanupLeftovers: async (exec, netns) => { await exec.run('toyctl', ['flush'], { netns }); return []; },
  },
};

const RULES_A = 'toy default/web 10.96.0.10:80/tcp -> 10.244.1.5:8080\n';
const RULES_B = 'toy default/web 10.96.0.10:80/tcp -> 10.244.2.7:8080\n';
const resultOf = (text: string): SyncResult =>
  ({ full: true, artifacts: [{ kind: 'toy', text }], origins: new Map() });

describe('a proxy mode is one registry entry', () => {
  let unregister: () => void;
  beforeAll(() => { unregister = registerProxyMode(toyMode); });
  afterAll(() => unregister());

  it('is a mode the CLI and the configuration accept, with its own section', () => {
    expect(proxyModeNames()).toEqual(['iptables', 'nftables', 'ipvs', 'toy']);
    expect(parseMode('toy')).toBe('toy');
    const s = parseKubeProxyConfiguration('mode: toy\ntoy:\n  syncPeriod: 7s\n');
    expect(s.mode).toBe('toy');
    expect(s.syncPeriodMs).toBe(7000);
    expect(() => registerProxyMode(toyMode)).toThrow(/registered already/);
  });

  it('compiles with its own backend', async () => {
    const objects = [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
        spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] } },
      { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
        metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4', ports: [{ port: 8080, protocol: 'TCP', name: '' }],
        endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true } }] },
    ];
    const text = await compileOffline({ objects: objects as never, mode: TOY, nodeName: 'n1', nodeIPs: ['172.18.0.2'] });
    expect(text).toBe('toy default/web 10.96.0.10:80/tcp -> 10.244.1.5:8080\n');
  });

  it('the in-memory applier holds its fake, which refuses bad rules and keeps the old', async () => {
    const a = buildMemoryApplier(TOY);
    await a.apply('IPv4', resultOf(RULES_A));
    expect(await a.dump('IPv4')).toBe(RULES_A);
    await expect(a.apply('IPv4', resultOf('toy broken\n'))).rejects.toThrow(/not a toy rule/);
    expect(await a.dump('IPv4')).toBe(RULES_A);
    expect(await a.dump('IPv6')).toBe('');
  });

  it('the kernel applier runs its commands and judges drift with its shadow', async () => {
    const exec = buildRecordingExec();
    exec.on((c) => c.args[0] === 'show', { stdout: 'toy tampered\n', stderr: '' });
    const k = buildKernelApplier(exec, 'kdp-t-n1', TOY);
    await k.apply('IPv4', resultOf(RULES_A));
    expect(exec.lines()).toContain('[netns kdp-t-n1] toyctl load');
    expect(exec.calls.find((c) => c.args[0] === 'load')?.input).toBe(RULES_A);
    expect(await k.drift!('IPv4')).toEqual([`toy rules differ: want ${JSON.stringify(RULES_A)}`]);
    await k.restore!('IPv4');
    expect(exec.calls.at(-1)).toMatchObject({ args: ['replace'], input: RULES_A });
    // Another mode's kube-proxy cleans the toy's leftovers; the toy cleans the others'.
    await cleanupOtherModes(exec, 'kdp-t-n1', 'iptables');
    expect(exec.lines()).toContain('[netns kdp-t-n1] toyctl flush');
  });

  it('the dump check and the offline tracer use its entry', () => {
    expect(() => checkRuleText(TOY, 'toy nonsense')).toThrow(/line 1: not a toy rule/);
    expect(() => checkRuleText(TOY, '')).toThrow(/empty input/);
    const r = traceOffline({ rules: RULES_A, mode: TOY, nodeIPs: ['172.18.0.2'], src: '172.18.0.9',
      dst: '10.96.0.10', dport: 80, proto: 'tcp' });
    expect(r.hops.some((h) => h.stage === 'toy' && h.nat === '10.96.0.10:80 → 10.244.1.5:8080')).toBe(true);
    expect(r.destinations.map((d) => d.destination)).toEqual(['10.244.1.5:8080']);
  });

  it('the diff detects its dumps and compares them by meaning and by behaviour', () => {
    expect(detectFormat(RULES_A, 'a')).toBe('toy');
    const side = (label: string, text: string): LoadedTable => ({ label, format: TOY, text });
    const req = { json: false, colour: false, nodeIPs: ['172.18.0.2'], podCIDRs: ['10.244.0.0/24'] };
    const semantic = runDiff(side('a', RULES_A), side('b', RULES_B), { ...req, view: 'semantic' });
    expect(semantic.status).toBe(1);
    expect(semantic.text).toContain('10.244.2.7:8080');
    const same = runDiff(side('a', RULES_A), side('b', RULES_A), { ...req, view: 'semantic' });
    expect(same.status).toBe(0);
    const behaviour = runDiff(side('a', RULES_A), side('b', RULES_B), { ...req, view: 'behaviour' });
    expect(behaviour.status).toBe(1);
    expect(behaviour.text).toContain('10.244.2.7:8080');
  });
});

describe('no file outside a mode\'s folder and the registry switches on mode names', () => {
  const NAMES = '(?:iptables|nftables|ipvs)';
  // A comparison with a mode's name, a `case`, a ternary on one, a table keyed by every mode
  // (Record<ProxyMode, …> must grow with each mode; Partial<Record<…>> is data per mode), or
  // a union of mode names.
  const SWITCH = new RegExp([
    `(?:===|!==)\\s*'${NAMES}'`, `'${NAMES}'\\s*(?:===|!==)`, `\\bcase\\s+'${NAMES}'`,
    `(?<!Partial<)Record<(?:ProxyMode|DiffFormat|TraceMode|LabMode)\\b`,
    `'${NAMES}'\\s*\\|\\s*'${NAMES}'`, `^\\s*${NAMES}:\\s*\\(\\)\\s*=>`,
  ].join('|'), 'm');
  const ALLOWED = /^src\/proxy\/(?:iptables|nftables|ipvs)\/|^src\/proxy\/registry\.ts$/;

  const offenders = (files: readonly { path: string; text: string }[]) =>
    files.filter((f) => !ALLOWED.test(f.path)).flatMap((f) => f.text.split('\n')
      .map((line, i) => ({ line, at: `${f.path}:${i + 1}` }))
      .filter(({ line }) => SWITCH.test(line) && !line.trimStart().startsWith('//') &&
        !line.trimStart().startsWith('*'))
      .map(({ line, at }) => `${at}: ${line.trim()}`));

  it('holds for the whole tree', () => {
    expect(offenders(sourceFiles())).toEqual([]);
  });

  it('the check sees each kind of switch (so it can fail)', () => {
    const bad = [
      "if (mode === 'nftables') x();", "case 'ipvs': return y;", "const t: Record<ProxyMode, string> = {};",
      "type M = 'iptables' | 'nftables';", "  iptables: () => import('./x.js'),",
    ];
    const files = bad.map((text, i) => ({ path: `src/diff/x${i}.ts`, text }));
    expect(offenders(files)).toHaveLength(bad.length);
    expect(offenders([{ path: 'src/proxy/ipvs/x.ts', text: bad[0]! }])).toEqual([]);
    expect(offenders([{ path: 'src/trace/live/x.ts', text: 'const r: Partial<Record<LabMode, string>> = {};' }])).toEqual([]);
  });

  it('the registry is where modes are listed: every built-in mode has its folder\'s entry', () => {
    const registry = sourceFiles().find((f) => f.path === 'src/proxy/registry.ts')!;
    const entries = importsOf(registry).filter((i) => /^src\/proxy\/[a-z]+\/mode\.ts$/.test(i));
    expect(entries).toEqual(['src/proxy/iptables/mode.ts', 'src/proxy/nftables/mode.ts', 'src/proxy/ipvs/mode.ts']);
  });
});
