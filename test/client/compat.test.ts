// One scenario — create, list, watch from the list's resourceVersion, a strategic-merge patch,
// server-side apply with a conflict and a forced apply, delete, a pod's logs — through the clients people
// write scripts and operators with: the real kubectl (1.27, 1.33), @kubernetes/client-node and
// the official Python client (Debian's python3-kubernetes). Each reports what it saw in the same
// shape; every client must see the same thing.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster } from '../../src/cluster/up.js';
import { kubectlFor, kubectlMissing, kubectlPath } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

interface Harness { readonly dir: string; close(): Promise<void> }

interface Seen {
  created: string;
  listed: string[];
  /** `TYPE:data keys` of each watch event after the list, up to the DELETED one. */
  events: string[];
  /** The Apply entries of managedFields after the first apply. */
  managers: string[];
  /** HTTP status of a second manager's apply of a field the first owns. */
  conflict: number;
  /** data.c after that manager's forced apply. */
  forced: string;
  /** HTTP status of a get after the delete. */
  gone: number;
  /** The first line of the `logger` pod's log (through the API server and the kubelet). */
  log: string;
}

const expected = (name: string): Seen => ({
  created: name, listed: [name], events: ['MODIFIED:a,b', 'MODIFIED:a,b,c', 'MODIFIED:a,b,c', 'DELETED:a,b,c'],
  managers: ['compat/Apply'], conflict: 409, forced: '4', gone: 404, log: firstLogLine,
});
let firstLogLine = '';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('../fixtures/clients/compat.py', import.meta.url));
function pythonClientMissing(): boolean {
  const ok = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0;
  if (!ok && process.env.CI === 'true') throw new Error('CI=true but the Python client (python3-kubernetes) is missing');
  return !ok;
}

const applyDoc = (name: string, c: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { c } });
const keys = (o: { data?: Record<string, string> | null }) => Object.keys(o.data ?? {}).sort().join(',');
const appliers = (mf: Array<{ manager?: string; operation?: string }> | undefined) =>
  (mf ?? []).filter((m) => m.operation === 'Apply').map((m) => `${m.manager}/${m.operation}`).sort();

