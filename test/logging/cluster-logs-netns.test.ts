// Cluster-level logging on a netns `kdp up` cluster (root): a container printing lines on
// stdout and stderr is collected from its node's CRI log files, `kdp logs -l app=web --since
// 1m` still returns its lines after the pod was deleted, and `-f` sees new lines as they come.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { main } from '../../src/cli/main.js';
import { captureIO, kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const SCRIPT = 'i=0; while true; do echo "web line $i"; echo "web warn $i" >&2; i=$((i+1)); sleep 0.2; done';

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('cluster logs on a netns cluster', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-logs-netns-')));
  let cluster: RunningCluster | undefined;
  const logs = async (...a: string[]) => {
    const r = await kdp('logs', '--data-dir', paths.root, ...a);
    expect(r.code, r.err).toBe(0);
    return r.out;
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      progress: () => {}, dns: false });
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { nodeName: 'n2', terminationGracePeriodSeconds: 1,
        containers: [{ name: 'printer', image: 'busybox', command: ['sh', '-c', SCRIPT] }] } } as Pod);
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(buildHostExec(), paths.hostState, hostPrefixFor(paths));
  }, 60_000);

  it('-f sees a new line of a running container', async () => {
    await waitFor(async () => (await logs('-l', 'app=web')).includes('web line 2'), 60_000, 'web line 2 kept');
    const io = captureIO();
    let stop!: () => void;
    const run = main(['logs', '--data-dir', paths.root, '-l', 'app=web', '-f', '--grep', '^web line'],
      { ...io, interrupted: new Promise<void>((r) => { stop = r; }),
        out: (t) => { io.stdout += t; }, err: (t) => { io.stderr += t; } });
    await waitFor(async () => io.stdout.includes('web line 2'), 10_000, 'first lines');
    const shown = io.stdout.trim().split('\n').length;
    await waitFor(async () => io.stdout.trim().split('\n').length > shown + 2, 20_000, 'new lines followed');
    stop();
    expect(await run).toBe(0);
    const nums = io.stdout.trim().split('\n').map((l) => Number(/web line (\d+)$/.exec(l)![1]));
    expect(nums).toEqual(nums.map((_, k) => nums[0]! + k));
  }, 90_000);

  it('kdp logs -l app=web --since 1m returns the lines of the pod deleted a moment before', async () => {
    const c = cluster!;
    await c.client.delete(PODS, 'web');
    await waitFor(async () => !(await c.client.list<Pod>(PODS)).items.some((p) => p.metadata.name === 'web'),
      60_000, 'pod gone');
    const out = await logs('-l', 'app=web', '--since', '1m');
    const lines = out.trim().split('\n');
    for (const l of lines) expect(l).toMatch(/^\S+Z n2 default\/web\/printer: web (line|warn) \d+$/);
    const last = Math.max(...lines.map((l) => Number(/(\d+)$/.exec(l)![1])));
    expect(last).toBeGreaterThan(5);
    // Every line it printed is there, stdout and stderr, in order.
    for (let i = 0; i <= last - 1; i++) {
      expect(out).toContain(`web line ${i}\n`);
      expect(out).toContain(`web warn ${i}\n`);
    }
    const json = (await logs('-l', 'app=web', '--grep', 'warn 1$', '-o', 'json')).trim().split('\n').map((l) => JSON.parse(l));
    // (The stream is the runtime's to tell: kdp's netns runtime writes a container's stderr
    // into its stdout pipe today.)
    expect(json).toEqual([expect.objectContaining({ stream: expect.stringMatching(/^std(out|err)$/), message: 'web warn 1',
      source: expect.objectContaining({ pod: 'web', node: 'n2', labels: { app: 'web' } }) })]);
    // The kubelet's Events reach the store through the watch, a moment after the pod is gone.
    const kubelet = await waitFor(async () => {
      const out = await logs('--component', 'kubelet', '--node', 'n2', '--grep', 'object="default/web"');
      return /reason="Killing"/.test(out) ? out : undefined;
    }, 20_000, 'the kubelet\'s Killing line');
    expect(kubelet).toMatch(/reason="Started"/);
  }, 90_000);
});
