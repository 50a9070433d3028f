// kubectl exec / port-forward into netns pods through the API server and the node's kubelet API
// (HTTPS on the node's IP inside its namespace, SubjectAccessReview authorisation), with the
// real kubectl 1.27 (SPDY) and 1.33 (WebSocket).

import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { kubectlPath } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('kubectl exec and port-forward into netns pods', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-exec-')));
  let cluster: RunningCluster;
  const kubectl = (minor: number, args: string[], input?: string) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const p = execFile(kubectlPath(minor), ['--kubeconfig', paths.kubeconfig, ...args], { timeout: 30_000 },
        (e, out, err) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err }));
      if (input !== undefined) p.stdin!.end(input);
    });

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 5, dataPlane: 'netns',
      progress: () => {} });
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName: 'n2', containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } as Pod);
    await waitFor(async () => (await cluster.client.get<Pod>(PODS, 'web')).status?.containerStatuses?.[0]?.ready, 30_000, 'web ready');
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, hostPrefixFor(paths));
  }, 30_000);

  for (const minor of [27, 33]) {
    it(`kubectl 1.${minor} exec runs in the pod's network namespace, with stdin and exit codes`, async () => {
      const ip = (await cluster.client.get<Pod>(PODS, 'web')).status!.podIP!;
      const r = await kubectl(minor, ['exec', 'web', '--', 'ip', '-o', '-4', 'addr', 'show', 'dev', 'eth0']);
      expect(r.err).toBe('');
      expect(r.out).toContain(`inet ${ip}/`);
      expect((await kubectl(minor, ['exec', 'web', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']))).toMatchObject({
        code: 3, out: 'out\n' });
      expect((await kubectl(minor, ['exec', '-i', 'web', '--', 'cat'], 'piped\n')).out).toBe('piped\n');
      const missing = await kubectl(minor, ['exec', 'web', '-c', 'nope', '--', 'true']);
      expect(missing.code).not.toBe(0);
      expect(missing.err).toContain('container nope is not valid for pod web');
    }, 60_000);
  }

  it('kubectl exec -it gets a real terminal in the pod: its size, resizes, typed input, exit code', async () => {
    const ptyRun = join(import.meta.dirname, '..', 'streaming', 'helpers', 'pty-run.py');
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile('python3', [ptyRun, '100', '30', '120', '40', 'hello\n', '--', kubectlPath(33), '--kubeconfig', paths.kubeconfig,
        'exec', '-it', 'web', '--', 'sh', '-c', 'stty size; read x; echo "got $x"; stty size; tty; exit 4'],
      { timeout: 30_000 }, (e, out) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out }));
    });
    expect(r.out).toContain('30 100');
    expect(r.out).toContain('got hello');
    expect(r.out).toContain('40 120');
    expect(r.out).toMatch(/\/dev\/pts\/\d+/);
    expect(r.code).toBe(4);
  }, 60_000);

  it('kubectl debug -it adds an ephemeral container that runs in the pod\'s namespace, attached on a terminal', async () => {
    const ptyRun = join(import.meta.dirname, '..', 'streaming', 'helpers', 'pty-run.py');
    const ip = (await cluster.client.get<Pod>(PODS, 'web')).status!.podIP!;
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile('python3', [ptyRun, '100', '30', '100', '30', 'ip -o -4 addr show eth0; echo dbg-$((6*7)); exit\n', '--',
        kubectlPath(33), '--kubeconfig', paths.kubeconfig, 'debug', '-it', 'web', '--image=busybox', '--container=dbg'],
      { timeout: 45_000 }, (e, out) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out }));
    });
    expect(r.out).toContain('dbg-42');
    expect(r.out).toContain(`inet ${ip}/`);
    const p = await waitFor(async () => {
      const cur = await cluster.client.get<Pod & { status: { ephemeralContainerStatuses?: Array<{ name: string; state: object }> } }>(PODS, 'web');
      return cur.status.ephemeralContainerStatuses?.find((c) => c.name === 'dbg' && c.state && 'terminated' in c.state) ? cur : undefined;
    }, 20_000, 'the debug container terminated');
    expect(p.status.ephemeralContainerStatuses?.find((c) => c.name === 'dbg')).toMatchObject({ image: 'busybox' });
  }, 60_000);

  it('a user without pods/exec gets 403; the kubelet refuses callers without a client certificate (401)', async () => {
    // jane may read pods (kubectl reads the pod first) but not exec into them.
    const rbac = (resource: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource, namespace: 'default' });
    await cluster.client.create(rbac('roles'), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role',
      metadata: { name: 'pod-reader', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] } as never);
    await cluster.client.create(rbac('rolebindings'), { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
      metadata: { name: 'jane-reads', namespace: 'default' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role',
        name: 'pod-reader' }, subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }] } as never);
    const r = await kubectl(33, ['exec', '--as', 'jane', 'web', '--', 'true']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/pods "web" is forbidden: User "jane" cannot (get|create) resource "pods\/exec" in API group "" in the namespace "default"/);
    const n2 = cluster.nodes.find((n) => n.name === 'n2')!;
    const { stdout } = await exec.run(process.execPath, ['-e', `
      require('node:https').get({ host: '${n2.ip}', port: 10250, path: '/pods', rejectUnauthorized: false }, (r) => {
        console.log(r.statusCode); r.resume();
      }).on('error', (e) => console.log('error', e.message));`], { netns: `${hostPrefixFor(paths)}-n1`, timeoutMs: 10_000 });
    expect(stdout.trim()).toBe('401');
  });

  it('kubectl port-forward reaches the pod\'s port through the kubelet', async () => {
    const pf = spawn(kubectlPath(33), ['--kubeconfig', paths.kubeconfig, 'port-forward', 'pod/web', '18089:8080'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise((r) => pf.stdout!.once('data', r));
      const answers: string[] = [];
      for (let i = 0; i < 5; i++) {
        answers.push(await new Promise<string>((resolve, reject) => {
          const s = connect(18089, '127.0.0.1');
          let b = '';
          s.on('connect', () => s.write('hi\n'));
          s.on('data', (d: Buffer) => { b += d; if (b.includes('\n')) { s.destroy(); resolve(b); } });
          s.on('error', reject);
        }));
      }
      for (const a of answers) expect(a).toMatch(/^pod=web from=127\.0\.0\.1:\d+ to=127\.0\.0\.1:8080/);
    } finally {
      pf.kill();
    }
  }, 60_000);
});
