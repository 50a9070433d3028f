// NetworkPolicy enforced for real (issue 18): a netns cluster whose node agents run the policy
// controller; real TCP connections between echo pods in two namespaces, across nodes (routed)
// and on one node (bridged: br_netfilter hands bridged frames to the forward hook), and to a
// ClusterIP (policies see the endpoint pod's IP after kube-proxy's DNAT), in both proxy modes.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { resolveClusterNetwork } from '../../src/cluster/network.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import type { KubeObject } from '../../src/client/types.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { nodeDirOf } from '../../src/kubelet/container-log-files.js';
import { buildKernelNetpolApplier } from '../../src/netpol/applier.js';
import { waitFor } from '../helpers/cluster.js';
import { seenPod } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const NS = { group: '', version: 'v1', resource: 'namespaces' } as const;
const PODS = (namespace: string) => ({ group: '', version: 'v1', resource: 'pods', namespace }) as const;
const SVC = (namespace: string) => ({ group: '', version: 'v1', resource: 'services', namespace }) as const;
const NP = (namespace: string) =>
  ({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', namespace }) as const;

/** TCP: connect (1.5 s at most), send a line, print the echo's answer; nothing when refused/dropped. */
const CLIENT = `
const [host, port] = process.argv.slice(1);
setTimeout(() => process.exit(2), 1500);
const s = (await import('node:net')).connect(Number(port), host);
let out = '';
s.on('connect', () => s.write('hi\\n'));
s.on('data', (d) => { out += d; });
s.on('end', () => { process.stdout.write(out); process.exit(0); });
s.on('error', () => process.exit(1));
`;

/** Connects now; `answer()` sends a line later and resolves with the echo's reply ('' if none). */
const HELD = `
const [host, port] = process.argv.slice(1);
const s = (await import('node:net')).connect(Number(port), host);
let out = '';
s.on('connect', () => console.log('connected'));
s.on('data', (d) => { out += d; });
s.on('end', () => { process.stdout.write(out); process.exit(0); });
s.on('error', () => process.exit(1));
process.stdin.once('data', () => { s.write('hi\\n'); setTimeout(() => process.exit(2), 1500); });
`;

function echoPod(ns: string, name: string, node: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { pod: name } },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 80 }] }] } };
}

