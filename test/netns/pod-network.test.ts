import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupHost } from '../../src/host/cleanup.js';
import { listNetns } from '../../src/host/netns.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { echoPod, runReady, startNetnsLab, type NetnsLab } from '../helpers/netns-lab.js';
import { probe, seenPod, seenSource } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const ECHO = fileURLToPath(new URL('../../bin/kdp-echo.js', import.meta.url));

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'nsenter']))('pods in netns mode', () => {
  let lab: NetnsLab;
  const server = echoPod('server', [{ containerPort: 8080 }, { containerPort: 5353, protocol: 'UDP' }]);
  const client = echoPod('client', []);
  let serverIP = '';
  let clientIP = '';

  beforeAll(async () => {
    lab = await startNetnsLab(2);
    serverIP = (await runReady(lab.nodes[1]!, server)).podIPs[0]!;
    clientIP = (await runReady(lab.nodes[0]!, client)).podIPs[0]!;
  }, 60_000);

  afterAll(async () => {
    await lab?.close();
  }, 30_000);

  it('gives each pod an IP from its node podCIDR', () => {
    expect(serverIP).toMatch(/^10\.244\.1\.\d+$/);
    expect(clientIP).toMatch(/^10\.244\.0\.\d+$/);
  });

  it('brings each pod\'s loopback up (kdp-cni does it in the pod\'s own batch)', async () => {
    for (const pod of [server, client]) {
      const ns = podNetnsName(lab.topo.prefix, pod.metadata.uid!);
      const lo = JSON.parse((await lab.exec.run('ip', ['-n', ns, '-j', 'link', 'show', 'lo'])).stdout);
      expect(lo[0].flags).toContain('UP');
    }
  });

  it('pod to pod across nodes over TCP: the server sees the client pod IP (no NAT)', async () => {
    const ans = await probe(lab.exec, podNetnsName(lab.topo.prefix, client.metadata.uid!), 'tcp', serverIP, 8080);
    expect(seenPod(ans)).toBe('server');
    expect(seenSource(ans)).toBe(clientIP);
  });

  it('pod to pod across nodes over UDP and HTTP keeps the source pod IP', async () => {
    const clientNs = podNetnsName(lab.topo.prefix, client.metadata.uid!);
    expect(seenSource(await probe(lab.exec, clientNs, 'udp', serverIP, 5353))).toBe(clientIP);
    const http = await probe(lab.exec, clientNs, 'http', serverIP, 8080);
    expect(http).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(seenSource(http)).toBe(clientIP);
  });

  it('pod to outside the cluster CIDR is masqueraded to the node IP', async () => {
    // An echo server on the underlay gateway (172.18.0.1) stands for "outside the cluster".
    const outside = spawn('ip', ['netns', 'exec', lab.topo.underlayNetns, process.execPath, ECHO],
      { env: { KDP_POD_NAME: 'outside', KDP_ECHO_PORTS: '9000/TCP' }, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((r) => outside.stdout!.once('data', r));
      const ans = await probe(lab.exec, podNetnsName(lab.topo.prefix, client.metadata.uid!), 'tcp', '172.18.0.1', 9000);
      expect(seenPod(ans)).toBe('outside');
      expect(seenSource(ans)).toBe(lab.nodes[0]!.ip);
    } finally {
      outside.kill('SIGKILL');
    }
  });

  it('a node reaches the pods on itself', async () => {
    const ans = await probe(lab.exec, lab.topo.nodeNetns('n2'), 'tcp', serverIP, 8080);
    expect(seenPod(ans)).toBe('server');
  });

  it('keeps the workload output as container logs', () => {
    expect(lab.nodes[1]!.runtime.logs(server.metadata.uid!, 'echo')).toMatch(/^ready pod=server ports=8080,5353/);
  });

  it('deleting a pod stops its processes and removes its namespace', async () => {
    const uid = client.metadata.uid!;
    const ns = podNetnsName(lab.topo.prefix, uid);
    await lab.nodes[0]!.runtime.killPod(uid);
    expect(await listNetns(lab.exec)).not.toContain(ns);
    expect(lab.nodes[0]!.runtime.podStatus(uid)).toBeUndefined();
  });

  it('host cleanup without the runtime (as after a crash) stops workloads and removes namespaces', async () => {
    const ns = podNetnsName(lab.topo.prefix, server.metadata.uid!);
    const pids = (await lab.exec.run('ip', ['netns', 'pids', ns])).stdout.split('\n').filter(Boolean).map(Number);
    expect(pids.length).toBeGreaterThan(0);
    await cleanupHost(lab.exec, lab.statePath, lab.topo.prefix);
    expect((await listNetns(lab.exec)).filter((n) => n.startsWith(`${lab.topo.prefix}-`))).toEqual([]);
    expect(pids.filter((p) => existsSync(`/proc/${p}/cmdline`) &&
      readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('kdp-echo'))).toEqual([]);
  });
});
