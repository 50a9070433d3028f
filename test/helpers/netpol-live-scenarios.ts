// Upstream netpol e2e scenarios run live (issue 18), one suite per proxy mode (one test file
// each, so the two clusters run in parallel workers): the x/y/z × a/b/c cluster of
// test/e2e/network/netpol in netns mode, each pod serving 80 and 81 over TCP and UDP with the
// named ports serve-<port>-<proto> and a Service s-<ns>-<pod>; a representative subset of the
// scenarios is applied through the API and every cell is probed for real by
// `kdp verify --netpol --live` (computed by the evaluator, traced through the applied tables,
// observed with real connections), in both proxy modes. A cell that disagrees fails the test;
// the computed table must also be upstream's expected one.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import type { KubeObject } from '../../src/client/types.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { Reachability, TruthTable } from '../../src/netpol/truth-table.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import { kdp } from './cli.js';
import { waitFor } from './cluster.js';
import { canUseNetns } from './root.js';
import { egress, ingress, nsSel, policy, policyML } from '../netpol/scenarios/builders.js';

const exec = buildHostExec();
const NS = { group: '', version: 'v1', resource: 'namespaces' } as const;
const PODS = (namespace: string) => ({ group: '', version: 'v1', resource: 'pods', namespace }) as const;
const SVC = (namespace: string) => ({ group: '', version: 'v1', resource: 'services', namespace }) as const;
const NP = (namespace: string) =>
  ({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', namespace }) as const;

const NAMESPACES = ['x', 'y', 'z'];
const NAMES = ['a', 'b', 'c'];
const ALL = NAMESPACES.flatMap((ns) => NAMES.map((p) => `${ns}/${p}`));
const SERVED = [80, 81].flatMap((port) => ['TCP', 'UDP'].map((protocol) => ({ port, protocol })));

function serverPod(ns: string, name: string, node: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { pod: name } },
    spec: { nodeName: node, containers: [{ name: 'serve', image: 'kdp/echo',
      ports: SERVED.map((s) => ({ name: `serve-${s.port}-${s.protocol.toLowerCase()}`,
        containerPort: s.port, protocol: s.protocol })) }] } };
}

function service(ns: string, name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: `s-${ns}-${name}`, namespace: ns },
    spec: { selector: { pod: name }, ports: SERVED.map((s) => ({
      name: `service-port-${s.protocol.toLowerCase()}-${s.port}`, port: s.port, protocol: s.protocol,
      targetPort: s.port })) } };
}

interface LiveCheck {
  readonly ports: string;
  readonly viaService?: boolean;
  readonly expect: (r: Reachability) => void;
}
interface LiveStep {
  readonly apply?: readonly NetworkPolicy[];
  readonly checks: readonly LiveCheck[];
}
interface LiveScenario {
  readonly name: string;
  readonly steps: (ip: (pod: string) => string) => readonly LiveStep[];
}

