// kubectl logs through the kubelet on a virtual cluster (kdp up --virtual), with kubectl 1.27 and
// 1.33: every flag (--timestamps, --tail, --limit-bytes, --since, --since-time, --previous, -f),
// the kubelet API on a loopback port (nodes/proxy, 401 without a client certificate), exec's
// virtual Status, and an unreachable kubelet's error passed through.

import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { fileLogStore, nodeDirOf } from '../../src/kubelet/container-log-files.js';
import { kubectlFor, kubectlMissing, kubectlPath } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const MINORS = [27, 33].filter((m) => !kubectlMissing(m));
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

describe.runIf(MINORS.length > 0)('kubectl logs via the kubelet on a virtual cluster', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-vlogs-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster;
  let pod: Pod;
  const kubectl = kubectlFor(paths.kubeconfig);
  /** Appends output lines to the pod's container log, as its runtime would. */
  const say = (line: string) => {
    const w = fileLogStore(nodeDirOf(dataDir, pod.spec!.nodeName!))
      .open({ namespace: 'default', name: 'p', uid: pod.metadata.uid! }, 'p', 0);
    w.write('stdout', `${line}\n`);
    w.close();
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 20, dns: false,
      progress: () => {} });
    expect((await kubectl(['run', 'p', '--image=kdp/echo', '--port=8080'])).code).toBe(0);
    pod = await waitFor(async () => {
      const p = await cluster.client.get<Pod>(PODS, 'p');
      return p.status?.phase === 'Running' ? p : undefined;
    }, 30_000, 'pod p running');
  }, 120_000);
  afterAll(async () => { await cluster?.close(); });

  it('publishes the kubelet port and serves nodes/proxy; no client certificate is 401', async () => {
    const node = await cluster.client.get<Node>({ group: '', version: 'v1', resource: 'nodes' }, 'n1');
    const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0;
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(10250);
    const raw = await kubectl(['get', '--raw', '/api/v1/nodes/n1/proxy/pods']);
    expect(raw.code).toBe(0);
    expect(JSON.parse(raw.out).items.map((p: Pod) => p.metadata.name)).toContain('p');
    const anon = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/pods', rejectUnauthorized: false }, (res) => {
        let body = '';
        res.on('data', (c) => { body += c; }).on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      }).on('error', reject).end();
    });
    expect(anon).toEqual({ code: 401, body: 'Unauthorized\n' });
  });

  for (const minor of MINORS) {
    it(`kubectl 1.${minor} logs with --timestamps, --tail, --limit-bytes, --since, --previous`, async () => {
      const k = (...args: string[]) => kubectl(args, { minor });
      const all = await k('logs', 'p');
      expect(all.code).toBe(0);
      expect(all.out).toBe('[kdp-virtual] started container p (image kdp/echo)\n[kdp-virtual] listening on ports 8080\n');
      expect((await k('logs', 'p', '--tail=1')).out).toBe('[kdp-virtual] listening on ports 8080\n');
      expect((await k('logs', 'p', '--limit-bytes=13')).out).toBe('[kdp-virtual]');
      expect((await k('logs', 'p', '--timestamps', '--tail=1')).out)
        .toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \[kdp-virtual\] listening on ports 8080\n$/);
      expect((await k('logs', 'p', '--since=1h')).out).toBe(all.out);
      const prev = await k('logs', 'p', '--previous');
      expect(prev.code).toBe(1);
      expect(prev.err).toContain('previous terminated container "p" in pod "p" not found');
      const bad = await k('logs', 'p', '-c', 'nope');
      expect(bad.err).toContain('container nope is not valid for pod p');
    });
  }

  it('--since-time shows only the lines from then; -f sees a line written after it started', async () => {
    // The next whole second: kubectl sends sinceTime in seconds.
    await new Promise((r) => setTimeout(r, 1010 - (Date.now() % 1000)));
    const since = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    say('a line after the start');
    for (const minor of MINORS) {
      expect((await kubectl(['logs', 'p', `--since-time=${since}`], { minor })).out).toBe('a line after the start\n');
    }
    const f = spawn(kubectlPath(MINORS.at(-1)!), ['--kubeconfig', paths.kubeconfig, 'logs', '-f', 'p']);
    let out = '';
    f.stdout.on('data', (c) => { out += c; });
    try {
      await waitFor(() => out.includes('a line after the start\n'), 20_000, 'the follower to print the log so far');
      say('written while following');
      await waitFor(() => out.includes('written while following\n'), 20_000, 'the follower to print the new line');
    } finally {
      f.kill();
    }
  });

  it('exec, attach and port-forward answer that virtual nodes run no processes', async () => {
    const r = await kubectl(['exec', 'p', '--', 'true']);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('virtual nodes run no processes');
    const a = await kubectl(['attach', 'p'], { timeoutMs: 20_000 });
    expect(a.code).not.toBe(0);
    expect(a.err).toContain('virtual nodes run no processes');
    const pf = await kubectl(['port-forward', 'pod/p', ':8080'], { timeoutMs: 20_000 });
    expect(pf.code).not.toBe(0);
    expect(pf.err).toContain('virtual nodes run no processes');
  });

  it('an unreachable kubelet is the dial error, as upstream', async () => {
    await cluster.nodeSet.stop('n1');
    const r = await kubectl(['logs', 'p']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Get "https:\/\/172\.18\.0\.2:\d+\/containerLogs\/default\/p\/p": dial tcp .*connection refused/);
  });
});
