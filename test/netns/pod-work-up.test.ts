// Issue 13's "Must show" with the node agents inside `kdp up` (netns mode): the shared scenario
// (test/helpers/pod-work-scenario.ts) with the real kubectl 1.27 and 1.33.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { podWorkScenario } from '../helpers/pod-work-scenario.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('working in pods, nodes inside kdp up (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-pw-up-')));
  let cluster: RunningCluster;

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      progress: () => {} });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 60_000);

  podWorkScenario(() => ({ kubeconfig: paths.kubeconfig, client: cluster.client, workers: ['n1', 'n2'] }));
});
