// The web UI in a real browser (Debian's Chromium through playwright-core) on a 2-node virtual
// cluster started as `kdp up` starts it: every node and pod shown, new pods appear as a
// Deployment scales, a trace drawn hop for hop as `kdp trace -o json` prints it (the live toggle
// off, with its reason, on a virtual cluster; how a live answer's disagreements are marked), a
// rule diff, the log store searched (a deleted pod's lines, components, following), kube-proxy's
// latency plotted per node and growing as the cluster changes.
// Screenshots are kept in test-artifacts/ui/. The live probe itself: web-ui-live.test.ts.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, KubeObject } from '../../src/client/types.js';
import type { Pod } from '../../src/api/types.js';
import { chromiumMissing, launchChromium, uiContext } from '../helpers/chromium.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const skip = chromiumMissing();
// Evaluated in the page (the test program has no DOM types).
interface El { textContent: string | null; getAttribute(a: string): string | null }
declare const document: {
  querySelectorAll(s: string): { length: number } & Iterable<El>;
  querySelector(s: string): El | null;
};
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'ui');
const PODS = { group: '', version: 'v1', resource: 'pods' };
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments', namespace: 'default' };
const SERVICES = { group: '', version: 'v1', resource: 'services', namespace: 'default' };

describe.skipIf(skip)('web UI in Chromium on a 2-node virtual cluster', () => {
  let cluster: { client: Client; close(): Promise<void> };
  let dataDir: string;
  let url: string;
  let browser: Browser;
  let page: Page;

  /** Waits until `selector` matches `n` elements (evaluated in the page). */
  const waitCount = (selector: string, n: number, timeout = 30_000) => page.waitForFunction(
    ([sel, want]) => document.querySelectorAll(sel).length === want, [selector, n] as const, { timeout });
  /** Waits until the text of `selector` matches `re`. */
  const waitText = (selector: string, re: RegExp) => page.waitForFunction(
    ([sel, src]) => new RegExp(src).test(document.querySelector(sel)?.textContent ?? ''),
    [selector, re.source] as const);
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
  const podsIn = async () => (await cluster.client.list<Pod>(PODS)).items;
  const webPods = async () => (await podsIn()).filter((p) => p.metadata.labels?.app === 'web');
  const scale = async (replicas: number) => {
    await cluster.client.patch(DEPLOYMENTS, 'web', 'merge', { spec: { replicas } });
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const { dataDirPaths } = await import('../../src/cluster/data-dir.js');
    const { startCluster } = await import('../../src/cluster/up.js');
    dataDir = mkdtempSync(join(tmpdir(), 'kdp-ui-e2e-'));
    const paths = dataDirPaths(dataDir);
    // timeScale 10: a deleted pod's grace period and the node monitor's grace period (the
    // search and node-failure tests wait them out) are a tenth of upstream's.
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 10,
      dataPlane: 'virtual', progress: () => {} });
    await cluster.client.create(DEPLOYMENTS, { apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
    } as KubeObject);
    await cluster.client.create(SERVICES, { apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 80 }] },
    } as KubeObject);
    const { requestUiLink } = await import('../../src/ui/server/link-client.js');
    const link = await requestUiLink(paths.kubeconfig);
    url = link.url.slice(0, link.url.indexOf('/ui/'));
    browser = await launchChromium();
    page = await (await uiContext(browser)).newPage();
    await page.goto(link.url);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await cluster?.close();
  });

  it('is served on the loopback address only, and answers 401 without a session', async () => {
    expect(new URL(url).hostname).toBe('127.0.0.1');
    const ctx = await uiContext(browser);
    const r = await (await ctx.newPage()).goto(`${url}/ui/`);
    expect(r?.status()).toBe(401);
    // `kdp ui` prints a fresh link on the same address; it works once.
    const printed = await kdp('ui', '--data-dir', dataDir, '-o', 'json');
    expect(printed.code, printed.err).toBe(0);
    const link = JSON.parse(printed.out).url as string;
    expect(link).toMatch(new RegExp(`^${url}/ui/login\\?token=[\\w-]{40,}$`));
    const other = await ctx.newPage();
    await other.goto(link);
    expect(other.url()).toBe(`${url}/ui/`);
    expect((await (await ctx.newPage()).goto(link))?.status()).toBe(401);
    await ctx.close();
  });

  it('shows every node and every pod, each pod in its node\'s box', async () => {
    expect(page.url()).toBe(`${url}/ui/`);
    await page.waitForSelector('[data-node="n1"]');
    await page.waitForSelector('[data-node="n2"]');
    // Wait until the web pods are running and shown, then compare with the API.
    await waitCount('[data-pod^="default/web-"].ready', 2);
    const pods = await podsIn();
    for (const p of pods) {
      const key = `${p.metadata.namespace}/${p.metadata.name}`;
      const where = p.spec?.nodeName ? `[data-node="${p.spec.nodeName}"] ` : '';
      await page.waitForSelector(`${where}[data-pod="${key}"]`, { timeout: 10_000 });
    }
    expect(await page.locator('.pod').count()).toBe(pods.length);
    expect(await page.locator('[data-node="n1"] .node-ips').textContent()).toMatch(/172\.18\.0\.2/);
    expect(await page.locator('[data-node="n2"] .node-cidrs').textContent()).toMatch(/10\.244\.\d+\.0\/24/);
    await waitText('[data-node="n1"] .node-sync', /sync #\d+/);
    await shot('topology');
  });

  it('shows new pods as the Deployment scales, with lines to the Service\'s ready endpoints', async () => {
    await scale(4);
    await waitCount('[data-pod^="default/web-"].ready', 4);
    const names = (await webPods()).map((p) => `default/${p.metadata.name}`).sort();
    const shown = await page.$$eval('[data-pod^="default/web-"]', (els) =>
      els.map((e) => e.getAttribute('data-pod')!).sort());
    expect(shown).toEqual(names);
    await page.click('[data-svc="default/web"] .svc-name');
    await waitCount('svg.lines path[data-line^="default/web>"]', 4);
    expect(await page.locator('[data-svc="default/web"] .svc-eps').textContent()).toBe('4 ready endpoints');
    expect(page.url()).toContain('svc=default%2Fweb');
    await shot('topology-scaled');
  });

  it('draws a trace with the hops, NAT and branches of kdp trace -o json', async () => {
    const src = `default/${(await webPods())[0]!.metadata.name}`;
    // Once every node's kube-proxy has synced the fourth endpoint (the UI showed it ready).
    let json: any;
    for (;;) {
      const cli = await kdp('trace', '--data-dir', dataDir, '-o', 'json', src, 'svc/default/web:80');
      expect(cli.code, cli.err).toBe(0);
      json = JSON.parse(cli.out);
      if (json.destinations.length === 4) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.goto(`${url}/ui/#/trace?src=${encodeURIComponent(src)}&dst=svc%2Fdefault%2Fweb%3A80`);
    await page.waitForSelector('.branch');
    const drawn = await page.$$eval('.branch', (branches) => branches.map((b) => ({
      prob: b.querySelector('.prob')!.textContent, destination: b.querySelector('header b')!.textContent,
      hops: [...b.querySelectorAll('.hop')].map((h) => ({ stage: h.getAttribute('data-stage'),
        chain: h.getAttribute('data-chain'), rule: h.getAttribute('data-rule'),
        text: h.querySelector('.hop-text')!.textContent, nat: h.classList.contains('nat') })) })));
    expect(drawn.map((d) => d.destination)).toEqual(json.destinations.map((d: any) => d.destination));
    expect(drawn.map((d) => d.prob)).toEqual(json.destinations.map(() => '25%'));
    drawn.forEach((d, i) => {
      expect(d.hops).toEqual(json.destinations[i].hops.map((h: any) => ({ stage: h.stage,
        chain: h.chain ?? '', rule: h.rule === undefined ? '' : String(h.rule), text: h.text, nat: !!h.nat })));
      expect(d.hops.some((h) => h.nat)).toBe(true);
    });
    expect(await page.locator('.summary .verdict').textContent()).toBe(json.verdict);
    await shot('trace');
  });

  it('draws the NAT-free verdict of a pod-to-pod trace', async () => {
    const [a, b] = await webPods();
    const cli = await kdp('trace', '--data-dir', dataDir, '-o', 'json', `default/${a!.metadata.name}`,
      `default/${b!.metadata.name}:80`);
    const json = JSON.parse(cli.out);
    expect(json.natFree).toBe(true);
    await page.goto(`${url}/ui/#/trace?src=default%2F${a!.metadata.name}&dst=default%2F${b!.metadata.name}%3A80`);
    await waitText('.nat-free', /^yes$/);
  });

  it('opens a rule diff between two syncs of a node', async () => {
    await page.goto(`${url}/ui/#/rules/n1`);
    await page.waitForSelector('.history tbody tr');
    await page.click('.diff-last');
    await page.goto(`${url}/ui/#/rules/n1?a=1&b=latest`);
    await page.waitForSelector('.diff .change');
    const changes = await page.$$eval('.diff .change', (els) => els.map((e) => e.textContent ?? ''));
    expect(changes.some((c) => /added\s+default\/web/.test(c))).toBe(true);
    await shot('rules-diff');
  });

  it('shows one pod\'s events, live, and follows its container log through the API', async () => {
    const name = (await webPods())[0]!.metadata.name;
    await page.goto(`${url}/ui/#/events?obj=Pod%2Fdefault%2F${name}`);
    await waitText('.events tbody', /Scheduled.*Successfully assigned/);
    await page.goto(`${url}/ui/#/logs/default/${name}`);
    await waitText('pre.log', /started container web/);
  });

  it('keeps the live toggle off on a virtual cluster, saying why; the server refuses live too', async () => {
    const [a] = await webPods();
    await page.goto(`${url}/ui/#/trace`);
    const toggle = page.locator('.live-toggle input[name="live"]');
    await toggle.waitFor();
    expect(await toggle.isDisabled()).toBe(true);
    expect(await page.locator('.live-toggle').getAttribute('title'))
      .toMatch(/needs a netns cluster \(sudo kdp up\).*virtual/);
    await page.goto(`${url}/ui/#/trace?src=default%2F${a!.metadata.name}&dst=svc%2Fdefault%2Fweb%3A80&live=1`);
    await waitText('.trace .error', /is virtual \(no kernel to send packets through\)/);
  });

  it('draws a live answer beside the simulation: the branch taken, the interfaces, disagreements marked', async () => {
    // The shape `kdp trace --live -o json` prints, with one disagreement of each kind the page marks.
    const [a] = await webPods();
    const src = `default/${a!.metadata.name}`;
    const sim = JSON.parse((await kdp('trace', '--data-dir', dataDir, '-o', 'json', src, 'svc/default/web:80')).out);
    const taken = sim.destinations[1];
    const live = { dir: '/tmp/traces/x', sport: 40000,
      probe: { outcome: 'answered', responder: taken.destination, rttMs: 0.42 },
      observed: { reached: taken.reached, destination: taken.destination, sourceSeen: sim.packet.src, verdict: 'ACCEPT',
        hops: [{ label: `pod ${src} eth0`, netns: 'x', iface: 'eth0', file: '/tmp/a.pcap', packets: 2,
          forward: `${sim.packet.src}:40000 → ${sim.packet.dst}:80 tcp S` },
        { label: 'node n2 eth0', netns: 'y', iface: 'eth0', file: '/tmp/b.pcap', packets: 0 }],
        kernel: [{ node: 'n1', netns: 'x', tool: 'xtables-monitor --trace', file: '/tmp/t.txt', packets: 1,
          rules: [{ stage: 'nat PREROUTING', text: '-A KUBE-SERVICES …', verdict: 'continue' }] }] },
      simulatedBranch: { destination: taken.destination, reached: taken.reached, sourceSeen: sim.packet.src, verdict: 'ACCEPT' },
      rules: [{ node: 'n1', simulated: ['nat KUBE-SVC-X'], kernel: ['nat KUBE-SVC-Y'], onlySimulated: ['nat KUBE-SVC-X'],
        onlyKernel: ['nat KUBE-SVC-Y'] }],
      fidelity: [{ aspect: 'path', where: 'node n2 eth0', simulated: 'crosses node n2 eth0', observed: 'probe not seen' },
        { aspect: 'rules', where: 'n1', simulated: 'nat KUBE-SVC-X', observed: 'nat KUBE-SVC-Y' }],
      agrees: false };
    const isLive = (u: URL) => u.pathname === '/ui/api/trace' && u.searchParams.get('live') === '1';
    await page.route(isLive, (r) => r.fulfill({ status: 200, contentType: 'application/json',
      body: JSON.stringify({ ...sim, live }) }));
    try {
      await page.goto(`${url}/ui/#/topology`); // the last test left the same trace open
      await page.goto(`${url}/ui/#/trace?src=${encodeURIComponent(src)}&dst=svc%2Fdefault%2Fweb%3A80&live=1`);
      await page.waitForSelector('.live-result');
      expect(await page.locator('.live-verdict').textContent()).toBe('2 disagreements');
      expect(await page.$$eval('.fidelity-bug', (els) => els.map((e) => e.getAttribute('data-aspect')))).toEqual(['path', 'rules']);
      expect(await page.$$eval('.obs-hop.disagree', (els) => els.map((e) => e.getAttribute('data-label')))).toEqual(['node n2 eth0']);
      expect(await page.locator('.obs-hop.seen .obs-forward').textContent()).toContain(`→ ${sim.packet.dst}:80 tcp S`);
      expect(await page.locator('.rule-diff.disagree').count()).toBe(2);
      // The simulated branch the kernel took, and only it, is marked; the simulation is drawn as before.
      expect(await page.$$eval('.branch.taken', (els) => els.map((e) => e.getAttribute('data-branch')))).toEqual(['1']);
      expect(await page.locator('.branch').count()).toBe(sim.destinations.length);
      await shot('trace-live-disagreements');
    } finally {
      await page.unroute(isLive);
    }
  });

  it('searches the log store: a deleted pod\'s lines marked, components, and new lines streaming in', async () => {
    const pods = await webPods();
    const victim = pods[0]!.metadata.name!;
    await cluster.client.delete({ ...PODS, namespace: 'default' }, victim);
    await waitFor(async () => !(await webPods()).some((p) => p.metadata.name === victim), 30_000, 'the pod deleted');
    // What kdp logs finds now (the page, opened after, finds these and maybe newer ones).
    const cli = await kdp('logs', '--data-dir', dataDir, '-l', 'app=web', '--grep', 'started container', '-o', 'json');
    await page.goto(`${url}/ui/#/search?selector=app%3Dweb&grep=started%20container`);
    await page.waitForFunction((name) => [...document.querySelectorAll('.log-line.deleted')]
      .some((e) => e.getAttribute('data-source') === `default/${name}/web`), victim, { timeout: 30_000 });
    const want = cli.out.trim().split('\n').map((l) => JSON.parse(l)).map((r) => `${r.source.namespace}/${r.source.pod}/${r.source.container} ${r.message}`);
    const shown = await page.$$eval('.log-line', (els) => els.map((e) =>
      `${e.getAttribute('data-source')} ${e.querySelector('.m')!.textContent}`));
    expect(want.some((l) => l.startsWith(`default/${victim}/web `))).toBe(true);
    expect(shown).toEqual(expect.arrayContaining(want));
    expect(await page.locator('.search-status').textContent()).toMatch(/\d+ matching lines? kept/);
    await shot('log-search');
    // Components, by node: the kubelet's Events as it logs them.
    await page.goto(`${url}/ui/#/search?component=kubelet&node=n1`);
    await waitText('.search-results', /"Event occurred"/);
    expect(await page.$$eval('.log-line', (els) => [...new Set(els.map((e) => e.getAttribute('data-source')))])).toEqual(['kubelet']);
    // Following: a new pod's first line arrives without a reload.
    await page.goto(`${url}/ui/#/search?selector=app%3Dweb&grep=started&follow=1`);
    await waitText('.search-status', /following/);
    const before = new Set(await page.$$eval('.log-line', (els) => els.map((e) => e.getAttribute('data-source'))));
    await scale(5);
    await page.waitForFunction((seen) => [...document.querySelectorAll('.log-line')].some((e) =>
      !seen.includes(e.getAttribute('data-source'))), [...before], { timeout: 30_000 });
    // A bad pattern is refused naming it.
    await page.goto(`${url}/ui/#/search?grep=a(`);
    await waitText('.log-search .error', /--grep: .*Invalid regular expression/);
  }, 90_000);

  it('plots each node\'s programming latency and sync durations, growing as the cluster changes', async () => {
    await page.goto(`${url}/ui/#/latency`);
    const points = (node: string, chart: string) => page.locator(`.latency-node[data-node="${node}"] [data-chart="${chart}"]`)
      .getAttribute('data-points').then(Number);
    const grown = ([sel, was]: readonly [string, number]) =>
      Number(document.querySelector(sel)?.getAttribute('data-points') ?? 0) > was;
    for (const n of ['n1', 'n2']) {
      await page.waitForFunction(grown, [`.latency-node[data-node="${n}"] [data-chart="sync"]`, 0] as const, { timeout: 30_000 });
    }
    const before = { n1: await points('n1', 'sync'), n2: await points('n2', 'sync') };
    const programmed = { n1: await points('n1', 'programming'), n2: await points('n2', 'programming') };
    await scale(2);
    for (const n of ['n1', 'n2'] as const) {
      await page.waitForFunction(grown, [`.latency-node[data-node="${n}"] [data-chart="programming"]`, programmed[n]] as const,
        { timeout: 30_000 });
      expect(await points(n, 'sync')).toBeGreaterThan(before[n]);
    }
    // The samples are kube-proxy's histograms: the last one's count is what /metrics says.
    const { readMetricSamples, rulesDir } = await import('../../src/proxy/history.js');
    const samples = readMetricSamples(rulesDir(dataDir, 'n1'));
    expect(samples.length).toBeGreaterThan(1);
    expect(samples.at(-1)!.sync.count).toBeGreaterThanOrEqual(samples[0]!.sync.count);
    expect(await page.locator('.latency-node[data-node="n1"] svg path.series').count()).toBe(2);
    await shot('latency');
  }, 90_000);

  it('shows a node failure as it happens (kdp node stop: the node goes NotReady/Unknown)', async () => {
    await page.goto(`${url}/ui/#/topology`);
    await page.waitForSelector('[data-node="n2"] .badge');
    const stop = await kdp('node', 'stop', 'n2', '--data-dir', dataDir);
    expect(stop.code, stop.err).toBe(0);
    await page.waitForFunction((sel) => /NotReady|Unknown/.test(document.querySelector(sel)?.textContent ?? ''),
      '[data-node="n2"] header .badge', { timeout: 60_000 });
    await shot('node-failure');
  }, 90_000);

  it('is keyboard usable: number keys switch views, links are focusable', async () => {
    await page.goto(`${url}/ui/#/topology`);
    await page.waitForSelector('.pod');
    await page.keyboard.press('2');
    await page.waitForSelector('.trace-form');
    expect(page.url()).toMatch(/#\/trace$/);
    await page.keyboard.press('4');
    await page.waitForSelector('.events table');
    await page.keyboard.press('6');
    await page.waitForSelector('.search-form');
    await page.keyboard.press('7');
    await page.waitForSelector('.latency');
    await page.keyboard.press('1');
    await page.waitForSelector('.pod');
    await page.focus('.pod');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.details');
  });
});
