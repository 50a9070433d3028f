// `kdp crictl` against a virtual `kdp up` cluster: each node agent serves its runtime endpoint
// (a 0600 unix socket in the data dir); pods, ps, images, inspectp, inspect and logs show what
// the node's runtime holds with crictl's columns, and the IDs are the ones the API shows
// (containerStatuses[].containerID = kdp://<id>). Bad input names the node or the ID.

import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { runtimeEndpointPath } from '../../src/kubelet/runtime-endpoint/listen.js';
import { sandboxId } from '../../src/kubelet/runtime-endpoint/ids.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
/** Where each cell of a crictl table line starts (cells are 3 or more spaces apart). */
const starts = (line: string) => [...line.matchAll(/(?:^|\s{3,})(\S)/g)].map((m) => m.index! + m[0].length - 1);

describe('kdp crictl (virtual cluster)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-crictl-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster;
  const crictl = (...args: string[]) => kdp('crictl', '--data-dir', dataDir, ...args);
  const running = (name: string) => waitFor(async () => {
    const p = await cluster.client.get<Pod>(PODS, name);
    return p.status?.containerStatuses?.every((c) => c.state?.running) ? p : undefined;
  }, 30_000, `${name} running`);

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 20, progress: () => {} });
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default',
      labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'nginx', image: 'nginx:1.27' },
      { name: 'side', image: 'busybox' }] } } as Pod);
  }, 60_000);
  afterAll(async () => { await cluster?.close(); }, 30_000);

  it('each node serves its runtime endpoint as a unix socket of mode 0600', () => {
    for (const n of ['n1', 'n2']) {
      const st = statSync(runtimeEndpointPath(dataDir, n));
      expect(st.isSocket()).toBe(true);
      expect(st.mode & 0o777).toBe(0o600);
      expect(st.uid).toBe(process.getuid!());
    }
  });

  it('pods: crictl\'s columns, the sandbox ID truncated to 13, Ready', async () => {
    const pod = await running('web');
    const r = await crictl('--node', 'n1', 'pods');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const [header, ...rows] = r.out.trimEnd().split('\n');
    expect(header!.split(/\s{3,}/)).toEqual(['POD ID', 'CREATED', 'STATE', 'NAME', 'NAMESPACE', 'ATTEMPT', 'RUNTIME']);
    // tabwriter's columns: at least 20 wide, every row's cells start where the header's do.
    expect(header!.indexOf('CREATED')).toBe(20);
    const row = rows.find((l) => l.includes(' web '))!;
    expect(starts(row)).toEqual(starts(header!));
    expect(row.split(/\s{3,}/)).toEqual([sandboxId(pod.metadata.uid!).slice(0, 13), expect.stringMatching(/ ago$/),
      'Ready', 'web', 'default', '0', '(default)']);
    expect((await crictl('--node', 'n2', 'pods')).out).not.toContain(' web ');
  });

  it('ps: container IDs are the API\'s containerStatuses[].containerID', async () => {
    const pod = await running('web');
    const ids = Object.fromEntries(pod.status!.containerStatuses!.map((c) => [c.name, c.containerID!]));
    expect(ids.nginx).toMatch(/^kdp:\/\/[0-9a-f]{64}$/);
    const table = await crictl('--node', 'n1', 'ps');
    const [header, ...rows] = table.out.trimEnd().split('\n');
    expect(header!.split(/\s{3,}/)).toEqual(['CONTAINER', 'IMAGE', 'CREATED', 'STATE', 'NAME', 'ATTEMPT', 'POD ID',
      'POD', 'NAMESPACE']);
    const nginx = rows.find((l) => l.includes(' nginx '))!.split(/\s{3,}/);
    expect(nginx[0]).toBe(ids.nginx!.slice('kdp://'.length, 'kdp://'.length + 13));
    expect(nginx.slice(3)).toEqual(['Running', 'nginx', '0', sandboxId(pod.metadata.uid!).slice(0, 13), 'web', 'default']);
    const json = JSON.parse((await crictl('--node', 'n1', 'ps', '-o', 'json')).out);
    const mine = json.containers.filter((c: any) => c.labels['io.kubernetes.pod.name'] === 'web');
    expect(Object.fromEntries(mine.map((c: any) => [c.metadata.name, `kdp://${c.id}`]))).toEqual(ids);
    expect(mine[0]).toMatchObject({ state: 'CONTAINER_RUNNING', podSandboxId: sandboxId(pod.metadata.uid!),
      createdAt: expect.stringMatching(/^\d{19}$/) });
    expect((await crictl('--node', 'n1', 'ps', '-q')).out.split('\n')).toContain(ids.side!.slice('kdp://'.length));
  });

  it('images: the references the node\'s pods use, as docker.io names with tags', async () => {
    await running('web');
    const r = await crictl('--node', 'n1', 'images');
    const lines = r.out.trimEnd().split('\n').map((l) => l.split(/\s{3,}/));
    expect(lines[0]).toEqual(['IMAGE', 'TAG', 'IMAGE ID', 'SIZE']);
    expect(lines).toContainEqual(['docker.io/library/nginx', '1.27', expect.stringMatching(/^[0-9a-f]{13}$/), '0B']);
    expect(lines).toContainEqual(['docker.io/library/busybox', 'latest', expect.stringMatching(/^[0-9a-f]{13}$/), '0B']);
  });

  it('inspectp and inspect take ID prefixes and print the status as JSON', async () => {
    const pod = await running('web');
    const sb = sandboxId(pod.metadata.uid!);
    const p = JSON.parse((await crictl('--node', 'n1', 'inspectp', sb.slice(0, 6))).out);
    expect(p.status).toMatchObject({ id: sb, state: 'SANDBOX_READY', network: { ip: pod.status!.podIP },
      metadata: { name: 'web', namespace: 'default', uid: pod.metadata.uid } });
    expect(p.status.labels).toMatchObject({ app: 'web', 'io.kubernetes.pod.name': 'web' });
    const id = pod.status!.containerStatuses![0]!.containerID!.slice('kdp://'.length);
    const c = JSON.parse((await crictl('--node', 'n1', 'inspect', id.slice(0, 8))).out);
    expect(c.status).toMatchObject({ id, state: 'CONTAINER_RUNNING', metadata: { attempt: 0 },
      logPath: expect.stringMatching(/\/nodes\/n1\/pods\/default_web_[0-9a-f-]+\/nginx\/0\.log$/) });
  });

  it('logs shows the container\'s log; exec on a virtual node says that it runs no processes', async () => {
    const pod = await running('web');
    const id = pod.status!.containerStatuses!.find((c) => c.name === 'nginx')!.containerID!.slice('kdp://'.length);
    const logs = await crictl('--node', 'n1', 'logs', id.slice(0, 13));
    expect(logs.out).toContain('started container nginx (image nginx:1.27)');
    expect((await crictl('--node', 'n1', 'logs', '--tail', '1', id)).out.trimEnd().split('\n')).toHaveLength(1);
    const ex = await crictl('--node', 'n1', 'exec', id, 'sh', '-c', 'echo hi');
    expect(ex.code).toBe(1);
    expect(ex.err).toContain('virtual nodes run no processes');
  });

  it('a completed pod\'s sandbox is NotReady and its container shows only with ps -a', async () => {
    await cluster.client.create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'once', namespace: 'default',
      annotations: { 'kdp.io/virtual-run-seconds': '0.1' } }, spec: { nodeName: 'n1', restartPolicy: 'Never',
      containers: [{ name: 'job', image: 'busybox', command: ['true'] }] } } as Pod);
    await waitFor(async () => (await cluster.client.get<Pod>(PODS, 'once')).status?.phase === 'Succeeded', 30_000, 'once done');
    const pod = await cluster.client.get<Pod>(PODS, 'once');
    await waitFor(async () => (await crictl('--node', 'n1', 'pods', '--name', '^once$')).out.includes('NotReady'),
      30_000, 'sandbox NotReady');
    expect((await crictl('--node', 'n1', 'ps', '--name', '^job$')).out.trimEnd().split('\n')).toHaveLength(1);
    const all = await crictl('--node', 'n1', 'ps', '-a', '--name', '^job$');
    const row = all.out.trimEnd().split('\n')[1]!.split(/\s{3,}/);
    expect(row[0]).toBe(pod.status!.containerStatuses![0]!.containerID!.slice('kdp://'.length, 'kdp://'.length + 13));
    expect(row[3]).toBe('Exited');
  });

  it('bad input: unknown node, unknown or malformed ID, missing --node, unknown sub-command', async () => {
    const unknown = await crictl('--node', 'n9', 'pods');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/KDP_NOT_FOUND.*node n9: no runtime endpoint at .*\(nodes with one in .*: n1, n2\)/);
    const id = await crictl('--node', 'n1', 'inspect', 'abcdef0123');
    expect(id.err).toContain('node n1: no container with ID "abcdef0123"');
    expect((await crictl('--node', 'n1', 'inspectp', 'xyz')).err).toContain('pod sandbox ID "xyz": expected hexadecimal');
    expect((await crictl('--node', 'n1', 'logs')).code).toBe(2);
    const noNode = await crictl('pods');
    expect(noNode.code).toBe(2);
    expect(noNode.err).toContain('--node');
    expect((await crictl('--node', 'n1', 'rmp')).err).toContain('unknown crictl command "rmp"');
    expect((await crictl('--node', '../etc', 'pods')).err).toContain('is not a node name');
    expect((await crictl('--node', 'n1', 'ps', '--state', 'sleeping')).code).toBe(2);
  });
});
