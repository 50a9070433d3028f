// kubectl logs in netns mode through the node's kubelet (InternalIP:10250 in the node's
// namespace), with kubectl 1.27 and 1.33: real processes' output in the node's CRI log files,
// every flag, -f seeing lines written after it started, --previous after a restart, a waiting
// container's 400, the log of a finished pod kept until the pod is deleted (then its directory goes).

import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { containerLogPath, nodeDirOf, podLogDir } from '../../src/kubelet/container-log-files.js';
import { kubectlFor, kubectlMissing, kubectlPath } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const MINORS = [27, 33].filter((m) => !kubectlMissing(m));

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']) && MINORS.length > 0)('kubectl logs (netns)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-nlogs-')));
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig);
  const pod = (name: string) => cluster.client.get<Pod>(PODS, name);
  const create = (name: string, spec: object) =>
    cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec } as Pod);
  const ref = (p: Pod) => ({ namespace: 'default', name: p.metadata.name!, uid: p.metadata.uid! });

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      dns: false, progress: () => {} });
    await create('talker', { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c',
      'echo first; echo oops >&2; i=0; while true; do sleep 1; i=$((i+1)); echo tick-$i; done'] }] });
    await waitFor(async () => (await pod('talker')).status?.phase === 'Running', 60_000, 'talker running');
    await waitFor(async () => (await kubectl(['logs', 'talker'])).out.includes('tick-2'), 30_000, 'two ticks');
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  it('keeps the output as CRI records in <dataDir>/nodes/<node>/pods/<ns>_<pod>_<uid>/<container>/0.log', async () => {
    const p = await pod('talker');
    const file = containerLogPath(nodeDirOf(paths.root, 'n1'), ref(p), 'c', 0);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z stdout F first$/);
    expect(lines.some((l) => / stderr F oops$/.test(l))).toBe(true);
  });

  for (const minor of MINORS) {
    it(`kubectl 1.${minor}: --tail, --limit-bytes, --timestamps, --since, --since-time`, async () => {
      const k = (...a: string[]) => kubectl(a, { minor });
      const all = (await k('logs', 'talker')).out;
      expect(all.startsWith('first\noops\ntick-1\n')).toBe(true);
      expect((await k('logs', 'talker', '--tail=1')).out).toMatch(/^tick-\d+\n$/);
      expect((await k('logs', 'talker', '--limit-bytes=8')).out).toBe('first\noo');
      const stamped = (await k('logs', 'talker', '--timestamps')).out.trim().split('\n');
      expect(stamped[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z first$/);
      expect((await k('logs', 'talker', '--since=1h')).out.startsWith('first\n')).toBe(true);
      // From the second after the first line: not the first line, but later ticks.
      const t = new Date(Math.floor(Date.parse(stamped[0]!.split(' ')[0]!) / 1000) * 1000 + 1000)
        .toISOString().replace('.000Z', 'Z');
      const since = (await k('logs', 'talker', `--since-time=${t}`)).out;
      expect(since).not.toContain('first');
      expect(since).toMatch(/tick-\d+\n$/);
    });
  }

  it('a waiting container is the kubelet 400, passed through by the API server', async () => {
    await create('cfgerr', { containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo never'],
      env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'no-such-map', key: 'k' } } }] }] });
    await waitFor(async () => (await pod('cfgerr')).status?.containerStatuses?.[0]?.state?.waiting?.reason
      === 'CreateContainerConfigError', 60_000, 'CreateContainerConfigError');
    const r = await kubectl(['logs', 'cfgerr']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('Error from server (BadRequest): container "c" in pod "cfgerr" is waiting to start: ' +
      'CreateContainerConfigError');
  });

  it('logs -f prints lines written after it started', async () => {
    const f = spawn(kubectlPath(MINORS.at(-1)!), ['--kubeconfig', paths.kubeconfig, 'logs', '-f', 'talker']);
    let out = '';
    f.stdout.on('data', (c) => { out += c; });
    try {
      await waitFor(() => /tick-\d+\n/.test(out), 20_000, 'the log so far');
      const last = Math.max(...[...out.matchAll(/tick-(\d+)/g)].map((m) => Number(m[1])));
      await waitFor(() => out.includes(`tick-${last + 2}\n`), 20_000, 'two more ticks while following');
    } finally {
      f.kill();
    }
  });

  it('shows the run before a restart with --previous, and keeps a finished pod\'s log until it is deleted', async () => {
    await create('crash', { containers: [{ name: 'c', image: 'busybox',
      command: ['sh', '-c', 'echo run-at-$(date +%s%N); sleep 1; exit 1'] }] });
    await waitFor(async () => ((await pod('crash')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1
      && (await kubectl(['logs', 'crash'])).out.startsWith('run-at-'), 60_000, 'a restart');
    const prev = await kubectl(['logs', 'crash', '--previous']);
    expect(prev.code).toBe(0);
    expect(prev.out).toMatch(/^run-at-\d+\n$/);
    expect((await kubectl(['logs', 'crash'])).out).not.toBe(prev.out);

    await create('once', { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox',
      command: ['sh', '-c', 'echo done'] }] });
    await waitFor(async () => (await pod('once')).status?.phase === 'Succeeded', 60_000, 'once Succeeded');
    expect((await kubectl(['logs', 'once'])).out).toBe('done\n');
    const dir = podLogDir(nodeDirOf(paths.root, 'n1'), ref(await pod('once')));
    expect(readdirSync(join(dir, 'c'))).toEqual(['0.log']);
    await kubectl(['delete', 'pod', 'once', '--wait=true']);
    await waitFor(() => !existsSync(dir), 30_000, 'the pod\'s log directory to go');
  });
});
