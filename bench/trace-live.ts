// Live trace round trip (root): builds the live lab of rules/02-multi-port (node, world, pods in
// network namespaces, one prober each), applies its iptables golden, and measures
//   - lab build time (namespaces, links, addresses, probers listening),
//   - probe round-trip time per protocol through the node's DNAT (TCP, UDP to the DNS service;
//     ICMP to a remote pod, which includes a `ping` process start), as the prober reports it,
//   - one fidelity flow check (conntrack flush + probes until both endpoints are seen).
// Figures are wall time on whatever the machine is doing; CPU of this process is printed too
// (the probers are separate processes). Probes run one at a time.
//   node bin/run-ts.js bench/trace-live.ts [probes=200]

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYAML } from 'yaml';
import { buildHostExec } from '../src/host/exec.js';
import { type FidelityScenario, planFlows, scenarioLabPlan } from '../src/trace/live/fidelity.js';
import { buildLab } from '../src/trace/live/lab.js';
import { type ProbeSpec, startProber } from '../src/trace/live/prober.js';
import { percentile, report } from './lib-bench.js';

if (process.getuid?.() !== 0) {
  console.log('trace-live: needs root (network namespaces); skipped');
  process.exit(0);
}

const PROBES = Number(process.argv[2] ?? 200);
const dir = resolve(import.meta.dirname, '../rules/02-multi-port');
const yaml = <T>(file: string) => parseYAML(readFileSync(join(dir, file), 'utf8')) as T;
const node = yaml<{ ips: string[]; podCIDRs: string[] }>('node.yaml');
const scenario: FidelityScenario = {
  name: '02-multi-port', nodeIPs: node.ips, podCIDRs: node.podCIDRs,
  rules: { iptables: readFileSync(join(dir, 'iptables.golden'), 'utf8') },
  flows: yaml<{ flows: FidelityScenario['flows'] }>('flows.yaml').flows,
};

const exec = buildHostExec();
const planned = planFlows(scenario, []);
const cpu0 = process.cpuUsage();
let t = performance.now();
const prefix = `kdp-t-${randomBytes(3).toString('hex')}`;
const lab = await buildLab(exec, scenarioLabPlan(scenario, planned, prefix));
const buildMs = performance.now() - t;
try {
  t = performance.now();
  await lab.applyRules('iptables', scenario.rules.iptables!);
  const applyMs = performance.now() - t;

  // rttMs: as the prober measured it in its namespace; caller: lab.probe() as its caller sees
  // it (adds the JSON-line round trip to the prober process).
  const measure = async (spec: ProbeSpec & { source: string }, n: number) => {
    const rtts: number[] = [];
    const caller: number[] = [];
    let failed = 0;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const o = await lab.probe({ timeoutMs: 2000, ...spec });
      caller.push(performance.now() - t0);
      if (o.outcome === 'reply') rtts.push(o.rttMs);
      else failed++;
    }
    return { sorted: rtts.sort((a, b) => a - b), caller: caller.sort((a, b) => a - b), failed };
  };
  const svc = { source: '10.244.0.5', destination: '10.96.0.10', port: 53 };
  const runs = {
    tcp: await measure({ protocol: 'tcp', ...svc }, PROBES),
    udp: await measure({ protocol: 'udp', ...svc }, PROBES),
    icmp: await measure({ protocol: 'icmp', source: '10.244.0.5', destination: '10.244.2.3' },
      Math.min(20, PROBES)),
  };

  t = performance.now();
  const flow = planned.find((p) => p.proto === 'tcp')!;
  let probes = 0;
  const seen = new Set<string>();
  await lab.flushConntrack('ipv4');
  while (seen.size < 2 && probes < 40) {
    const o = await lab.probe({
      protocol: 'tcp', source: flow.src, destination: flow.dst.ip, port: flow.dst.port,
    });
    probes++;
    if (o.servedBy) seen.add(o.servedBy);
  }
  const flowMs = performance.now() - t;
  const cpu = process.cpuUsage(cpu0);
  // One more prober in the node namespace: the share of the build that is Node's start.
  t = performance.now();
  const extra = await startProber(lab.plan.nodeNetns, { name: 'extra' });
  const proberStartMs = performance.now() - t;
  await extra.close();

  report('live lab build (02-multi-port: node, world, 2 pods, 4 probers)', buildMs, 'ms',
    { op: '<=', value: 3000 });
  report('live prober start (one Node process via ip netns exec)', proberStartMs, 'ms');
  report('live lab apply iptables golden + conntrack flush', applyMs, 'ms');
  for (const [proto, r] of Object.entries(runs)) {
    report(`live probe round trip ${proto} p50 (${r.sorted.length} replies, ${r.failed} failed)`,
      percentile(r.sorted, 50), 'ms', proto === 'icmp' ? undefined : { op: '<=', value: 5 });
    report(`live probe round trip ${proto} p99`, percentile(r.sorted, 99), 'ms');
    report(`live probe as the caller sees it ${proto} p50`, percentile(r.caller, 50), 'ms');
  }
  report(`live fidelity flow check (flush + ${probes} probes until both endpoints seen)`,
    flowMs, 'ms');
  report('bench process CPU (user+system; probers excluded)', (cpu.user + cpu.system) / 1000, 'ms');
} finally {
  await lab.close();
}
