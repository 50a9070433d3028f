// The kubelet API's monitoring paths on a real kubelet server (HTTPS, client certificates):
// /metrics (kubelet_running_pods, kubelet_running_containers, kubelet_pod_start_sli_duration_seconds),
// /metrics/resource and /stats/summary from the virtual model; promtool accepts both texts;
// without a client certificate 401, without nodes/metrics rights 403.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { issueCa, issueClientCertificate, issueLeaf } from '../../src/apiserver/pki/index.js';
import { buildKubeletServer } from '../../src/kubelet/server/kubelet-server.js';
import { buildNodeMonitors } from '../../src/metrics/node-monitor.js';

const PROMTOOL = '/usr/bin/promtool';
const NOW = Date.parse('2026-03-01T12:00:00Z');

function pod(name: string, created: number, started: number): Pod {
  return { apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: new Date(created).toISOString() },
    spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'kdp/echo', resources: { requests: { cpu: '100m' } } }] },
    status: { phase: 'Running', podIP: '10.244.0.5', containerStatuses: [{ name: 'app', ready: true, restartCount: 0,
      image: 'kdp/echo', imageID: '', state: { running: { startedAt: new Date(started).toISOString() } } }] } } as Pod;
}

describe('kubelet monitoring endpoints', () => {
  let url = '';
  let client: { certPem: string; keyPem: string; caPem: string };
  let allowed = true;
  const close: Array<() => void> = [];

  beforeAll(async () => {
    const ca = await issueCa('kubelet-test');
    const serving = await issueLeaf(ca, { commonName: 'n1', usage: 'server', sans: ['IP:127.0.0.1'] });
    client = { ...(await issueClientCertificate(ca, { commonName: 'kube-apiserver-kubelet-client',
      organizations: ['system:masters'] })), caPem: ca.certPem };
    let clock = NOW - 60_000;
    const monitors = buildNodeMonitors({ now: () => clock });
    // Started before the kubelet: not an SLI sample; started after: 1.5 s.
    const pods = [pod('old', NOW - 120_000, NOW - 119_000), pod('web', NOW - 10_000, NOW - 8_500)];
    const monitor = monitors.attach('n1', { pods: () => pods }, {});
    clock = NOW;
    const server = buildKubeletServer({ nodeName: 'n1', tls: { certPem: serving.certPem, keyPem: serving.keyPem,
      caPem: ca.certPem }, authorize: async () => allowed, pod: () => undefined, pods: () => pods, monitor });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close.push(() => server.close());
  });
  afterAll(() => { for (const c of close) c(); });

  const get = (path: string, cert = true) => new Promise<{ code: number; body: string; type: string }>((resolve, reject) => {
    const req = request(`${url}${path}`, { ca: client.caPem, ...(cert ? { cert: client.certPem, key: client.keyPem } : {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { body += c; });
        res.on('end', () => resolve({ code: res.statusCode!, body, type: String(res.headers['content-type']) }));
      });
    req.on('error', reject);
    req.end();
  });
  const promtool = (text: string) => {
    if (existsSync(PROMTOOL) || process.env.CI === 'true') execFileSync(PROMTOOL, ['check', 'metrics'], { input: text });
  };

  it('/metrics: running pods and containers, the pod start-up SLI; promtool accepts it', async () => {
    const r = await get('/metrics');
    expect(r.code).toBe(200);
    expect(r.type).toContain('text/plain; version=0.0.4');
    expect(r.body).toContain('# TYPE kubelet_running_pods gauge\nkubelet_running_pods 2\n');
    expect(r.body).toContain('kubelet_running_containers{container_state="running"} 2\n');
    expect(r.body).toContain('# TYPE kubelet_pod_start_sli_duration_seconds histogram\n');
    expect(r.body).toContain('kubelet_pod_start_sli_duration_seconds_bucket{le="1"} 0\n');
    expect(r.body).toContain('kubelet_pod_start_sli_duration_seconds_bucket{le="2"} 1\n');
    expect(r.body).toContain('kubelet_pod_start_sli_duration_seconds_count 1\n');
    promtool(r.body);
  });

  it('/metrics/resource: node, pod and container usage with sample timestamps; promtool accepts it', async () => {
    const r = await get('/metrics/resource');
    expect(r.code).toBe(200);
    // web's app: 100m for 8.5 s.
    expect(r.body).toContain(`container_cpu_usage_seconds_total{container="app",namespace="default",pod="web"} 0.85 ${NOW}\n`);
    expect(r.body).toContain(`pod_memory_working_set_bytes{namespace="default",pod="web"} 4194304 ${NOW}\n`);
    // The node: 50m for the 60 s since its kubelet started (3 s), plus old (11.9 s) and web (0.85 s).
    expect(r.body).toMatch(new RegExp(`\\nnode_cpu_usage_seconds_total 15\\.75 ${NOW}\\n`));
    expect(r.body).toContain('resource_scrape_error 0\n');
    promtool(r.body);
  });

  it('/stats/summary: the Summary API\'s node and pod usage', async () => {
    const s = JSON.parse((await get('/stats/summary')).body);
    expect(s.node).toMatchObject({ nodeName: 'n1', cpu: { usageCoreNanoSeconds: 15_750_000_000 },
      memory: { workingSetBytes: 128 * 2 ** 20 + 8 * 2 ** 20 } });
    expect(s.pods.map((p: { podRef: { name: string } }) => p.podRef.name).sort()).toEqual(['old', 'web']);
  });

  it('needs a client certificate (401) and nodes/metrics rights (403)', async () => {
    expect((await get('/metrics', false)).code).toBe(401);
    allowed = false;
    try {
      const r = await get('/metrics/resource');
      expect(r.code).toBe(403);
      expect(r.body).toContain('subresource=metrics');
    } finally { allowed = true; }
  });
});