const MODES = ['nftables', 'iptables'] as const;

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'iptables-restore']))
  .each(MODES)('NetworkPolicy enforced in netns mode (%s proxy)', (mode) => {
    const paths = dataDirPaths(mkdtempSync(join(tmpdir(), `kdp-npe-${mode}-`)));
    const prefix = hostPrefixFor(paths);
    let cluster: RunningCluster;
    const ips: Record<string, string> = {};
    const netnsOf: Record<string, string> = {};
    let clusterIP = '';

    const reach = async (from: string, ip: string): Promise<string | undefined> => {
      const r = await exec.run(process.execPath, ['--input-type=module', '-e', CLIENT, ip, '80'],
        { netns: netnsOf[from], timeoutMs: 5000 }).catch(() => ({ stdout: '' }));
      return seenPod(r.stdout);
    };
    /** reach for each [from, ip] at once: a dropped connection costs CLIENT's 1.5 s once, not each. */
    const reachAll = (pairs: Array<[string, string]>) => Promise.all(pairs.map(([from, ip]) => reach(from, ip)));
    const table = async (node: string) => (await cluster.nodeSet.netpolTable(node).catch(() => undefined)) ?? '';
    const policy = (name: string, spec: object) => cluster.client.create(NP('y'),
      { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'y' }, spec });

    beforeAll(async () => {
      cluster = await startCluster({
        paths, nodes: 2, port: 0, proxyMode: mode, timeScale: 20, dataPlane: 'netns', dns: false,
        progress: (l) => { if (process.env.KDP_TEST_LOG) console.log(l); },
      });
      await cluster.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: { team: 'x' } } });
      await cluster.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'y' } });
      // a: x on n1 (b is across nodes); c: x on n2 (b is on the same bridge); b: y on n2.
      const placed = [['x', 'a', 'n1'], ['y', 'b', 'n2'], ['x', 'c', 'n2']] as const;
      for (const [ns, name, node] of placed) await cluster.client.create(PODS(ns), echoPod(ns, name, node));
      for (const [ns, name] of placed) {
        const p = await waitFor(async () => {
          const got = await cluster.client.get<Pod>(PODS(ns), name);
          return got.status?.podIP && got.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
            ? got : undefined;
        }, 30_000, `${ns}/${name} ready`);
        ips[name] = p.status!.podIP!;
        netnsOf[name] = podNetnsName(prefix, p.metadata.uid!);
      }
      const svc = await cluster.client.create<KubeObject & { spec: { clusterIP: string } }>(SVC('y'), {
        apiVersion: 'v1', kind: 'Service', metadata: { name: 'b', namespace: 'y' },
        spec: { selector: { pod: 'b' }, ports: [{ port: 80, targetPort: 80 }] } });
      clusterIP = svc.spec.clusterIP;
      await waitFor(async () => (await reach('a', clusterIP)) === 'b', 20_000, 'the Service reaches b');
    }, 90_000);

    afterAll(async () => {
      await cluster?.close();
      await cleanupHost(exec, paths.hostState, prefix);
    }, 30_000);

    it('(a) no policy: every connection succeeds; each node has its (empty) table', async () => {
      const [ab, cb, ba, aSvc] = await reachAll([['a', ips.b!], ['c', ips.b!], ['b', ips.a!], ['a', clusterIP]]);
      expect(ab).toBe('b');
      expect(cb).toBe('b');
      expect(ba).toBe('a');
      expect(aSvc).toBe('b');
      for (const n of ['n1', 'n2']) {
        const t = await table(n);
        expect(t).toContain('table inet kdp-netpol');
        expect(t).toContain('hook forward');
        expect(t).not.toContain('ingress-y/b');
      }
    });

    it("(b) default-deny ingress in b's namespace: a→b and c→b fail (routed, bridged, via the ClusterIP); b's own connections and their replies pass; an open connection keeps working", async () => {
      // A connection a→b established before the policy.
      const held = spawn('nsenter', [`--net=/run/netns/${netnsOf.a}`, '--', process.execPath,
        '--input-type=module', '-e', HELD, ips.b!, '80'], { stdio: ['pipe', 'pipe', 'ignore'] });
      let heldOut = '';
      held.stdout.on('data', (d) => { heldOut += d; });
      await waitFor(() => heldOut.includes('connected'), 5000, 'held connection up');

      await policy('deny', { podSelector: {}, policyTypes: ['Ingress'] });
      await waitFor(async () => (await table('n2')).includes('ingress-y/b'), 10_000, 'n2 table has b');
      const t = await table('n2');
      expect(t).toMatch(/chain ingress-y\/b \{[^}]*drop/s);
      expect(await table('n1')).not.toContain('ingress-y/b'); // b does not run on n1

      const [ab, cb, aSvc, ba, bc] = await reachAll([['a', ips.b!], ['c', ips.b!], ['a', clusterIP],
        ['b', ips.a!], ['b', ips.c!]]);
      expect(ab).toBeUndefined();
      expect(cb).toBeUndefined();
      expect(aSvc).toBeUndefined();
      // Egress from b is not isolated, and a's replies come back as established traffic.
      expect(ba).toBe('a');
      expect(bc).toBe('c');

      const exited = new Promise<void>((r) => held.on('exit', () => r()));
      held.stdin.write('go\n');
      await exited;
      expect(seenPod(heldOut)).toBe('b');
    }, 30_000);

    it("(c) allowing ingress from a's namespace label opens a→b and c→b again", async () => {
      await policy('allow-x', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }] });
      await waitFor(async () => (await reach('a', ips.b!)) === 'b', 10_000, 'a→b allowed');
      const [cb, aSvc] = await reachAll([['c', ips.b!], ['a', clusterIP]]);
      expect(cb).toBe('b');
      expect(aSvc).toBe('b');
    }, 30_000);

    it('(d) with the policies deleted every connection is open; the table no longer has b', async () => {
      await cluster.client.delete(NP('y'), 'allow-x');
      await waitFor(async () => (await reach('a', ips.b!)) === undefined, 10_000, 'a→b denied again');
      await cluster.client.delete(NP('y'), 'deny');
      await waitFor(async () => !(await table('n2')).includes('ingress-y/b'), 10_000, 'b left the table');
      const [ab, cb] = await reachAll([['a', ips.b!], ['c', ips.b!]]);
      expect(ab).toBe('b');
      expect(cb).toBe('b');
    }, 30_000);

    it("(e) egress of a to namespace y only: a reaches b directly and through b's ClusterIP (the policy sees the endpoint after DNAT), not c; replies still pass", async () => {
      await cluster.client.create(NP('x'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
        metadata: { name: 'a-to-y', namespace: 'x' }, spec: { podSelector: { matchLabels: { pod: 'a' } },
          policyTypes: ['Egress'], egress: [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'y' } } }] }] } });
      await waitFor(async () => (await table('n1')).includes('egress-x/a'), 10_000, 'n1 table has a');
      expect(await table('n2')).not.toContain('egress-x/a');
      const [ac, ab, aSvc, ca] = await reachAll([['a', ips.c!], ['a', ips.b!], ['a', clusterIP], ['c', ips.a!]]);
      expect(ac).toBeUndefined();
      expect(ab).toBe('b');
      expect(aSvc).toBe('b');
      expect(ca).toBe('a'); // a's ingress is open; its replies are established
      await cluster.client.delete(NP('x'), 'a-to-y');
      await waitFor(async () => (await reach('a', ips.c!)) === 'c', 10_000, 'a→c open again');
    }, 30_000);

    it("(f) a new pod a default-deny egress policy selects is isolated from its first packet (the controller programs it between CNI ADD and its containers); the same pod unselected connects at once", async () => {
      await cluster.client.create(NP('x'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
        metadata: { name: 'early-no-egress', namespace: 'x' },
        spec: { podSelector: { matchLabels: { role: 'early' } }, policyTypes: ['Egress'] } });
      await cluster.nodeSet.netpolSynced('n1');
      const result = async (name: string, role: string): Promise<string> => {
        // Connects the moment the container starts; prints what happened, then idles.
        const script = `const s=require('net').connect(80,'${ips.b}');let done=false;const w=(x)=>{` +
          `if(done)return;done=true;console.log('result='+x);setInterval(()=>{},1e6);};` +
          `s.on('connect',()=>w('connected'));s.on('error',()=>w('error'));setTimeout(()=>w('timeout'),1500);`;
        await cluster.client.create(PODS('x'), { apiVersion: 'v1', kind: 'Pod',
          metadata: { name, namespace: 'x', labels: { role } },
          spec: { nodeName: 'n1', restartPolicy: 'Never',
            containers: [{ name: 'c', image: 'busybox', command: [process.execPath, '-e', script] }] } });
        // The container's output, as the node keeps it (<node>/pods/<ns>_<pod>_<uid>/<c>/0.log).
        const logs = join(nodeDirOf(paths.root, 'n1'), 'pods');
        return waitFor(() => {
          try {
            const d = readdirSync(logs).find((x) => x.startsWith(`x_${name}_`));
            return d ? /result=(\w+)/.exec(readFileSync(join(logs, d, 'c', '0.log'), 'utf8'))?.[1] : undefined;
          } catch { return undefined; }
        }, 20_000, `${name} result`);
      };
      // Both pods at once: the denied one's 1.5 s wait overlaps the other's start.
      const [open, denied] = await Promise.all([result('early-open', 'other'), result('early-denied', 'early')]);
      expect(open).toBe('connected');
      expect(denied).toBe('timeout');
      for (const n of ['early-open', 'early-denied']) await cluster.client.delete(PODS('x'), n, { gracePeriodSeconds: 0 });
      await cluster.client.delete(NP('x'), 'early-no-egress');
    }, 40_000);

    it('a refused apply leaves the previous table in the node namespace', async () => {
      await policy('deny', { podSelector: {}, policyTypes: ['Ingress'] });
      await waitFor(async () => (await table('n2')).includes('ingress-y/b'), 10_000, 'n2 table has b');
      const before = await table('n2');
      const applier = buildKernelNetpolApplier(exec, `${prefix}-n2`);
      // The compiler's shape (re-create the table), with a rule the kernel refuses at the end.
      const broken = 'add table inet kdp-netpol\ndelete table inet kdp-netpol\nadd table inet kdp-netpol\n' +
        'add chain inet kdp-netpol forward { type filter hook forward priority filter ; policy accept ; }\n' +
        'add rule inet kdp-netpol forward ip daddr @no-such-set drop\n';
      await expect(applier.apply(broken)).rejects.toThrow(/nft/);
      expect(await table('n2')).toBe(before);
      expect(await reach('a', ips.b!)).toBeUndefined();
      await cluster.client.delete(NP('y'), 'deny');
      await waitFor(async () => (await reach('a', ips.b!)) === 'b', 10_000, 'open again');
    }, 30_000);
  });

