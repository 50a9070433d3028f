// `kdp up --prometheus` on a virtual cluster: the scrape config passes `promtool check config`,
// names every node's kubelet and kube-proxy path through the API server and the DNS pods'
// file_sd targets; Prometheus (Debian's, when installed) runs on 127.0.0.1 only, scrapes the API
// server with the cluster's credentials, and is gone once the cluster closes.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { PROMETHEUS_BIN } from '../../src/metrics/prometheus-run.js';
import { freePort } from '../../src/util/free-port.js';
import { waitFor } from '../helpers/cluster.js';

const haveProm = existsSync(PROMETHEUS_BIN) && existsSync('/usr/bin/promtool');
if (!haveProm && process.env.CI === 'true') throw new Error('prometheus and promtool are required under CI');

describe.runIf(haveProm)('kdp up --prometheus', () => {
  const root = mkdtempSync(join(tmpdir(), 'kdp-prom-'));
  let cluster: RunningCluster | undefined;
  let port = 0;
  const dir = join(root, 'prometheus');

  beforeAll(async () => {
    port = await freePort();
    cluster = await startCluster({ paths: dataDirPaths(root), nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 5,
      progress: () => {}, prometheus: { port } });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('writes a config promtool accepts, every node\'s kubelet and kube-proxy through the API server', async () => {
    const file = join(dir, 'prometheus.yml');
    execFileSync('promtool', ['check', 'config', file]);
    const text = readFileSync(file, 'utf8');
    for (const n of ['n1', 'n2']) {
      expect(text).toContain(`__metrics_path__: /api/v1/nodes/${n}/proxy/metrics\n`);
      expect(text).toContain(`__metrics_path__: /api/v1/nodes/${n}/proxy/metrics/resource\n`);
      expect(text).toContain(`__metrics_path__: /api/v1/nodes/http:${n}:10249/proxy/metrics\n`);
    }
    expect(statSync(join(dir, 'token')).mode & 0o077).toBe(0);
    await waitFor(async () => existsSync(join(dir, 'coredns-targets.json'))
      && JSON.parse(readFileSync(join(dir, 'coredns-targets.json'), 'utf8')).length > 0, 20_000, 'DNS targets');
  });

  it('runs Prometheus on 127.0.0.1, scraping the API server and the kubelets with the cluster\'s credentials', async () => {
    const up = async (job: string) => {
      const q = encodeURIComponent(`up{job="${job}"}`);
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${q}`)
        .then((x) => x.json() as Promise<{ data: { result: Array<{ value: [number, string] }> } }>, () => undefined);
      return r?.data.result.map((x) => x.value[1]).join(',');
    };
    await waitFor(async () => (await up('apiserver')) === '1', 60_000, 'the apiserver target up');
    // Virtual nodes' kubelets too (their API on loopback, reached by the node proxy).
    await waitFor(async () => (await up('kubelet')) === '1,1', 60_000, 'both kubelet targets up');
    await waitFor(async () => (await up('kubelet-resource')) === '1,1', 60_000, 'both kubelet resource targets up');
    const listening = execFileSync('ss', ['-Hltnp']).toString().split('\n').filter((l) => l.includes(`:${port} `));
    expect(listening.length).toBeGreaterThan(0);
    for (const l of listening) expect(l).toContain(`127.0.0.1:${port}`);
    await cluster!.close();
    cluster = undefined;
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/-/healthy`).then(() => false, () => true)),
      20_000, 'prometheus to stop');
  }, 120_000);
});
