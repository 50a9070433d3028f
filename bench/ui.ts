// Web UI in headless Chromium (Debian's, through playwright-core) against a real HTTPS API
// server holding 50 nodes and 1,000 running pods (objects only: the UI needs no agents):
//  - first contentful paint and time until all 1,000 pod boxes are in the page (target ≤ 2 s),
//    on the first load (the server builds the bundle when the link is issued) and warm (reloads);
//  - update latency from a pod's creation (the API call returning) to its box appearing in the
//    page (MutationObserver; the paint follows in the same frame), with pods created at
//    20/s (target p99 ≤ 500 ms).
// `node bin/run-ts.js bench/ui.ts [nodes] [pods] [rate/s] [seconds]`
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_USER } from '../src/apiserver/app.js';
import { startApiServer } from '../src/apiserver/start.js';
import { buildInProcessClient } from '../src/client/in-process.js';
import type { Client, KubeObject } from '../src/client/types.js';
import { renderKubeconfig } from '../src/client/kubeconfig.js';
import { requestUiLink } from '../src/ui/server/link-client.js';
import { launchChromium, uiContext } from '../test/helpers/chromium.js';
import { percentile, report } from './lib-bench.js';

const NODES = Number(process.argv[2] ?? 50);
const PODS = Number(process.argv[3] ?? 1000);
const RATE = Number(process.argv[4] ?? 20);
const SECONDS = Number(process.argv[5] ?? 10);
const NODE_REF = { group: '', version: 'v1', resource: 'nodes' };
const podRef = (ns: string) => ({ group: '', version: 'v1', resource: 'pods', namespace: ns });

async function addNode(client: Client, i: number): Promise<void> {
  const name = `n${i + 1}`;
  await client.create(NODE_REF, { apiVersion: 'v1', kind: 'Node', metadata: { name },
    spec: { podCIDR: `10.244.${i}.0/24`, podCIDRs: [`10.244.${i}.0/24`] } } as KubeObject);
  await client.patch(NODE_REF, name, 'merge', { status: {
    addresses: [{ type: 'InternalIP', address: `172.18.${Math.floor((i + 2) / 250)}.${(i + 2) % 250}` }],
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady',
      lastTransitionTime: new Date().toISOString(), lastHeartbeatTime: new Date().toISOString() }] } },
  { subresource: 'status' });
}

/** Creates a running pod; returns when its create call returned (the pod existed). */
async function addPod(client: Client, name: string, node: number, ip: string): Promise<number> {
  const ref = podRef('default');
  await client.create(ref, { apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: name.replace(/-\d+$/, '') } },
    spec: { nodeName: `n${node + 1}`, containers: [{ name: 'c', image: 'nginx' }] } } as KubeObject);
  const created = Date.now();
  const now = new Date().toISOString();
  await client.patch(ref, name, 'merge', { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }],
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } },
  { subresource: 'status' });
  return created;
}

const ipOf = (node: number, k: number) => `10.244.${node}.${(k % 250) + 2}`;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-bench-ui-'));
  const api = await startApiServer({ dataDir, port: 0 });
  const client = buildInProcessClient(api.server.service, ADMIN_USER);
  try {
    for (let i = 0; i < NODES; i++) await addNode(client, i);
    for (let k = 0; k < PODS; k++) {
      await addPod(client, `web${k % 20}-${k}`, k % NODES, ipOf(k % NODES, Math.floor(k / NODES)));
    }
    const kubeconfig = join(dataDir, 'kubeconfig');
    writeFileSync(kubeconfig, renderKubeconfig({ server: api.url, caPem: api.pki.caCertPem,
      token: api.pki.adminToken }));
    const link = async () => (await requestUiLink(kubeconfig)).url;
    const browser = await launchChromium();
    try {
      const page = await (await uiContext(browser)).newPage();
      // Installed before any page script: when do N pod boxes exist, and when did each appear.
      await page.addInitScript(`(() => {
        const w = window; w.__kdpSeen = {}; w.__kdpAll = 0;
        new MutationObserver(() => {
          const boxes = document.querySelectorAll('[data-pod]');
          const now = Date.now();
          if (!w.__kdpAll && boxes.length >= ${PODS}) w.__kdpAll = performance.now();
          for (const b of boxes) { const k = b.getAttribute('data-pod'); if (!(k in w.__kdpSeen)) w.__kdpSeen[k] = now; }
        }).observe(document, { childList: true, subtree: true });
      })()`);
      const load = async (go: () => Promise<unknown>, label: string) => {
        await go();
        await page.waitForFunction(() => (globalThis as unknown as { __kdpAll: number }).__kdpAll > 0,
          undefined, { timeout: 60_000 });
        const { fcp, all } = await page.evaluate(() => ({
          fcp: (performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN),
          all: (globalThis as unknown as { __kdpAll: number }).__kdpAll }));
        report(`${label}: first contentful paint`, fcp, 'ms');
        report(`${label}: ${PODS} pods on ${NODES} nodes shown`, all, 'ms', { op: '<=', value: 2000 });
      };
      const cold = await link();
      await load(() => page.goto(cold), 'first load (bundle built as the link was issued)');
      await load(() => page.reload(), 'warm (reload)');
      await load(() => page.reload(), 'warm (reload again)');

      const created = new Map<string, number>();
      const interval = 1000 / RATE;
      const t0 = Date.now();
      for (let k = 0; k < RATE * SECONDS; k++) {
        const due = t0 + k * interval;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const name = `burst-${k}`;
        const at = await addPod(client, name, k % NODES, ipOf(k % NODES, 200 + (k % 40)));
        created.set(`default/${name}`, at);
      }
      await page.waitForFunction((n) => Object.keys((globalThis as unknown as
        { __kdpSeen: Record<string, number> }).__kdpSeen).filter((k) => k.startsWith('default/burst-'))
        .length >= n, RATE * SECONDS, { timeout: 60_000 });
      const seen = await page.evaluate(() => (globalThis as unknown as
        { __kdpSeen: Record<string, number> }).__kdpSeen);
      const lat = [...created].map(([k, t]) => seen[k]! - t).sort((a, b) => a - b);
      const achieved = (RATE * SECONDS) / ((Date.now() - t0) / 1000);
      console.log(`pods created: ${lat.length} at ${achieved.toFixed(1)}/s (asked ${RATE}/s), ` +
        `on top of ${PODS}`);
      report('update latency p50 (pod created → box in page)', percentile(lat, 50), 'ms');
      report('update latency p99', percentile(lat, 99), 'ms', { op: '<=', value: 500 });
      report('update latency max', lat[lat.length - 1]!, 'ms');
    } finally {
      await browser.close();
    }
  } finally {
    await api.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
