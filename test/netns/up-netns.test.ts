import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { readClusterInfo } from '../../src/cluster/cluster-file.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { listNetns } from '../../src/host/netns.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { get as httpsGet } from 'node:https';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const ours = async (prefix: string) => (await listNetns(exec)).filter((n) => n.startsWith(`${prefix}-`));

/** Pids whose command line mentions `text` (the cluster's data dir). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(text); } catch { return false; }
  }).map(Number);
}

function webPod(name: string, node: string): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
  } as Pod;
}

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'nft', 'nsenter']))('kdp up in netns mode', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-upn-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster | undefined;
  const client = () => cluster!.client;

  beforeAll(async () => {
    cluster = await startCluster({
      paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns', progress: () => {},
    });
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    cluster = undefined;
    await cleanupHost(exec, paths.hostState, prefix);
  }, 30_000);

  it('records netns mode and makes one namespace per node plus the underlay', async () => {
    expect(readClusterInfo(paths).mode).toBe('netns');
    // Pod namespaces (`-p-`: the DNS addon's pods by now) are the pods' own, not the nodes'.
    const nodesAndUnderlay = (await ours(prefix)).filter((n) => !n.startsWith(`${prefix}-p-`));
    expect(nodesAndUnderlay.sort()).toEqual([`${prefix}-n1`, `${prefix}-n2`, `${prefix}-underlay`]);
  });

  it('nodes report the netns runtime and this kernel in status.nodeInfo', async () => {
    const n = await client().get<Node>({ group: '', version: 'v1', resource: 'nodes' }, 'n1');
    expect(n.status?.nodeInfo).toMatchObject({ osImage: 'kdp netns node (Linux network namespaces)',
      kernelVersion: release() });
  });

  it('pods become Ready and a ClusterIP reaches them from a node', async () => {
    await client().create(PODS, webPod('web-1', 'n1'));
    await client().create(PODS, webPod('web-2', 'n2'));
    await client().create(SVC, {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
      spec: { clusterIP: '10.96.0.80', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    await waitFor(async () => {
      const pods = (await client().list<Pod>(PODS)).items;
      return pods.every((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    }, 30_000, 'both pods Ready');
    const seen = await waitFor(async () => {
      const who = seenPod(await probe(exec, `${prefix}-n1`, 'tcp', '10.96.0.80', 80).catch(() => ''));
      return who?.startsWith('web-') ? who : undefined;
    }, 30_000, 'the ClusterIP to answer');
    expect(['web-1', 'web-2']).toContain(seen);
  }, 60_000);

  it('each kube-proxy serves upstream\'s metrics on 127.0.0.1:10249 in its node; promtool accepts them; a sync counts', async () => {
    const scrape = async (node: string) => (await exec.run(process.execPath, ['-e', `
      require('node:http').get('http://127.0.0.1:10249/metrics', (r) => {
        let b = ''; r.on('data', (d) => b += d); r.on('end', () => process.stdout.write(b));
      }).on('error', (e) => { console.error(e.message); process.exit(1); });`], { netns: `${prefix}-${node}`, timeoutMs: 10_000 })).stdout;
    const count = (text: string) => Number(/^kubeproxy_sync_proxy_rules_duration_seconds_count (\d+)$/m.exec(text)?.[1]);
    const before = new Map<string, number>();
    for (const node of ['n1', 'n2']) {
      const text = await scrape(node);
      for (const name of ['kubeproxy_sync_proxy_rules_duration_seconds_bucket', 'kubeproxy_sync_full_proxy_rules_duration_seconds',
        'kubeproxy_sync_proxy_rules_last_timestamp_seconds', 'kubeproxy_network_programming_duration_seconds_bucket',
        'kubeproxy_sync_proxy_rules_service_changes_total', 'kubeproxy_sync_proxy_rules_endpoint_changes_total']) {
        expect(text).toContain(name);
      }
      expect(count(text)).toBeGreaterThan(0);
      before.set(node, count(text));
      const check = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        p.stdout.on('data', (d) => { out += d; });
        p.stderr.on('data', (d) => { out += d; });
        p.on('close', (code) => resolve({ code, out }));
        p.stdin.end(text);
      });
      expect(check).toEqual({ code: 0, out: '' });
    }
    // One more endpoint: every node's kube-proxy syncs again.
    await client().create(PODS, webPod('web-3', 'n2'));
    for (const node of ['n1', 'n2']) {
      await waitFor(async () => count(await scrape(node)) > before.get(node)!, 30_000, `${node} to sync again`);
    }
    await client().delete(PODS, 'web-3', { gracePeriodSeconds: 0 });
  });

  it('a pod reaches the API server through the kubernetes Service (10.96.0.1:443)', async () => {
    const uid = (await client().get<Pod>(PODS, 'web-1')).metadata.uid!;
    const { stdout } = await exec.run(process.execPath, ['-e', `
      require('node:https').get({ host: '10.96.0.1', port: 443, path: '/version', rejectUnauthorized: false }, (r) => {
        let b = ''; r.on('data', (d) => b += d); r.on('end', () => console.log(r.statusCode, b));
      }).on('error', (e) => console.log('error', e.message));`], { netns: podNetnsName(prefix, uid), timeoutMs: 10_000 });
    expect(stdout).toMatch(/^200 \{/);
    expect(JSON.parse(stdout.slice(4)).gitVersion).toMatch(/^v1\./);
    // The tracer says so too: the Service DNATs to the gateway, where kdp listens as the API server.
    const t = JSON.parse((await kdp('trace', '--data-dir', paths.root, '-o', 'json', 'web-1', '10.96.0.1:443')).out);
    expect(t.verdict).toBe('ACCEPT');
    expect(t.hops.at(-1).text).toMatch(/^172\.18\.0\.1:\d+ is the API server/);
  });

  it('pods/proxy and services/proxy reach pods inside their node\'s namespace', async () => {
    const pod = await cluster!.client.get<Pod>(PODS, 'web-1');
    const url = `${cluster!.url}/api/v1/namespaces/default/pods/web-1:8080/proxy/hello`;
    const get = (u: string) => new Promise<{ code?: number; body: string }>((resolve, reject) => {
      const info = readClusterInfo(paths);
      const kc = readFileSync(info.kubeconfig, 'utf8');
      const token = /token: (\S+)/.exec(kc)?.[1];
      httpsGet(u, { rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (r) => {
        let b = ''; r.on('data', (d) => b += d); r.on('end', () => resolve({ code: r.statusCode, body: b }));
      }).on('error', reject);
    });
    const r = await get(url);
    expect(r.code).toBe(200);
    expect(r.body).toContain('pod=web-1 ');
    expect(pod.spec?.nodeName).toBe('n1');
    const svc = await get(`${cluster!.url}/api/v1/namespaces/default/services/web:80/proxy/`);
    expect(svc.body).toMatch(/pod=web-[12] /);
    const refused = await get(`${cluster!.url}/api/v1/namespaces/default/pods/web-1:9999/proxy/`);
    expect(refused.code).toBe(503);
    expect(refused.body).toContain(`error trying to reach service: dial tcp ${pod.status!.podIP}:9999: connect: connection refused`);
  });

  it('kdp netns names a pod\'s and a node\'s namespace; kdp sh runs a command in it', async () => {
    const uid = (await client().get<Pod>(PODS, 'web-1')).metadata.uid!;
    const pod = await kdp('netns', '--data-dir', paths.root, 'web-1');
    expect(pod.out.trim()).toMatch(new RegExp(`^${prefix}-p-[0-9a-f]{10}$`));
    expect(await ours(prefix)).toContain(pod.out.trim());
    expect(uid).toBeTruthy();
    expect((await kdp('netns', '--data-dir', paths.root, 'n2')).out).toBe(`${prefix}-n2\n`);
    const missing = await kdp('netns', '--data-dir', paths.root, 'pod/nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('pods "nope" not found');
    const ip = (await client().get<Pod>(PODS, 'web-1')).status!.podIP!;
    const bin = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [bin, 'sh', '--data-dir', paths.root, 'web-1', '--', 'ip', '-o', '-4',
        'addr', 'show', 'dev', 'eth0'], (e, stdout, stderr) => (e ? reject(new Error(stderr)) : resolve(stdout)));
    });
    expect(out).toContain(`inet ${ip}/`);
  }, 30_000);

  it('deleting a pod removes it from the kernel rules and its namespace goes', async () => {
    const ip = (await client().get<Pod>(PODS, 'web-2')).status!.podIP!;
    const before = (await ours(prefix)).filter((n) => n.includes('-p-')).length;
    await client().delete(PODS, 'web-2', { gracePeriodSeconds: 0 });
    await waitFor(async () => {
      const nft = (await exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: `${prefix}-n1` })).stdout;
      return !nft.includes(ip);
    }, 30_000, 'web-2 to leave n1 rules');
    await waitFor(async () => (await ours(prefix)).filter((n) => n.includes('-p-')).length === before - 1,
      30_000, 'the pod namespace to go');
    for (let i = 0; i < 2; i++) expect(seenPod(await probe(exec, `${prefix}-n1`, 'tcp', '10.96.0.80', 80))).toBe('web-1');
  }, 60_000);

  it('closing the cluster removes every namespace and workload process', async () => {
    await cluster!.close();
    cluster = undefined;
    expect(await ours(prefix)).toEqual([]);
    expect(existsSync(paths.hostState)).toBe(false);
  }, 30_000);
});

describe.runIf(canUseNetns(['ip', 'iptables-restore', 'nft', 'nsenter']))('kdp down after a crash', () => {
  it('SIGKILL of kdp up mid-start, then kdp down, leaves no namespace or process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-crash-'));
    const paths = dataDirPaths(dir);
    const prefix = hostPrefixFor(paths);
    const bin = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'up', '--nodes', '2', '--port', '0', '--data-dir', dir],
      { stdio: 'ignore' });
    try {
      await waitFor(async () => (await ours(prefix)).includes(`${prefix}-n1`) || undefined, 30_000, 'node n1 namespace');
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      expect((await ours(prefix)).length).toBeGreaterThan(0);
      const down = await kdp('down', '--data-dir', dir);
      expect(down.code).toBe(0);
      expect(await ours(prefix)).toEqual([]);
      expect(processesMentioning(dir)).toEqual([]);
      expect(existsSync(dir)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      await cleanupHost(exec, paths.hostState, prefix);
    }
  }, 60_000);
});