/** The subset run live: one per kind of rule the issue names. */
const SCENARIOS: readonly LiveScenario[] = [
  { name: "should support a 'default-deny-ingress' policy (TCP and UDP)", steps: () => [{
    apply: [policy('x', 'deny-ingress', {}, ingress())],
    checks: ['80/TCP', '81/UDP'].map((ports) => ({ ports,
      expect: (r: Reachability) => { r.expectPeer({}, { namespace: 'x' }, false); } })) }] },
  { name: 'should enforce policy to allow traffic only from a different namespace, based on NamespaceSelector',
    steps: () => [{
      apply: [policyML('x', 'allow-client-a-via-ns-selector', { pod: 'a' },
        ingress({ from: [{ namespaceSelector: nsSel('y') }] }))],
      checks: [{ ports: '80/TCP', expect: (r) => r.expectAllIngress('x/a', false)
        .expectPeer({ namespace: 'y' }, { namespace: 'x', pod: 'a' }, true) }] }] },
  { name: 'should enforce except clause while egress access to server in CIDR block', steps: (ip) => [{
    apply: [policyML('x', 'allow-client-a-via-cidr-egress-rule', { pod: 'a' }, egress({ to: [{ ipBlock: {
      cidr: `${ip('x/b').split('.').slice(0, 2).join('.')}.0.0/16`, except: [`${ip('x/b')}/32`] } }] }))],
    checks: [{ ports: '80/TCP', expect: (r) => r.expect('x/a', 'x/b', false) }] }] },
  { name: 'should allow ingress access on one named port (UDP)', steps: () => [{
    apply: [policyML('x', 'allow-all-ingress-on-named-port', {}, ingress({ ports: [{ port: 'serve-81-udp', protocol: 'UDP' }] }))],
    checks: [{ ports: '81/UDP', expect: () => undefined },
      { ports: '80/UDP', expect: (r) => r.expectPeer({}, { namespace: 'x' }, false) }] }] },
  { name: "should enforce egress policy allowing traffic to a server in a different namespace (through each pod's Service ClusterIP)",
    steps: () => [{
      apply: [policyML('x', 'allow-to-ns-y', { pod: 'a' }, egress({ to: [{ namespaceSelector: nsSel('y') }] }))],
      checks: [{ ports: '80/TCP', viaService: true, expect: (r) => r.expectAllEgress('x/a', false)
        .expectPeer({ namespace: 'x', pod: 'a' }, { namespace: 'y' }, true) }] }] },
  { name: 'should enforce updated policy', steps: () => [
    { apply: [policyML('x', 'allow-all-mutate-to-deny-all', {}, ingress({}))],
      checks: [{ ports: '81/TCP', expect: () => undefined }] },
    { apply: [policyML('x', 'allow-all-mutate-to-deny-all', {}, ingress())],
      checks: [{ ports: '81/TCP', expect: (r) => r.expectPeer({}, { namespace: 'x' }, false) }] },
  ] },
];

