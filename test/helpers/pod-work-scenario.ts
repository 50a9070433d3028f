// Issue 13's "Must show" in netns mode, as one scenario run against each cluster shape: node
// agents inside `kdp up` (test/netns/pod-work-up.test.ts) and as separate `kdp node` processes
// (test/netns/pod-work-node-processes.test.ts). The real kubectl (1.27: SPDY; 1.33: WebSocket)
// execs, copies, forwards, attaches, follows logs, runs a shell, runs a Job and sees a
// liveness restart, through the API server and the pods' nodes' kubelet API.
//
// Call inside a describe whose beforeAll starts the cluster; `workers` are two nodes to pin pods
// to (the rest are scheduled), so that every stream crosses to a node's kubelet.

import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import type { Client } from '../../src/client/types.js';
import { kubectlFor, kubectlPath } from '../apiserver/helpers/kubectl.js';
import { waitFor } from './cluster.js';

export interface PodWorkCluster {
  readonly kubeconfig: string;
  readonly client: Client;
  /** Two node names: `web` runs on the first, the Service's backend on the second. */
  readonly workers: readonly [string, string];
}

const MINORS = [27, 33] as const;
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const PTY_RUN = join(import.meta.dirname, '..', 'streaming', 'helpers', 'pty-run.py');

/** Runs argv on a pseudo-terminal (kubectl -t needs one), typing `input` after its first output. */
function onTerminal(argv: readonly string[], input: string, timeoutMs = 60_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('python3', [PTY_RUN, '100', '30', '100', '30', input, '--', ...argv], { timeout: timeoutMs },
      (e, out) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out }));
  });
}

/** One TCP exchange with kdp/echo through a local port: the line it answers. */
function echoOnce(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let b = '';
    s.on('connect', () => s.write('hi\n'));
    s.on('data', (d: Buffer) => {
      b += d;
      if (b.includes('\n')) { s.destroy(); resolve(b.slice(0, b.indexOf('\n'))); }
    });
    s.on('error', reject);
  });
}

/** `kubectl port-forward TARGET :PORT`: resolves with the local port it chose and a stopper. */
async function portForward(kubeconfig: string, minor: number, target: string, remote: number):
  Promise<{ port: number; stop(): void }> {
  const pf = spawn(kubectlPath(minor), ['--kubeconfig', kubeconfig, 'port-forward', target, `:${remote}`],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  pf.stderr!.on('data', (d: Buffer) => { err += d; });
  const port = await new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`port-forward ${target}: no port in 30 s (${err})`)), 30_000);
    pf.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(out);
      if (m) { clearTimeout(t); resolve(Number(m[1])); }
    });
    pf.once('exit', (code) => { clearTimeout(t); reject(new Error(`port-forward ${target} exited ${code}: ${err}`)); });
  }).catch((e) => { pf.kill(); throw e; });
  return { port, stop: () => pf.kill() };
}

