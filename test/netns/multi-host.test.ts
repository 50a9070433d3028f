// Three simulated hosts (issue 19): the control-plane host h1 (`kdp up --hosts 3`, its node n1)
// and two hosts h2, h3 that join as kubeadm's workers do: on each, `kdp sh hK -- kdp node join
// https://172.18.0.1:PORT --token … --discovery-token-ca-cert-hash sha256:…` — h2 with the line
// `kdp up` printed, h3 with one `kdp token create --print-join-command` printed — each its own
// process group, running inside its host's namespace (where the API server is reachable only
// over the underlay, through the router) with a data dir of its own. Each host is an underlay
// namespace with its own bridge and subnet, joined only through a router namespace, so host-gw
// cannot work between them and the VXLAN backend must. A Deployment spreads over the two joined
// hosts; pods talk across hosts with real connections, NAT-free; the VTEP entries come from the
// Nodes' annotations; the lab cloud's route controller marks each Node's network available;
// `kdp verify --live` passes; and once a host is gone (its join process killed, its namespaces
// deleted) its Node is deleted by the cloud node lifecycle controller. Nothing is left after.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types.js';
import { hostPrefixFor, joinedNodeStateFile } from '../../src/cluster/data-plane-netns.js';
import { fileURLToPath } from 'node:url';
import { dataDirPaths, type DataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { BACKEND_DATA_ANNOTATION, BACKEND_TYPE_ANNOTATION } from '../../src/cni/backend.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, listNetns } from '../../src/host/netns.js';
import { VTEP_LINK, vtepMac } from '../../src/host/vxlan.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod, seenSource } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const KDP = fileURLToPath(new URL('../../bin/kdp.js', import.meta.url));
const ref = (resource: string, namespace?: string, group = '', version = 'v1') =>
  ({ group, version, resource, ...(namespace ? { namespace } : {}) });
const PODS = ref('pods', 'default');
const NODES = ref('nodes');
const ready = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

/** The processes whose command line names `dir` (a data dir): what a test run left running. */
function processesNaming(dir: string): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) out.push(Number(pid));
    } catch { /* gone */ }
  }
  return out;
}