async function viaKubectl(h: Harness, minor: number, name: string): Promise<Seen> {
  const k = kubectlFor(join(h.dir, 'kubeconfig'), { minor });
  const must = async (args: string[], input?: string) => {
    const r = await k(args, { input });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.err}`);
    return r.out;
  };
  const created = JSON.parse(await must(['create', '-f', '-', '-o', 'json'],
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { compat: name } }, data: { a: '1' } })));
  // `get -o json` prints a List kubectl builds itself (resourceVersion ""); the server's list
  // and its resourceVersion come from --raw.
  const list = JSON.parse(await must(['get', '--raw', `/api/v1/namespaces/default/configmaps?labelSelector=compat%3D${name}`]));
  const rv = list.metadata.resourceVersion as string;
  // The watch is kubectl's too (get --raw streams the watch as upstream serves it).
  const events: string[] = [];
  const w = spawn(kubectlPath(minor), ['--kubeconfig', join(h.dir, 'kubeconfig'), 'get', '--raw',
    `/api/v1/namespaces/default/configmaps?watch=1&labelSelector=compat%3D${name}&resourceVersion=${rv}&timeoutSeconds=30`]);
  let buf = '';
  const done = new Promise<void>((resolve) => {
    w.stdout.on('data', (d) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const ev = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        events.push(`${ev.type}:${keys(ev.object)}`);
        if (ev.type === 'DELETED') { w.kill(); resolve(); }
      }
    });
    w.on('close', () => resolve());
  });
  await new Promise((r) => setTimeout(r, 500)); // the watch is open before the writes
  await must(['patch', 'cm', name, '-p', '{"data":{"b":"2"}}']);
  await must(['apply', '--server-side', '--field-manager=compat', '-f', '-'], applyDoc(name, '3'));
  const got = JSON.parse(await must(['get', 'cm', name, '-o', 'json', '--show-managed-fields']));
  const second = await k(['apply', '--server-side', '--field-manager=other', '-f', '-'], { input: applyDoc(name, '4') });
  const conflict = second.code === 0 ? 200 : /conflict/i.test(second.err) ? 409 : 500;
  const forced = JSON.parse(await must(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-o', 'json', '-f', '-'],
    applyDoc(name, '4')));
  await must(['delete', 'cm', name]);
  await done;
  const after = await k(['get', 'cm', name]);
  const log = (await must(['logs', 'logger'])).split('\n')[0]!;
  return { created: created.metadata.name, listed: list.items.map((i: V1ConfigMap) => i.metadata!.name!), events,
    managers: appliers(got.metadata.managedFields), conflict, forced: forced.data.c,
    gone: after.code !== 0 && /NotFound/.test(after.err) ? 404 : 200, log };
}

async function viaClientNode(h: Harness, name: string): Promise<Seen> {
  const kc = new KubeConfig();
  kc.loadFromFile(join(h.dir, 'kubeconfig'));
  const api = kc.makeApiClient(CoreV1Api);
  const namespace = 'default';
  const created = await api.createNamespacedConfigMap({ namespace,
    body: { metadata: { name, labels: { compat: name } }, data: { a: '1' } } });
  const list = await api.listNamespacedConfigMap({ namespace, labelSelector: `compat=${name}` });
  const events: string[] = [];
  let finished!: () => void;
  const done = new Promise<void>((r) => { finished = r; });
  const req = await new Watch(kc).watch('/api/v1/namespaces/default/configmaps',
    { labelSelector: `compat=${name}`, resourceVersion: list.metadata!.resourceVersion!, timeoutSeconds: 30 },
    (type: string, obj: V1ConfigMap) => {
      events.push(`${type}:${keys(obj)}`);
      if (type === 'DELETED') finished();
    }, () => finished());
  await api.patchNamespacedConfigMap({ name, namespace, body: { data: { b: '2' } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
  const apply = (manager: string, c: string, force?: boolean) => api.patchNamespacedConfigMap(
    { name, namespace, fieldManager: manager, ...(force ? { force } : {}), body: JSON.parse(applyDoc(name, c)) },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply));
  const applied = await apply('compat', '3');
  let conflict = 200;
  try { await apply('other', '4'); } catch (e) { conflict = (e as { code?: number }).code ?? 500; }
  const forced = await apply('other', '4', true);
  await api.deleteNamespacedConfigMap({ name, namespace });
  await done;
  req.abort();
  let gone = 200;
  try { await api.readNamespacedConfigMap({ name, namespace }); } catch (e) { gone = (e as { code?: number }).code ?? 500; }
  const log = String(await api.readNamespacedPodLog({ name: 'logger', namespace })).split('\n')[0]!;
  return { created: created.metadata!.name!, listed: list.items.map((i) => i.metadata!.name!), events,
    managers: appliers(applied.metadata?.managedFields), conflict, forced: forced.data!.c!, gone, log };
}

async function viaPython(h: Harness, name: string): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const p = spawn(PYTHON, [SCRIPT, join(h.dir, 'kubeconfig'), name], { env: { PATH: '/usr/bin:/bin', HOME: h.dir } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => {
      if (code !== 0) { reject(new Error(`python client exited ${code}: ${err}`)); return; }
      const seen = JSON.parse(out) as Seen;
      resolve({ ...seen, managers: seen.managers.filter((m) => m.endsWith('/Apply')) });
    });
  });
}

describe('one scenario through kubectl, client-node and the Python client', () => {
  let h: Harness;
  beforeAll(async () => {
    // A one-node virtual cluster as `kdp up` runs it, with a pod whose log every client reads.
    const dir = mkdtempSync(join(tmpdir(), 'kdp-compat-'));
    const cluster = await startCluster({ paths: dataDirPaths(dir), nodes: 1, port: 0, proxyMode: 'iptables',
      timeScale: 10, dns: false, progress: () => {} });
    h = { dir, close: async () => { await cluster.close(); rmSync(dir, { recursive: true, force: true }); } };
    const k = kubectlFor(join(dir, 'kubeconfig'), { minor: 33 });
    const run = await k(['run', 'logger', '--image=kdp/echo', '--restart=Never']);
    if (run.code !== 0) throw new Error(run.err);
    await waitFor(async () => {
      const r = await k(['logs', 'logger']);
      return r.code === 0 && r.out.trim() ? (firstLogLine = r.out.split('\n')[0]!) : undefined;
    }, 30_000, 'the logger pod\'s first log line');
  }, 90_000);
  afterAll(async () => { await h?.close(); }, 60_000);

  for (const minor of [27, 33]) {
    it.skipIf(kubectlMissing(minor))(`kubectl 1.${minor}`, async () => {
      expect(await viaKubectl(h, minor, `kubectl-${minor}`)).toEqual(expected(`kubectl-${minor}`));
    }, 60_000);
  }

  it('@kubernetes/client-node', async () => {
    expect(await viaClientNode(h, 'client-node')).toEqual(expected('client-node'));
  }, 60_000);

  it.skipIf(pythonClientMissing())('the official Python client (python3-kubernetes)', async () => {
    expect(await viaPython(h, 'python')).toEqual(expected('python'));
  }, 60_000);
});
