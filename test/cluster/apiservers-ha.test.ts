// `kdp up --etcd 1 --apiservers 2`: this process's API server and one `kdp apiserver` replica on
// the same etcd, behind kdp's TCP balancer on the cluster's address. One history (a write on one
// server reaches a watch on the other), one identity (a token issued by one is accepted by the
// other), and the cluster's address keeps answering when an API server is killed.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from '../../src/api/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { buildHttpClient } from '../../src/client/http-client.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { startTcpBalancer } from '../../src/cluster/tcp-balancer.js';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const HAVE_ETCD = existsSync('/usr/bin/etcd');
if (!HAVE_ETCD && process.env.CI === 'true') throw new Error('CI=true but /usr/bin/etcd is missing');
const CMS = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' } as const;

describe.skipIf(!HAVE_ETCD || kubectlMissing(33))('two API servers on one etcd behind one address', () => {
  let dir = '';
  let cluster: RunningCluster;
  let ports: number[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kdp-ha-'));
    cluster = await startCluster({ paths: dataDirPaths(dir), nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 10,
      etcd: 1, apiservers: 2, dns: false, progress: () => {} });
    ports = cluster.apiServers.map((u) => Number(new URL(u).port));
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const direct = (port: number) => {
    const kc = loadKubeconfig(join(dir, 'kubeconfig'));
    return buildHttpClient({ ...kc, server: `https://127.0.0.1:${port}` });
  };

  it('the kubeconfig names the balancer, not one API server', () => {
    const kc = loadKubeconfig(join(dir, 'kubeconfig'));
    expect(kc.server).toBe(cluster.url);
    expect(ports).not.toContain(Number(new URL(cluster.url).port));
  });

  it('a create on one API server reaches a watch on the other', async () => {
    const [a, b] = [direct(ports[0]!), direct(ports[1]!)];
    const seen: string[] = [];
    const list = await b.list<ConfigMap>(CMS);
    const w = b.watch<ConfigMap>(CMS, { resourceVersion: list.metadata?.resourceVersion }, {
      onEvent: (ev) => { seen.push(`${ev.type}:${ev.object.metadata.name}`); },
    });
    try {
      await a.create(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-a' }, data: { x: '1' } });
      await waitFor(() => seen.includes('ADDED:from-a'), 10_000, 'the other server\'s watch to see the create');
    } finally {
      w.stop();
      a.close();
      b.close();
    }
  });

  it('a token one API server issues is accepted by the other (one sa.key)', async () => {
    const kubectl = kubectlFor(join(dir, 'kubeconfig'), { minor: 33 });
    const token = await kubectl(['create', 'token', 'default', '-n', 'default', '--server', `https://127.0.0.1:${ports[0]}`]);
    expect(token.code, token.err).toBe(0);
    const who = await kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}',
      '--server', `https://127.0.0.1:${ports[1]}`, '--token', token.out.trim()]);
    expect(who.code, who.err).toBe(0);
    expect(who.out).toBe('system:serviceaccount:default:default');
  });

  it('the cluster address keeps answering when the replica is killed', async () => {
    const pid = Number(execFileSync('pgrep', ['-f', `apiserver --supervised --data-dir ${dir}`], { encoding: 'utf8' }).trim().split('\n')[0]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    const kubectl = kubectlFor(join(dir, 'kubeconfig'), { minor: 33 });
    for (let i = 0; i < 6; i++) {
      // Each kubectl run is a new connection: round-robin would land half of them on the dead one.
      const r = await kubectl(['get', 'configmap', 'from-a', '-o', 'name']);
      expect(r.code, r.err).toBe(0);
      expect(r.out.trim()).toBe('configmap/from-a');
    }
  });
});

describe('the TCP balancer', () => {
  it('spreads connections round-robin and skips a backend that refuses, with nothing lost', async () => {
    const { createServer } = await import('node:net');
    const servers = await Promise.all([0, 1].map((i) => new Promise<import('node:net').Server>((resolve) => {
      const s = createServer((c) => c.end(`backend ${i}\n`));
      s.listen(0, '127.0.0.1', () => resolve(s));
    })));
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const deadPort = (dead.address() as { port: number }).port;
    await new Promise((r) => dead.close(r));
    const backends = [...servers.map((s) => ({ host: '127.0.0.1', port: (s.address() as { port: number }).port })),
      { host: '127.0.0.1', port: deadPort }];
    const lb = await startTcpBalancer({ port: 0, backends: () => backends });
    const ask = () => new Promise<string>((resolve, reject) => {
      import('node:net').then(({ connect }) => {
        let out = '';
        const c = connect(lb.port, '127.0.0.1');
        c.on('data', (d) => { out += d; });
        c.on('close', () => resolve(out));
        c.on('error', reject);
      }, reject);
    });
    try {
      const answers: string[] = [];
      for (let i = 0; i < 9; i++) answers.push(await ask());
      expect(answers.every((a) => /^backend [01]\n$/.test(a))).toBe(true);
      expect(answers.filter((a) => a === 'backend 0\n').length).toBeGreaterThanOrEqual(3);
      expect(answers.filter((a) => a === 'backend 1\n').length).toBeGreaterThanOrEqual(3);
    } finally {
      await lb.close();
      for (const s of servers) s.close();
    }
  });
});
