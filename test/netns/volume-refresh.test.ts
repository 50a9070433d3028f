// A running pod's configMap volume follows the ConfigMap, as the kubelet's periodic volume sync
// keeps it (atomically: `..data` swapped), with the real kubectl in netns mode.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlFor } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('configMap volumes follow their ConfigMap (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-volsync-')));
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: 33, timeoutMs: 60_000 });

  beforeAll(async () => {
    // --time-scale 10: the kubelet's 60 s volume sync runs every 6 s.
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      dns: false, progress: () => {} });
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  it('an edit reaches the mounted file; the directory has the kubelet\'s ..data layout', async () => {
    expect((await kubectl(['create', 'configmap', 'cfg', '--from-literal=greeting=hello'])).code).toBe(0);
    const pod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'reader' },
      spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'],
        volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] }], volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }] } });
    expect((await kubectl(['apply', '-f', '-'], { input: pod })).code).toBe(0);
    expect((await kubectl(['wait', '--for=condition=Ready', 'pod/reader', '--timeout=60s'])).code).toBe(0);
    const cat = async () => (await kubectl(['exec', 'reader', '--', 'cat', '/etc/cfg/greeting'])).out;
    expect(await cat()).toBe('hello');
    const ls = await kubectl(['exec', 'reader', '--', 'ls', '-a', '/etc/cfg']);
    expect(ls.out.split('\n')).toEqual(expect.arrayContaining(['..data', 'greeting']));
    expect((await kubectl(['patch', 'configmap', 'cfg', '-p', '{"data":{"greeting":"bonjour"}}'])).code).toBe(0);
    await waitFor(async () => (await cat()) === 'bonjour' || undefined, 40_000, 'the edited value in the pod');
  }, 120_000);
});
