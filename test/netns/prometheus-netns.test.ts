// `--prometheus` on a netns cluster whose kube-proxies bind their metrics on the node's address
// (metricsBindAddress 0.0.0.0:10249, as kind's CI sets it for Prometheus): every job of the
// scrape config is up — the API server, each kubelet (/metrics and /metrics/resource), each
// kube-proxy through the node proxy, and the DNS pods through the pod proxy.

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { defaultKubeProxyConfig, startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { PROMETHEUS_BIN } from '../../src/metrics/prometheus-run.js';
import { freePort } from '../../src/util/free-port.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const haveProm = existsSync(PROMETHEUS_BIN);
if (!haveProm && process.env.CI === 'true') throw new Error('prometheus is required under CI');

describe.runIf(haveProm && canUseNetns(['ip', 'nft', 'nsenter']))('Prometheus on a netns cluster', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-promns-')));
  let cluster: RunningCluster;
  let port = 0;

  beforeAll(async () => {
    port = await freePort();
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      kubeProxyConfig: `${defaultKubeProxyConfig(['10.244.0.0/16'])}metricsBindAddress: "0.0.0.0:10249"\n`,
      progress: () => {}, prometheus: { port } });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  it('scrapes every job: API server, kubelets, kube-proxies, DNS pods', async () => {
    const up = async (job: string) => {
      const q = encodeURIComponent(`up{job="${job}"}`);
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${q}`)
        .then((x) => x.json() as Promise<{ data: { result: Array<{ value: [number, string] }> } }>, () => undefined);
      return (r?.data.result ?? []).map((x) => x.value[1]).sort().join(',');
    };
    for (const [job, want] of [['apiserver', '1'], ['kubelet', '1,1'], ['kubelet-resource', '1,1'],
      ['kube-proxy', '1,1']] as const) {
      await waitFor(async () => (await up(job)) === want, 60_000, `${job} up`);
    }
    await waitFor(async () => /^1(,1)*$/.test(await up('coredns')), 60_000, 'coredns up');
    const q = encodeURIComponent('sum(kubeproxy_sync_proxy_rules_duration_seconds_count) by (node)');
    const r = await (await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${q}`)).json() as
      { data: { result: Array<{ metric: { node: string } }> } };
    expect(r.data.result.map((x) => x.metric.node).sort()).toEqual(['n1', 'n2']);
  }, 120_000);
});
