// A two-node netns lab for tests: topology + one netns runtime per node, in a temp data dir,
// removed by `close()` (cleanupHost over the lab's state file and prefix).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec, type HostExec } from '../../src/host/exec.js';
import { HostStateFile } from '../../src/host/state.js';
import { buildTopology, clusterId, type Topology } from '../../src/host/topology.js';
import { buildNetnsRuntime, ipamDirFor } from '../../src/kubelet/runtime-netns.js';
import type { Runtime, RuntimePodStatus } from '../../src/kubelet/runtime.js';

export interface LabNode {
  readonly name: string;
  readonly ip: string;
  readonly podCIDR: string;
  readonly runtime: Runtime;
}

export interface NetnsLab {
  readonly exec: HostExec;
  readonly topo: Topology;
  readonly dir: string;
  readonly statePath: string;
  readonly nodes: LabNode[];
  close(): Promise<void>;
}

export async function startNetnsLab(count = 2): Promise<NetnsLab> {
  const exec = buildHostExec();
  const dir = mkdtempSync(join(tmpdir(), 'kdp-lab-'));
  const statePath = join(dir, 'host-state.json');
  const id = clusterId(dir);
  const state = new HostStateFile(statePath, `kdp-${id}`);
  const topo = buildTopology({ exec, state, id });
  await topo.ensureUnderlay();
  const nodes: LabNode[] = [];
  for (let i = 0; i < count; i++) {
    const name = `n${i + 1}`;
    const ip = `172.18.0.${i + 2}`;
    await topo.ensureNodeNetns({ name, ip });
    const runtime = buildNetnsRuntime({
      exec, state, prefix: topo.prefix, nodeNetns: topo.nodeNetns(name), ipamDir: ipamDirFor(dir, name),
    });
    nodes.push({ name, ip, podCIDR: `10.244.${i}.0/24`, runtime });
  }
  for (const n of nodes) {
    await topo.syncRoutes(n.name, nodes.filter((p) => p !== n).map((p) => ({ ips: [p.ip], podCIDRs: [p.podCIDR] })));
  }
  return {
    exec, topo, dir, statePath, nodes,
    async close() {
      for (const n of nodes) await n.runtime.close();
      await state.settled(); // the coalesced state write must land before cleanup reads it
      await cleanupHost(exec, statePath, topo.prefix);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function echoPod(name: string, ports: Array<{ containerPort: number; protocol?: string }>): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}-${Math.random().toString(16).slice(2, 8)}` },
    spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports }] },
  } as Pod;
}

/** Runs the pod and resolves once every container is ready. */
export async function runReady(node: LabNode, pod: Pod): Promise<RuntimePodStatus> {
  await node.runtime.runPod(pod, { podCIDRs: [node.podCIDR] });
  for (;;) {
    const st = node.runtime.podStatus(pod.metadata.uid!)!;
    if (st.containers.every((c) => c.ready)) return st;
    if (st.containers.some((c) => c.state === 'exited')) {
      throw new Error(`pod ${pod.metadata.name} exited: ${node.runtime.logs(pod.metadata.uid!, 'echo')}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
