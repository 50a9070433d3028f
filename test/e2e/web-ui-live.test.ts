// The trace view's live toggle in a real browser on a netns cluster (two nodes, a Deployment of
// two echo pods behind a Service, a client pod on n1): the page asks the UI server, which runs
// the probe `kdp trace --live` runs (the same code, trace/live/live-json.ts) inside the lab's
// namespaces, and draws what the kernel did beside the simulation — the interfaces the probe
// crossed, the branch it took, the verdict — and marks a disagreement the kernel really makes
// (a DROP put in a node's FORWARD chain by the test: the simulation does not know it).
// Screenshots in test-artifacts/ui/.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { chromiumMissing, launchChromium, uiContext } from '../helpers/chromium.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
// Evaluated in the page (the test program has no DOM types).
declare const document: { querySelector(s: string): { disabled: boolean } | null };
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'ui');
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const run = !chromiumMissing() && canUseNetns(['ip', 'iptables-restore', 'nft', 'nsenter', 'tcpdump', 'xtables-monitor']);

describe.runIf(run)('the live trace toggle in Chromium on a netns cluster', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-ui-live-')));
  let cluster: RunningCluster | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let url = '';
  let web: Pod[] = [];
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  /** What a 1280×800 screen shows (the docs' picture). */
  const screen = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 5,
      dataPlane: 'netns', dns: false, progress: () => {} });
    const c = cluster.client;
    await c.create({ group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' }, {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } },
    } as KubeObject);
    await c.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client', namespace: 'default' },
      spec: { nodeName: 'n1', containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 9090 }] }] } } as KubeObject);
    await c.create({ group: '', version: 'v1', resource: 'services', namespace: 'default' }, {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } as KubeObject);
    await waitFor(async () => {
      const pods = (await c.list<Pod>(PODS)).items;
      return pods.length === 3 && pods.every((p) => p.status?.podIP &&
        p.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True');
    }, 60_000, 'three pods Ready');
    web = (await c.list<Pod>(PODS)).items.filter((p) => p.metadata.name!.startsWith('web-'));
    await waitFor(async () => {
      const r = await kdp('trace', '--data-dir', paths.root, '-o', 'json', 'client', 'svc/web:http');
      return r.code === 0 && JSON.parse(r.out).destinations.length === 2;
    }, 30_000, 'the Service in the rules');
    const { requestUiLink } = await import('../../src/ui/server/link-client.js');
    const link = await requestUiLink(paths.kubeconfig);
    url = link.url.slice(0, link.url.indexOf('/ui/'));
    browser = await launchChromium();
    page = await (await uiContext(browser)).newPage();
    await page.goto(link.url);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
    rmSync(paths.root, { recursive: true, force: true });
  }, 60_000);

  it('probes pod → Service for real and draws the kernel\'s path beside the simulation, agreeing', async () => {
    await page.goto(`${url}/ui/#/trace?src=default%2Fclient&dst=svc%2Fdefault%2Fweb%3Ahttp`);
    const toggle = page.locator('.live-toggle input[name="live"]');
    await page.waitForFunction(() => document.querySelector('.live-toggle input')?.disabled === false);
    expect(await page.locator('.live-toggle').getAttribute('title')).toMatch(/kdp trace --live/);
    await toggle.check();
    await page.click('.trace-form button[type="submit"]');
    expect(page.url()).toContain('live=1');
    await page.waitForSelector('.live-result', { timeout: 60_000 });
    expect(await page.locator('.live-verdict').textContent()).toBe('the kernel agrees');
    expect(await page.locator('.fidelity-bug').count()).toBe(0);
    expect(await page.locator('.obs-verdict').textContent()).toBe('ACCEPT');
    // The probe left the client's eth0 towards the ClusterIP and reached one of the web pods.
    const first = await page.locator('.obs-hop').first();
    expect(await first.getAttribute('data-label')).toBe('pod default/client eth0');
    expect(await first.locator('.obs-forward').textContent()).toMatch(/→ 10\.\d+\.\d+\.\d+:80 tcp S/);
    const reached = await page.locator('.obs-reached').textContent();
    expect(web.map((p) => `pod default/${p.metadata.name}`)).toContain(reached);
    // Exactly the simulated branch the kernel took is marked, and it is that pod's.
    const taken = page.locator('.branch.taken');
    expect(await taken.count()).toBe(1);
    const ip = web.find((p) => `pod default/${p.metadata.name}` === reached)!.status!.podIP!;
    expect(await taken.locator('header b').textContent()).toBe(`${ip}:8080`);
    expect(await page.locator('.branch').count()).toBe(2);
    expect(await page.locator('.kernel').count()).toBeGreaterThan(0);
    await shot('trace-live');
    await screen('trace-live-screen');
  }, 120_000);

  it('marks a disagreement the kernel makes: a DROP the simulation does not know of', async () => {
    const target = web.find((p) => p.spec?.nodeName === 'n2') ?? web[0]!;
    const ns = `${hostPrefixFor(paths)}-${target.spec!.nodeName}`;
    const ip = target.status!.podIP!;
    const rule = ['FORWARD', '-d', ip, '-p', 'tcp', '--dport', '8080', '-m', 'comment', '--comment', 'kdp-test-drop', '-j', 'DROP'];
    await exec.run('iptables', ['-I', ...rule], { netns: ns });
    try {
      await page.goto(`${url}/ui/#/trace?src=default%2Fclient&dst=default%2F${target.metadata.name}%3A8080&live=1`);
      await page.waitForSelector('.live-result', { timeout: 60_000 });
      expect(await page.locator('.live-verdict').textContent()).toMatch(/^\d+ disagreements?$/);
      expect(await page.locator('.live-result.disagrees').count()).toBe(1);
      const aspects = await page.$$eval('.fidelity-bug', (els) => els.map((e) => e.getAttribute('data-aspect')));
      expect(aspects).toContain('verdict');
      // The simulation still says it is delivered; the kernel dropped it.
      expect(await page.locator('.summary .verdict').textContent()).toBe('ACCEPT');
      expect(await page.locator('.obs-verdict').textContent()).toBe('DROP');
      await shot('trace-live-disagreement');
    } finally {
      await exec.run('iptables', ['-D', ...rule], { netns: ns });
    }
  }, 120_000);
});