export function podWorkScenario(cluster: () => PodWorkCluster): void {
  const kc = () => cluster().kubeconfig;
  const kubectl = (args: string[], o: { minor?: number; input?: string } = {}) =>
    kubectlFor(kc(), { timeoutMs: 90_000 })(args, { minor: o.minor ?? 33, input: o.input });
  const pod = (name: string) => cluster().client.get<Pod>(PODS, name);
  const create = (p: object) => cluster().client.create(PODS, { apiVersion: 'v1', kind: 'Pod', ...p } as Pod);
  const running = (name: string) => waitFor(async () => (await pod(name)).status?.containerStatuses?.[0]?.ready,
    60_000, `${name} ready`);

  it('pods on the nodes: web, the Service svc-web\'s backend, a shell pod', async () => {
    const [a, b] = cluster().workers;
    await create({ metadata: { name: 'web', namespace: 'default' }, spec: { nodeName: a,
      containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } });
    await create({ metadata: { name: 'backend', namespace: 'default', labels: { app: 'svc-web' } }, spec: { nodeName: b,
      containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } });
    await create({ metadata: { name: 'shell', namespace: 'default' }, spec: { nodeName: b, terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] } });
    await cluster().client.create({ group: '', version: 'v1', resource: 'services', namespace: 'default' },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc-web', namespace: 'default' },
        spec: { selector: { app: 'svc-web' }, ports: [{ port: 80, targetPort: 8080 }] } } as never);
    for (const name of ['web', 'backend', 'shell']) await running(name);
    expect((await pod('web')).spec?.nodeName).toBe(a);
    expect((await pod('backend')).spec?.nodeName).toBe(b);
  }, 90_000);

  for (const minor of MINORS) {
    it(`kubectl 1.${minor} exec: $HOSTNAME is the pod's name and the exit code comes back; -i pipes stdin`, async () => {
      const r = await kubectl(['exec', 'web', '--', 'sh', '-c', 'echo $HOSTNAME; exit 3'], { minor });
      expect(r).toMatchObject({ code: 3, out: 'web\n' });
      const i = await kubectl(['exec', '-i', 'shell', '--', 'sh', '-c', 'cat; echo done'], { minor, input: 'piped\nlines\n' });
      expect(i).toMatchObject({ code: 0, out: 'piped\nlines\ndone\n' });
    }, 60_000);

    it(`kubectl 1.${minor} exec -it: a terminal in the pod, typed input, the exit code`, async () => {
      const r = await onTerminal([kubectlPath(minor), '--kubeconfig', kc(), 'exec', '-it', 'shell', '--',
        'sh', '-c', 'read x; echo "got $x on $(hostname)"; tty; exit 4'], 'hello\n');
      expect(r.out).toContain('got hello on shell');
      expect(r.out).toMatch(/\/dev\/pts\/\d+/);
      expect(r.code).toBe(4);
    }, 60_000);

    it(`kubectl 1.${minor} cp copies into the pod's own /tmp and back`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kdp-cp-'));
      writeFileSync(join(dir, 'in.txt'), `payload-${minor}\n`);
      const to = await kubectl(['cp', join(dir, 'in.txt'), `shell:/tmp/copied-${minor}.txt`], { minor });
      expect(to.err).toBe('');
      expect((await kubectl(['exec', 'shell', '--', 'cat', `/tmp/copied-${minor}.txt`])).out).toBe(`payload-${minor}\n`);
      expect(existsSync(`/tmp/copied-${minor}.txt`)).toBe(false);
      const back = await kubectl(['cp', `shell:/tmp/copied-${minor}.txt`, join(dir, 'back.txt')], { minor });
      expect(back.code).toBe(0);
      expect(readFileSync(join(dir, 'back.txt'), 'utf8')).toBe(`payload-${minor}\n`);
    }, 60_000);

    it(`kubectl 1.${minor} port-forward to a pod and to a Service: 100 sequential and 20 parallel `
      + 'connections, each answered by the right pod', async () => {
      // The Service's port 80 is its backend's 8080 (kubectl resolves the targetPort).
      for (const [target, remote, want] of [['pod/web', 8080, 'web'], ['svc/svc-web', 80, 'backend']] as const) {
        const pf = await portForward(kc(), minor, target, remote);
        try {
          const answers: string[] = [];
          for (let i = 0; i < 100; i++) answers.push(await echoOnce(pf.port));
          answers.push(...await Promise.all(Array.from({ length: 20 }, () => echoOnce(pf.port))));
          expect(answers).toHaveLength(120);
          for (const a of answers) expect(a).toMatch(new RegExp(`^pod=${want} from=127\\.0\\.0\\.1:\\d+ to=127\\.0\\.0\\.1:8080`));
        } finally {
          pf.stop();
        }
      }
    }, 120_000);

    it(`kubectl 1.${minor} run --rm -it: a shell on a terminal in a new pod, deleted afterwards`, async () => {
      const name = `term-${minor}`;
      const r = await onTerminal([kubectlPath(minor), '--kubeconfig', kc(), 'run', name, '-it', '--rm', '--restart=Never',
        '--image=busybox', '--', 'sh'], 'echo "on-$(hostname)-$((6*7))"; exit 5\n', 90_000);
      expect(r.out).toContain(`on-${name}-42`);
      await waitFor(async () => !(await cluster().client.list<Pod>(PODS)).items.some((p) => p.metadata.name === name)
        || undefined, 30_000, `${name} deleted`);
    }, 120_000);
  }

  it('kubectl attach -i reaches a running container\'s stdin and its output (1.27 and 1.33)', async () => {
    for (const minor of MINORS) {
      const name = `attach-${minor}`;
      await create({ metadata: { name, namespace: 'default' }, spec: { restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox', stdin: true, stdinOnce: true,
          command: ['sh', '-c', 'while read l; do echo "got $l"; done; echo eof'] }] } });
      await waitFor(async () => (await pod(name)).status?.containerStatuses?.[0]?.state?.running, 60_000, `${name} running`);
      const r = await kubectl(['attach', '-i', name], { minor, input: 'one\ntwo\n' });
      expect(r.out).toContain('got one\ngot two\n');
      await waitFor(async () => (await pod(name)).status?.containerStatuses?.[0]?.state?.terminated, 30_000,
        `${name} ended (stdinOnce closed its input)`);
      expect((await kubectl(['logs', name])).out).toBe('got one\ngot two\neof\n');
    }
  }, 120_000);

  it('kubectl logs -f follows what the container writes', async () => {
    await create({ metadata: { name: 'ticker', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'i=0; while :; do echo tick-$i; i=$((i+1)); sleep 0.2; done'] }] } });
    await running('ticker');
    for (const minor of MINORS) {
      const f = spawn(kubectlPath(minor), ['--kubeconfig', kc(), 'logs', '-f', 'ticker'], { stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        let out = '';
        f.stdout!.on('data', (d: Buffer) => { out += d; });
        const first = await waitFor(() => /tick-(\d+)\n/.exec(out)?.[1], 30_000, 'a first line');
        const later = Number(first) + 5;
        await waitFor(() => out.includes(`tick-${later}\n`) || undefined, 30_000, `tick-${later} followed`);
        expect(f.exitCode).toBeNull();
      } finally {
        f.kill();
      }
    }
  }, 90_000);

  it('a Job whose pod runs a command completes and its log is the command\'s output', async () => {
    expect((await kubectl(['create', 'job', 'hi', '--image=busybox', '--', 'sh', '-c', 'echo hi from $HOSTNAME'])).code).toBe(0);
    const w = await kubectl(['wait', '--for=condition=complete', 'job/hi', '--timeout=90s']);
    expect(w).toMatchObject({ code: 0, err: '' });
    expect((await kubectl(['logs', 'job/hi'])).out).toMatch(/^hi from hi-[a-z0-9]{5}\n$/);
  }, 120_000);

  it('a failing liveness probe restarts the container; logs --previous shows the run before', async () => {
    await create({ metadata: { name: 'live', namespace: 'default' }, spec: { terminationGracePeriodSeconds: 2,
      nodeName: cluster().workers[0],
      containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'touch /tmp/healthy; echo run-$(date +%s%N); exec sleep 3600'],
        livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, periodSeconds: 2, failureThreshold: 2 } }] } });
    await running('live');
    const first = (await kubectl(['logs', 'live'])).out;
    expect(first).toMatch(/^run-\d+\n$/);
    expect((await kubectl(['exec', 'live', '--', 'rm', '/tmp/healthy'])).code).toBe(0);
    await waitFor(async () => {
      const s = (await pod('live')).status?.containerStatuses?.[0];
      return s?.restartCount === 1 && s.state?.running && s.ready;
    }, 60_000, 'live restarted');
    for (const minor of MINORS) expect((await kubectl(['logs', 'live', '--previous'], { minor })).out).toBe(first);
    expect((await kubectl(['logs', 'live'])).out).not.toBe(first);
  }, 90_000);

  it('a pod\'s writes to /etc/hosts and /tmp reach neither the host nor another pod', async () => {
    const hostHosts = readFileSync('/etc/hosts', 'utf8');
    expect((await kubectl(['exec', 'shell', '--', 'sh', '-c', 'echo 1.2.3.4 evil >> /etc/hosts && echo x > /tmp/kdp-pw-mark'])).code)
      .toBe(0);
    expect(readFileSync('/etc/hosts', 'utf8')).toBe(hostHosts);
    expect(existsSync('/tmp/kdp-pw-mark')).toBe(false);
    expect((await kubectl(['exec', 'shell', '--', 'cat', '/etc/hosts'])).out).toContain('1.2.3.4 evil');
    expect((await kubectl(['exec', 'web', '--', 'cat', '/etc/hosts'])).out).not.toContain('evil');
    expect((await kubectl(['exec', 'web', '--', 'ls', '/tmp/kdp-pw-mark'])).code).not.toBe(0);
  }, 60_000);
}
