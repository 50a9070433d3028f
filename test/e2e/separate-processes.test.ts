import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/cluster.js';

// Hub and spoke for real: every component in its own process, talking only HTTP to the API
// server; the real kubectl drives a rollout through them.
const run = promisify(execFile);
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.32';
const hasKubectl = existsSync(KUBECTL);
if (!hasKubectl && process.env.CI === 'true') throw new Error(`CI=true but ${KUBECTL} is missing`);
const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));

describe.runIf(hasKubectl)('components as separate processes over HTTP', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-procs-'));
  const cache = mkdtempSync(join(tmpdir(), 'kdp-kc-'));
  const kubeconfig = join(dataDir, 'kubeconfig');
  const procs: ChildProcess[] = [];
  const start = (...args: string[]) => {
    const p = spawn(process.execPath, [KDP, ...args, '--data-dir', dataDir], { stdio: 'ignore' });
    procs.push(p);
  };
  const kubectl = async (...args: string[]) =>
    (await run(KUBECTL, ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args])).stdout;

  beforeAll(async () => {
    start('apiserver', '--port', '0');
    await waitFor(() => existsSync(kubeconfig), 30_000, 'the API server kubeconfig');
    start('controller-manager', '--time-scale', '10');
    start('scheduler', '--time-scale', '10');
    start('node', '--name', 'n1', '--node-ip', '172.18.0.2', '--time-scale', '10');
    start('node', '--name', 'n2', '--node-ip', '172.18.0.3', '--time-scale', '10');
    await waitFor(async () => (await kubectl('get', 'nodes', '--no-headers')).split('\n').filter((l) => / Ready /.test(l)).length === 2,
      60_000, 'two Ready nodes');
  });

  afterAll(async () => {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
  });

  it('publishes cluster-info for kdp node join: kdp apiserver writes it, the controller-manager signs it per token', async () => {
    const made = spawn(process.execPath, [KDP, 'token', 'create', '--print-join-command', '--data-dir', dataDir],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    let line = '';
    made.stdout!.on('data', (d: Buffer) => { line += d; });
    await new Promise((r) => made.once('close', r));
    const server = JSON.parse(await kubectl('config', 'view', '--raw', '-o', 'json')).clusters[0].cluster.server;
    expect(line.trim()).toMatch(new RegExp(`^kdp node join ${server} --token ([a-z0-9]{6})\\.[a-z0-9]{16} ` +
      '--discovery-token-ca-cert-hash sha256:[0-9a-f]{64}$'));
    const id = /--token ([a-z0-9]{6})/.exec(line)![1];
    const cm = await waitFor(async () => {
      const c = JSON.parse(await kubectl('get', 'configmap', 'cluster-info', '-n', 'kube-public', '-o', 'json'));
      return c.data[`jws-kubeconfig-${id}`] ? c : undefined;
    }, 30_000, 'cluster-info signed for the new token');
    expect(cm.data.kubeconfig).toContain(`server: ${server}`);
  });

  it('runs a Deployment, rolls it to a new image, and rolls it back, as kubectl sees it', async () => {
    await kubectl('create', 'deployment', 'web', '--image=kdp/echo:1', '--replicas=3');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    const ips = JSON.parse(await kubectl('get', 'pods', '-l', 'app=web', '-o', 'json')).items
      .map((p: any) => [p.spec.nodeName, p.status.podIP]);
    expect(ips).toHaveLength(3);
    // n1 and n2 register concurrently, so which gets 10.244.0.0/24 is a race: ask each node.
    const cidrs = new Map<string, string>(JSON.parse(await kubectl('get', 'nodes', '-o', 'json')).items
      .map((n: any) => [n.metadata.name, n.spec.podCIDR]));
    for (const [node, ip] of ips) {
      const prefix = cidrs.get(node)!.replace(/0\/24$/, '');
      expect(ip.startsWith(prefix), `${ip} in ${cidrs.get(node)}`).toBe(true);
    }

    await kubectl('set', 'image', 'deployment/web', 'echo=kdp/echo:2');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    const images = async () => JSON.parse(await kubectl('get', 'pods', '-l', 'app=web', '-o', 'json')).items
      .filter((p: any) => !p.metadata.deletionTimestamp).map((p: any) => p.spec.containers[0].image);
    await waitFor(async () => (await images()).every((i: string) => i === 'kdp/echo:2'), 60_000, 'pods on image 2');

    await kubectl('rollout', 'undo', 'deployment/web');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s');
    await waitFor(async () => {
      const all = await images();
      return all.length === 3 && all.every((i: string) => i === 'kdp/echo:1');
    }, 60_000, 'pods back on image 1');
    expect(await kubectl('rollout', 'history', 'deployment/web')).toMatch(/REVISION/);

    await kubectl('scale', 'deployment/web', '--replicas=1');
    await waitFor(async () => (await images()).length === 1, 60_000, 'one pod after scale');
    await kubectl('delete', 'deployment', 'web');
    await waitFor(async () => (await images()).length === 0, 60_000, 'pods gone with the deployment');
  });
});
