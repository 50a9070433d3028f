// Stopping containers: SIGTERM first; a process that ignores it is SIGKILLed after the grace
// period. (Through the netns runtime directly, in a one-node lab.)

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostStateFile } from '../../src/host/state.js';
import { buildNetnsRuntime, ipamDirFor } from '../../src/kubelet/runtime-netns.js';
import type { Runtime } from '../../src/kubelet/runtime.js';
import { waitFor } from '../helpers/cluster.js';
import { echoPod, startNetnsLab, type NetnsLab } from '../helpers/netns-lab.js';
import { canUseNetns } from '../helpers/root.js';

const STUBBORN = `process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
console.log('ready pod=stubborn'); setInterval(() => {}, 1000);`;

describe.runIf(canUseNetns(['ip', 'nsenter']))('netns runtime stop', () => {
  let lab: NetnsLab;
  let stubborn: Runtime;

  beforeAll(async () => {
    lab = await startNetnsLab(1);
    const script = join(lab.dir, 'stubborn.js');
    writeFileSync(script, STUBBORN);
    stubborn = buildNetnsRuntime({
      exec: lab.exec, state: new HostStateFile(lab.statePath, lab.topo.prefix), prefix: lab.topo.prefix,
      nodeNetns: lab.topo.nodeNetns('n1'), ipamDir: ipamDirFor(lab.dir, 'n1'), echoScript: script,
    });
  }, 60_000);

  afterAll(async () => {
    await stubborn?.close();
    await lab?.close();
  }, 30_000);

  const net = () => ({ podCIDRs: [lab.nodes[0]!.podCIDR] });

  it('a workload that exits on SIGTERM stops at once, exit code 0', async () => {
    const pod = echoPod('polite', [{ containerPort: 8080 }]);
    const rt = lab.nodes[0]!.runtime;
    await rt.runPod(pod, net());
    await waitFor(() => rt.podStatus(pod.metadata.uid!)!.containers[0]!.ready, 30_000, 'ready');
    await rt.stopPod!(pod.metadata.uid!, 600_000);
    expect(rt.podStatus(pod.metadata.uid!)!.containers[0]).toMatchObject({ state: 'exited', exitCode: 0 });
    await rt.killPod(pod.metadata.uid!);
  }, 60_000);

  it('a workload that ignores SIGTERM is killed after the grace period (exit code 137)', async () => {
    const pod = echoPod('stubborn', [{ containerPort: 8080 }]);
    await stubborn.runPod(pod, net());
    await waitFor(() => stubborn.podStatus(pod.metadata.uid!)!.containers[0]!.ready, 30_000, 'ready');
    await stubborn.stopPod!(pod.metadata.uid!, 300);
    expect(stubborn.podStatus(pod.metadata.uid!)!.containers[0]).toMatchObject({ state: 'exited', exitCode: 137 });
    expect(stubborn.logs(pod.metadata.uid!, 'echo')).toContain('ignoring SIGTERM');
    await stubborn.killPod(pod.metadata.uid!);
  }, 60_000);
});