describe.runIf(canUseNetns(['ip', 'nft', 'nsenter']))('NetworkPolicy enforced for IPv6 too (dual-stack netns cluster)', () => {
  const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-npe-dual-')));
  const prefix = hostPrefixFor(paths);
  let cluster: RunningCluster;
  const ips: Record<string, string[]> = {};
  const netnsOf: Record<string, string> = {};
  const reach = async (from: string, ip: string): Promise<string | undefined> => {
    const r = await exec.run(process.execPath, ['--input-type=module', '-e', CLIENT, ip, '80'],
      { netns: netnsOf[from], timeoutMs: 5000 }).catch(() => ({ stdout: '' }));
    return seenPod(r.stdout);
  };

  beforeAll(async () => {
    cluster = await startCluster({
      paths, nodes: 2, port: 0, proxyMode: 'nftables', timeScale: 20, dataPlane: 'netns', dns: false,
      progress: () => {}, network: resolveClusterNetwork({ ipFamily: 'dual' }),
    });
    await cluster.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: { team: 'x' } } });
    await cluster.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'y' } });
    const placed = [['x', 'a', 'n1'], ['y', 'b', 'n2'], ['x', 'c', 'n2']] as const;
    for (const [ns, name, node] of placed) await cluster.client.create(PODS(ns), echoPod(ns, name, node));
    for (const [ns, name] of placed) {
      const p = await waitFor(async () => {
        const got = await cluster.client.get<Pod>(PODS(ns), name);
        return (got.status?.podIPs?.length ?? 0) === 2 ? got : undefined;
      }, 30_000, `${ns}/${name} has both IPs`);
      ips[name] = p.status!.podIPs!.map((x) => x.ip!);
      netnsOf[name] = podNetnsName(prefix, p.metadata.uid!);
    }
  }, 90_000);

  afterAll(async () => {
    await cluster?.close();
    await cleanupHost(exec, paths.hostState, prefix);
  }, 30_000);

  it('default deny blocks b over IPv4 and IPv6 (routed and bridged); allowing x opens both', async () => {
    // Every probe at once: a dropped connection costs CLIENT's 1.5 s once, not four times.
    const all = () => Promise.all(['a', 'c'].flatMap((from) => ips.b!.map((ip) => reach(from, ip))));
    await waitFor(async () => (await all()).every((x) => x === 'b'), 20_000, 'b reachable on both families');
    await cluster.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: {} } });
    await waitFor(async () => (await cluster.nodeSet.netpolTable('n2'))?.includes('ingress-y/b'), 10_000, 'n2 has b');
    const t = (await cluster.nodeSet.netpolTable('n2'))!;
    expect(t).toContain('ingress-pods-v6');
    expect(await all()).toEqual([undefined, undefined, undefined, undefined]);
    await cluster.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'allow-x', namespace: 'y' },
      spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }] } });
    await waitFor(async () => (await all()).every((x) => x === 'b'), 10_000, 'open on both families');
  }, 60_000);
});
