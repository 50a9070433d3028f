// `kdp crictl` on a netns node (root): the node's runtime endpoint is a root-owned 0600 socket;
// exec runs in the pod's namespaces (its hostname, its eth0) with the exit code passed back, with
// stdin (-i) and a terminal (-t) through the streaming protocol; logs show the container's own
// output; a finished Job's container is listed exited by ps -a under the API's containerID.

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { runtimeEndpointPath } from '../../src/kubelet/runtime-endpoint/listen.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const KDP = join(import.meta.dirname, '../../bin/kdp.js');

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'unshare']))('kdp crictl on a netns node', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-cri-')));
  let cluster: RunningCluster;
  const crictl = (...args: string[]) => kdp('crictl', '--data-dir', paths.root, '--node', 'n1', ...args);
  /** The child-process kdp, for stdin. */
  const crictlProcess = (input: string, ...args: string[]) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const child = execFile(process.execPath, [KDP, 'crictl', '--data-dir', paths.root, '--node', 'n1', ...args],
        { timeout: 30_000 }, (e, out, err) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err }));
      child.stdin!.end(input);
    });
  const idOf = async (name: string, container = 'c') => {
    const p = await waitFor(async () => {
      const x = await cluster.client.get<Pod>(PODS, name);
      const st = x.status?.containerStatuses?.find((c) => c.name === container);
      return st?.state?.running || st?.state?.terminated ? x : undefined;
    }, 60_000, `${name} started`);
    return p.status!.containerStatuses!.find((c) => c.name === container)!.containerID!.replace(/^kdp:\/\//, '');
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      progress: () => {} });
    for (const [name, script, restartPolicy] of [['box', 'echo started-$HOSTNAME; exec sleep 3600', 'Always'],
      ['once', 'echo job-done; exit 0', 'Never']] as const) {
      await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
        spec: { restartPolicy, containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', script] }] } } as Pod);
    }
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(buildHostExec(), paths.hostState, hostPrefixFor(paths));
  }, 60_000);

  it('the runtime endpoint is a unix socket owned by root with mode 0600', () => {
    const st = statSync(runtimeEndpointPath(paths.root, 'n1'));
    expect(st.isSocket()).toBe(true);
    expect(st.uid).toBe(0);
    expect(st.mode & 0o777).toBe(0o600);
  });

  it('exec runs in the pod\'s namespaces and passes its exit code back', async () => {
    const id = await idOf('box');
    const ip = (await cluster.client.get<Pod>(PODS, 'box')).status!.podIP!;
    const host = await crictl('exec', id.slice(0, 13), 'hostname');
    expect(host).toMatchObject({ code: 0, out: 'box\n' });
    expect((await crictl('exec', id, 'ip', '-o', '-4', 'addr', 'show', 'eth0')).out).toContain(` ${ip}/`);
    const three = await crictl('exec', id, 'sh', '-c', 'echo out; echo err >&2; exit 3');
    expect(three).toMatchObject({ code: 3, out: 'out\n', err: 'err\n' });
  }, 60_000);

  it('exec -i pipes stdin and -t gives the command a terminal (streaming)', async () => {
    const id = await idOf('box');
    const upper = await crictlProcess('hello crictl\n', 'exec', '-i', id, 'tr', 'a-z', 'A-Z');
    expect(upper).toMatchObject({ code: 0, out: 'HELLO CRICTL\n' });
    const code = await crictlProcess('', 'exec', '-i', id, 'sh', '-c', 'read x; exit 4');
    expect(code.code).toBe(4);
    const tty = await crictlProcess('', 'exec', '-t', id, 'tty');
    expect(tty.out).toMatch(/^\/dev\/pts\/\d+\r?\n$/);
  }, 60_000);

  it('logs show the container\'s output', async () => {
    const id = await idOf('box');
    await waitFor(async () => (await crictl('logs', id)).out === 'started-box\n', 30_000, 'box log');
    // inspect names the run's CRI log file (`<time> stdout F <line>`), as containerd's logPath.
    const { status } = JSON.parse((await crictl('inspect', id)).out);
    expect(status.logPath).toMatch(/\/nodes\/n1\/pods\/default_box_[0-9a-f-]+\/c\/0\.log$/);
    expect(readFileSync(status.logPath, 'utf8')).toMatch(/^\S+ stdout F started-box\n/);
  }, 60_000);

  it('logs -f follows the container\'s output until it exits', async () => {
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ticker', namespace: 'default' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox',
        command: ['sh', '-c', 'for i in 1 2 3; do echo tick$i; sleep 1; done'] }] } } as Pod);
    const id = await idOf('ticker');
    // Asked while it runs (its state is checked first), answered once it has exited.
    const running = JSON.parse((await crictl('inspect', id)).out).status.state;
    const r = await crictl('logs', '-f', id);
    if (running === 'CONTAINER_RUNNING') expect(JSON.parse((await crictl('inspect', id)).out).status.state).toBe('CONTAINER_EXITED');
    expect(r).toMatchObject({ code: 0, out: 'tick1\ntick2\ntick3\n' });
  }, 60_000);

  it('ps -a lists the finished Job container exited under the API\'s containerID; ps alone does not', async () => {
    await waitFor(async () => (await cluster.client.get<Pod>(PODS, 'once')).status?.phase === 'Succeeded', 60_000,
      'once Succeeded');
    const id = await idOf('once');
    const all = JSON.parse((await crictl('ps', '-a', '-o', 'json')).out).containers;
    expect(all.find((c: any) => c.id === id)).toMatchObject({ state: 'CONTAINER_EXITED',
      labels: { 'io.kubernetes.pod.name': 'once' } });
    expect((await crictl('ps', '-q')).out).not.toContain(id);
    expect((await crictl('logs', id.slice(0, 13))).out).toBe('job-done\n');
    const pods = await crictl('pods', '--name', '^once$');
    expect(pods.out.split('\n')[1]).toContain('NotReady');
    // Bad input: exec into a container that is not running names it and its pod.
    const ex = await crictl('exec', id, 'true');
    expect(ex.code).toBe(1);
    expect(ex.err).toMatch(/node n1: container [0-9a-f]{13} \(c in pod default\/once\) is not running/);
  }, 90_000);
});