describe.runIf(canUseNetns(['ip', 'bridge', 'iptables-restore', 'nsenter']))('three simulated hosts over VXLAN, two joined with kdp node join', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-mh-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster | undefined;
  const client = () => cluster!.client;
  let pods: Pod[] = [];
  // Each joined host's own data dir (a machine of its own).
  const hostDirs = new Map<string, DataDirPaths>();
  const workers = new Map<string, { proc: ChildProcess; log: string[] }>();
  const killHost = (name: string) => {
    const w = workers.get(name);
    if (w && w.proc.exitCode === null && w.proc.signalCode === null) {
      try { process.kill(-w.proc.pid!, 'SIGKILL'); } catch { /* gone */ }
    }
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 10, dataPlane: 'netns',
      systemPods: true, dns: false, controlPlaneTaint: true, progress: () => {},
      hosts: { count: 3, link: 'routed' }, backend: 'vxlan' });
    // The join commands as printed: kdp up's, and a new token's.
    const minted = await kdp('token', 'create', '--print-join-command', '--data-dir', paths.root);
    expect(minted.code).toBe(0);
    const lines = { n2: cluster.joinCommand, n3: minted.out.trim() };
    for (const [name, host] of [['n2', 2], ['n3', 3]] as const) {
      const [word, ...joinArgs] = lines[name].split(' ');
      expect(word).toBe('kdp');
      expect(joinArgs.slice(0, 3)).toEqual(['node', 'join', expect.stringMatching(/^https:\/\/172\.18\.0\.1:\d+$/)]);
      const own = dataDirPaths(mkdtempSync(join(tmpdir(), `kdp-mh-${name}-`)));
      hostDirs.set(name, own);
      // Its own process group (a machine of its own): killing the group is the host going away.
      const proc = spawn(process.execPath, [KDP, 'sh', `h${host}`, '--data-dir', paths.root, '--',
        process.execPath, KDP, ...joinArgs, '--name', name, '--time-scale', '10', '--data-dir', own.root],
      { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      const log: string[] = [];
      proc.stderr!.on('data', (d: Buffer) => { log.push(String(d)); });
      workers.set(name, { proc, log });
    }
    try {
      await waitFor(async () => (await client().list<Node>(NODES)).items.filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 3 || undefined,
      90_000, 'three Ready nodes');
    } catch (e) {
      for (const [name, w] of workers) console.error(`kdp node join ${name}:\n${w.log.join('')}`);
      throw e;
    }
    await client().create(ref('deployments', 'default', 'apps'), {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
      spec: { replicas: 4, selector: { matchLabels: { app: 'web' } }, template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } } } });
    await client().create(ref('services', 'default'), { apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } });
    pods = await waitFor(async () => {
      const items = (await client().list<Pod>(PODS)).items.filter((p) => p.metadata.labels?.app === 'web');
      return items.length === 4 && items.every(ready) ? items : undefined;
    }, 60_000, 'web pods Ready');
  }, 120_000);

  afterAll(async () => {
    for (const name of workers.keys()) killHost(name);
    for (const [name, own] of hostDirs) await cleanupHost(exec, joinedNodeStateFile(own, name), `${prefix}-${name}`);
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
    expect((await listNetns(exec)).filter((n) => n.startsWith(prefix))).toEqual([]);
    for (const dir of [paths.root, ...[...hostDirs.values()].map((p) => p.root)]) {
      expect(processesNaming(dir)).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('each joined host runs its kdp node join inside its own namespace, with its own data dir', async () => {
    for (const [name, w] of workers) {
      const ns = (await exec.run('ip', ['netns', 'identify', String(w.proc.pid)])).stdout.trim();
      // The group leader is `kdp sh`, in the test's namespace; the join process is its grandchild.
      expect(ns).toBe('');
      const joiners = processesNaming(hostDirs.get(name)!.root).filter((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(2, 4).join(' ') === 'node join');
      expect(joiners.length).toBeGreaterThan(0);
      const where = (await exec.run('ip', ['netns', 'identify', String(joiners[0])])).stdout.trim();
      expect(where).toBe(`${prefix}-underlay-h${name.slice(1)}`);
      expect(existsSync(join(hostDirs.get(name)!.root, 'nodes', name, 'host-state.json'))).toBe(true);
      expect(w.log.join('')).toContain(`in simulated host h${name.slice(1)}`);
    }
  });

  it('puts each node on its own host subnet behind the router', async () => {
    const nodes = (await client().list<Node>(NODES)).items;
    expect(nodes.map((n) => [n.metadata.name, n.status!.addresses!.find((a) => a.type === 'InternalIP')!.address]).sort())
      .toEqual([['n1', '172.18.0.2'], ['n2', '172.19.0.2'], ['n3', '172.20.0.2']]);
    const ns = await listNetns(exec);
    for (const h of ['underlay', 'underlay-h2', 'underlay-h3', 'router']) expect(ns).toContain(`${prefix}-${h}`);
    // No host-gw route can reach another host's node: its address is not on the node's segment.
    const onLink = await exec.run('ip', ['-n', `${prefix}-n2`, '-j', 'route', 'get', '172.20.0.2']);
    expect(JSON.parse(onLink.stdout)[0].gateway).toBe('172.19.0.1');
  });

  it('spreads the Deployment over both remote hosts (n1 keeps its control-plane taint)', () => {
    expect(new Set(pods.map((p) => p.spec!.nodeName))).toEqual(new Set(['n2', 'n3']));
  });

  it('publishes each node\'s VTEP on its Node and programs the peers from them', async () => {
    const nodes = (await client().list<Node>(NODES)).items;
    for (const n of nodes) {
      const ip = n.status!.addresses!.find((a) => a.type === 'InternalIP')!.address;
      expect(n.metadata.annotations?.[BACKEND_TYPE_ANNOTATION]).toBe('vxlan');
      expect(JSON.parse(n.metadata.annotations![BACKEND_DATA_ANNOTATION]!)).toEqual({ VNI: 1, VtepMAC: vtepMac(ip) });
    }
    const n2 = `${prefix}-n2`;
    const link = JSON.parse((await exec.run('ip', ['-n', n2, '-j', '-d', 'link', 'show', VTEP_LINK])).stdout)[0];
    expect(link.linkinfo.info_data).toMatchObject({ id: 1, port: 8472, local: '172.19.0.2' });
    expect(link.mtu).toBe(1450);
    const n3 = nodes.find((n) => n.metadata.name === 'n3')!;
    const cidr3 = n3.spec!.podCIDRs![0]!;
    const vtep3 = cidr3.split('/')[0];
    const fdb = JSON.parse((await exec.run('bridge', ['-n', n2, '-j', 'fdb', 'show', 'dev', VTEP_LINK])).stdout);
    expect(fdb).toContainEqual(expect.objectContaining({ mac: vtepMac('172.20.0.2'), dst: '172.20.0.2' }));
    const neigh = JSON.parse((await exec.run('ip', ['-n', n2, '-j', 'neigh', 'show', 'dev', VTEP_LINK])).stdout);
    expect(neigh).toContainEqual(expect.objectContaining({ dst: vtep3, lladdr: vtepMac('172.20.0.2') }));
    const routes = JSON.parse((await exec.run('ip', ['-n', n2, '-j', 'route', 'show', cidr3])).stdout);
    expect(routes).toEqual([expect.objectContaining({ dst: cidr3, gateway: vtep3, dev: VTEP_LINK, flags: ['onlink'] })]);
  });

  it('pod to pod across hosts over VXLAN: a real connection, the server sees the client pod IP', async () => {
    const a = pods.find((p) => p.spec!.nodeName === 'n2')!;
    const b = pods.find((p) => p.spec!.nodeName === 'n3')!;
    for (const [from, to] of [[a, b], [b, a]] as const) {
      const ans = await probe(exec, podNetnsName(prefix, from.metadata.uid!), 'tcp', to.status!.podIP!, 8080);
      expect(seenPod(ans)).toBe(to.metadata.name);
      expect(seenSource(ans)).toBe(from.status!.podIP);
    }
    // The pods' MTU leaves room for the VXLAN header.
    const eth0 = JSON.parse((await exec.run('ip', ['-n', podNetnsName(prefix, a.metadata.uid!), '-j', 'link', 'show', 'eth0'])).stdout)[0];
    expect(eth0.mtu).toBe(1450);
  });

  it('the route controller marks every Node NetworkUnavailable=False (RouteCreated)', async () => {
    const nodes = await waitFor(async () => {
      const items = (await client().list<Node>(NODES)).items;
      return items.every((n) => n.status?.conditions?.some((c) => c.type === 'NetworkUnavailable')) ? items : undefined;
    }, 20_000, 'NetworkUnavailable on every Node');
    for (const n of nodes) {
      expect(n.status!.conditions!.find((c) => c.type === 'NetworkUnavailable'))
        .toMatchObject({ status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' });
    }
  });

  it('kdp verify --live passes across the hosts', async () => {
    const r = await kdp('verify', '--live', '--sample', '3', '--data-dir', paths.root, '-o', 'json');
    expect(r.err.includes('"checks"') ? '' : r.err).not.toMatch(/error/i);
    const j = JSON.parse(r.out);
    expect(j.checks.flatMap((c: { failures: unknown[] }) => c.failures)).toEqual([]);
    expect(j.checks.some((c: { name: string; cases: number }) => c.name.startsWith('live:') && c.cases > 0)).toBe(true);
    expect(r.code).toBe(0);
  }, 60_000);

  it('deletes the Node of a host that is gone, once its grace period has passed', async () => {
    killHost('n3');
    await cleanupHost(exec, joinedNodeStateFile(hostDirs.get('n3')!, 'n3'), `${prefix}-n3`);
    await deleteNetns(exec, `${prefix}-n3`);
    await deleteNetns(exec, `${prefix}-underlay-h3`);
    expect(existsSync(`/run/netns/${prefix}-n3`)).toBe(false);
    await waitFor(async () => !(await client().list<Node>(NODES)).items.some((n) => n.metadata.name === 'n3') || undefined,
      30_000, 'n3 deleted');
    // The cloud node lifecycle controller says why (events are written asynchronously).
    expect(await waitFor(async () => (await client().list<{ reason?: string; involvedObject?: { name?: string } } &
      { metadata: object }>(ref('events'))).items.some((e) => e.reason === 'DeletingNode' && e.involvedObject?.name === 'n3') || undefined,
    10_000, 'DeletingNode event')).toBe(true);
  }, 60_000);
});

// Two hosts on one L2 segment (host 2's bridge is a port of host 1's): the auto backend takes
// host-gw between them; those routes are the lab cloud's route controller's, or with
// --cloud-provider=none the kdp-cni agents' (and no NetworkUnavailable condition is written).
describe.runIf(canUseNetns(['ip', 'bridge', 'iptables-restore', 'nsenter'])).each(['kdp', 'none'] as const)(
  'two simulated hosts on one L2 segment, --cloud-provider=%s', (cloudProvider) => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-l2-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster | undefined;
  const client = () => cluster!.client;

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 10, dataPlane: 'netns',
      systemPods: true, dns: false, progress: () => {}, hosts: { count: 2, link: 'l2' }, backend: 'auto',
      cloud: { cloudProvider } });
    for (const [name, node] of [['a', 'n1'], ['b', 'n2']] as const) {
      await client().create(PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
        spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] } });
    }
    await waitFor(async () => (await client().list<Pod>(PODS)).items.every(ready) || undefined, 60_000, 'pods Ready');
  }, 120_000);

  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
    expect((await listNetns(exec)).filter((n) => n.startsWith(prefix))).toEqual([]);
  }, 60_000);

  it('host-gw between the hosts: a route via the peer\'s InternalIP on eth0, pods talk NAT-free', async () => {
    expect(cluster!.nodes.map((n) => [n.name, n.ip, n.host])).toEqual([['n1', '172.18.0.2', 0], ['n2', '172.18.0.3', 1]]);
    const n2 = await client().get<Node>(NODES, 'n2');
    const cidr = n2.spec!.podCIDRs![0]!;
    const routes = await waitFor(async () => {
      const r = JSON.parse((await exec.run('ip', ['-n', `${prefix}-n1`, '-j', 'route', 'show', cidr])).stdout);
      return r.length ? r : undefined;
    }, 20_000, 'route to n2');
    expect(routes).toEqual([expect.objectContaining({ dst: cidr, gateway: '172.18.0.3', dev: 'eth0' })]);
    const [a, b] = await Promise.all(['a', 'b'].map((n) => client().get<Pod>(PODS, n)));
    const ans = await probe(exec, podNetnsName(prefix, a!.metadata.uid!), 'tcp', b!.status!.podIP!, 8080);
    expect(seenPod(ans)).toBe('b');
    expect(seenSource(ans)).toBe(a!.status!.podIP);
    // No peer goes over the VXLAN device (auto found them on one segment).
    const vx = JSON.parse((await exec.run('ip', ['-n', `${prefix}-n1`, '-j', 'route', 'show', 'dev', VTEP_LINK])).stdout);
    expect(vx.filter((r: { gateway?: string }) => r.gateway)).toEqual([]);
    const cond = (await client().get<Node>(NODES, 'n1')).status!.conditions!.find((c) => c.type === 'NetworkUnavailable');
    if (cloudProvider === 'kdp') expect(cond).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    else expect(cond).toBeUndefined();
  });
});