/** Declares the suite for one proxy mode (skipped without root, failing under CI=true). */
export function liveScenarioSuite(mode: 'nftables' | 'iptables'): void {
  describe.runIf(canUseNetns(['ip', 'nft', 'nsenter', 'iptables-restore']))(
    `upstream netpol scenarios live (${mode} proxy): kdp verify --netpol --live`, () => {
    const paths = dataDirPaths(mkdtempSync(join(tmpdir(), `kdp-npl-${mode}-`)));
    const prefix = hostPrefixFor(paths);
    let cluster: RunningCluster;
    const ips = new Map<string, string>();

    beforeAll(async () => {
      cluster = await startCluster({
        paths, nodes: 2, port: 0, proxyMode: mode, timeScale: 5, dataPlane: 'netns', dns: false,
        progress: (l) => { if (process.env.KDP_TEST_LOG) console.log(l); },
      });
      for (const ns of NAMESPACES) {
        await cluster.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { ns } } });
      }
      // a and c on n1, b on n2: pairs both routed between nodes and bridged on one.
      for (const key of ALL) {
        const [ns, name] = key.split('/') as [string, string];
        await cluster.client.create(PODS(ns), serverPod(ns, name, name === 'b' ? 'n2' : 'n1'));
        await cluster.client.create(SVC(ns), service(ns, name));
      }
      for (const key of ALL) {
        const [ns, name] = key.split('/') as [string, string];
        const p = await waitFor(async () => {
          const got = await cluster.client.get<Pod>(PODS(ns), name);
          return got.status?.podIP && got.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
            ? got : undefined;
        }, 30_000, `${key} ready`);
        ips.set(key, p.status!.podIP!);
      }
    }, 60_000);

    afterAll(async () => {
      await cluster?.close();
      await cleanupHost(exec, paths.hostState, prefix);
    }, 30_000);

    const verify = async (ports: string, viaService: boolean) => {
      const args = ['verify', '--netpol', '--live', '--data-dir', paths.root, '--ports', ports,
        '--probe-timeout', '500', '-o', 'json', ...(viaService ? ['--via-service'] : [])];
      const r = await kdp(...args);
      if (r.code !== 0 && r.code !== 3) throw new Error(`kdp ${args.join(' ')}: exit ${r.code}: ${r.err}`);
      return { code: r.code, json: JSON.parse(r.out) as {
        tables: Array<{ pods: string[]; values: boolean[][] }>;
        live: { probes: number; bugs: number; tables: Array<{ bugs: Array<Record<string, unknown>> }> };
      } };
    };

    it('with no policy every cell of 80/TCP and 81/UDP answers', async () => {
      await check([{ ports: '80/TCP', expect: () => undefined }, { ports: '81/UDP', expect: () => undefined }]);
    }, 30_000);

    /** One `kdp verify --netpol --live` for all of a step's checks (one prober start-up). */
    const check = async (checks: readonly LiveCheck[], what = '') => {
      const { code, json } = await verify(checks.map((c) => c.ports).join(','), !!checks[0]?.viaService);
      expect(json.live.tables.flatMap((t) => t.bugs), what).toEqual([]);
      expect(code).toBe(0);
      expect(json.live.probes).toBe(72 * checks.length);
      checks.forEach((c, n) => {
        const r = new Reachability(ALL, true);
        c.expect(r);
        const tbl = json.tables[n]!;
        const computed = new TruthTable(tbl.pods, tbl.pods);
        const want = new TruthTable(ALL, ALL);
        tbl.pods.forEach((f, a) => tbl.pods.forEach((t, b) => { if (f !== t) computed.set(f, t, tbl.values[a]![b]!); }));
        for (const f of ALL) for (const t of ALL) if (f !== t) want.set(f, t, r.expected.get(f, t)!);
        expect(computed.prettyPrint(), `${what} ${c.ports}`).toBe(want.prettyPrint());
      });
    };

    it('kdp trace agrees with the kernel: DROP (policy x/deny) with the policy hops for a denied pair, ACCEPT naming the allowing rule for an allowed one', async () => {
      await cluster.client.create(NP('x'), policy('x', 'deny', {}, ingress()) as never);
      await cluster.client.create(NP('x'), policyML('x', 'allow-b', { pod: 'b' },
        ingress({ from: [{ namespaceSelector: nsSel('y') }] })) as never);
      for (const n of ['n1', 'n2']) await cluster.nodeSet.netpolSynced(n);
      const trace = async (from: string, to: string) => {
        const r = await kdp('trace', '--data-dir', paths.root, '-o', 'json', from, to);
        if (r.code > 1) throw new Error(`kdp trace ${from} ${to}: exit ${r.code}: ${r.err}`);
        return JSON.parse(r.out) as { verdict: string; hops: Array<{ stage: string; text: string }> };
      };
      const denied = await trace('y/a', 'x/a:80');
      expect(denied.verdict).toBe('DROP (policy x/deny)');
      expect(denied.hops.filter((h) => h.stage.startsWith('netpol')).map((h) => h.text)).toEqual([
        'egress of y/a: no policy selects this pod: allowed',
        'ingress of x/a: denied: isolated for ingress by x/deny and no ingress rule allows it']);
      const allowed = await trace('y/a', 'svc/x/s-x-b:80');
      expect(allowed.verdict).toBe('ACCEPT');
      expect(allowed.hops.filter((h) => h.stage === 'netpol ingress').map((h) => h.text))
        .toEqual(['ingress of x/b: allowed by policy x/allow-b ingress rule 0']);
      // The kernel: the same two connections, for real.
      const { json } = await verify('80/TCP', true);
      const t = json.tables[0]!;
      const cell = (f: string, to: string) => t.values[t.pods.indexOf(f)]![t.pods.indexOf(to)];
      expect([cell('y/a', 'x/a'), cell('y/a', 'x/b')]).toEqual([false, true]);
      expect(json.live.bugs).toBe(0);
      for (const n of ['deny', 'allow-b']) await cluster.client.delete(NP('x'), n);
    }, 30_000);

    for (const s of SCENARIOS) {
      it(s.name, async () => {
        const steps = s.steps((k) => ips.get(k)!);
        for (const [i, step] of steps.entries()) {
          for (const p of step.apply ?? []) {
            const ns = p.metadata.namespace!;
            const exists = await cluster.client.get(NP(ns), p.metadata.name!).catch(() => undefined);
            if (exists) {
              await cluster.client.update(NP(ns), { ...p, metadata: { ...p.metadata,
                resourceVersion: (exists as KubeObject).metadata!.resourceVersion } } as never);
            } else await cluster.client.create(NP(ns), p as never);
          }
          await check(step.checks, `step ${i}`);
        }
        for (const ns of NAMESPACES) {
          for (const p of (await cluster.client.list(NP(ns))).items) await cluster.client.delete(NP(ns), p.metadata!.name!);
        }
      }, 30_000);
    }
  });
}
