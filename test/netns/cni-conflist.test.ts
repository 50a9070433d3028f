import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCIDR } from '../../src/api/net.js';
import type { Node, Pod } from '../../src/api/types.js';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { listLinks } from '../../src/host/netns.js';
import { ipamDirFor, podNetnsName } from '../../src/kubelet/runtime-netns.js';
import { waitFor } from '../helpers/cluster.js';
import { probe, seenPod, seenSource } from '../helpers/netns-probe.js';
import { canUseNetns } from '../helpers/root.js';

// `kdp up --cni-conf-dir`: the pods' network comes from a conflist that uses the Debian reference
// plugins (bridge + host-local, exec'd by kdp's CNI caller), not kdp-cni.
const REF = '/usr/lib/cni';
const exec = buildHostExec();
const PODS = { group: '', version: 'v1', resource: 'pods', namespace: 'default' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const haveRef = existsSync(join(REF, 'bridge')) && existsSync(join(REF, 'host-local'));
if (!haveRef && process.env.CI === 'true') throw new Error('CI=true but /usr/lib/cni is missing');

function echoPod(name: string, node: string): Pod {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName: node, containers: [{ name: 'echo', image: 'kdp/echo', ports: [{ containerPort: 8080 }] }] },
  } as Pod;
}

function inCIDR(ip: string, cidr: string): boolean {
  const c = parseCIDR(cidr)!;
  const a = parseCIDR(`${ip}/${c.prefix}`)!;
  const bits = BigInt(c.family === 'IPv4' ? 32 : 128);
  const mask = ((1n << bits) - 1n) ^ ((1n << (bits - BigInt(c.prefix))) - 1n);
  return a.family === c.family && (a.base & mask) === (c.base & mask);
}

describe.runIf(haveRef && canUseNetns(['ip', 'iptables-restore', 'nsenter']))(
  'kdp up with a CNI conflist of the reference bridge + host-local (root)', () => {
    const root = mkdtempSync(join(tmpdir(), 'kdp-cniup-'));
    const paths = dataDirPaths(join(root, 'data'));
    const confDir = join(root, 'net.d');
    const prefix = hostPrefixFor(paths);
    let cluster: RunningCluster | undefined;
    const client = () => cluster!.client;

    beforeAll(async () => {
      mkdirSync(confDir, { recursive: true });
      writeFileSync(join(confDir, '10-ref.conflist'), JSON.stringify({
        cniVersion: '1.0.0', name: 'refnet', plugins: [{
          type: 'bridge', bridge: 'cni0', isGateway: true, ipMasq: false, hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: 'usePodCidr' }]], routes: [{ dst: '0.0.0.0/0' }] },
        }],
      }));
      cluster = await startCluster({
        paths, nodes: 2, port: 0, proxyMode: 'iptables', timeScale: 5, dataPlane: 'netns', progress: () => {},
        cni: { confDir, binDirs: [REF] },
      });
    }, 60_000);

    afterAll(async () => {
      await cluster?.close();
      await cleanupHost(exec, paths.hostState, prefix);
      rmSync(root, { recursive: true, force: true });
    }, 30_000);

    it('pods get IPs in their node\'s podCIDR from the reference host-local, and reach each other without NAT', async () => {
      await client().create(PODS, echoPod('a', 'n1'));
      await client().create(PODS, echoPod('b', 'n2'));
      const pods = await waitFor(async () => {
        const items = (await client().list<Pod>(PODS)).items;
        const ready = items.every((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
        return items.length === 2 && ready ? items : undefined;
      }, 40_000, 'both pods Ready');
      const nodes = (await client().list<Node>(NODES)).items;
      for (const p of pods) {
        const node = nodes.find((n) => n.metadata.name === p.spec!.nodeName)!;
        expect(inCIDR(p.status!.podIP!, node.spec!.podCIDR!)).toBe(true);
        // host-local's store lives under the node's data dir (the conflist named no dataDir).
        expect(readdirSync(join(ipamDirFor(paths.root, node.metadata.name!), 'refnet'))).toContain(p.status!.podIP);
      }
      const [a, b] = ['a', 'b'].map((n) => pods.find((p) => p.metadata.name === n)!);
      // The reference bridge made the node's bridge and the pod's eth0.
      expect((await listLinks(exec, `${prefix}-n1`)).some((l) => l.ifname === 'cni0' && l.linkKind === 'bridge')).toBe(true);
      const aNs = podNetnsName(prefix, a!.metadata.uid!);
      // The reference bridge leaves lo alone: the runtime's loopback step brought it up.
      const lo = JSON.parse((await exec.run('ip', ['-n', aNs, '-j', 'link', 'show', 'lo'])).stdout);
      expect(lo[0].flags).toContain('UP');
      const ans = await probe(exec, aNs, 'tcp', b!.status!.podIP!, 8080);
      expect(seenPod(ans)).toBe('b');
      expect(seenSource(ans)).toBe(a!.status!.podIP);
    }, 90_000);

    it('deleting a pod runs DEL through the reference plugin: its address is released', async () => {
      const b = await client().get<Pod>(PODS, 'b');
      const store = join(ipamDirFor(paths.root, 'n2'), 'refnet');
      await client().delete(PODS, 'b', { gracePeriodSeconds: 0 });
      const cached = () => readdirSync(join(ipamDirFor(paths.root, 'n2'), '.cni-cache', 'results'))
        .some((f) => f.includes(b.metadata.uid!));
      expect(cached()).toBe(true);
      // The cached ADD result goes once DEL succeeded (libcni), so it is the last step to wait for.
      await waitFor(() => !cached() || undefined, 30_000, 'the DEL to finish');
      expect(readdirSync(store)).not.toContain(b.status!.podIP);
    }, 60_000);
  });
