// kube-system as kubeadm leaves it, seen with the real kubectl (1.27 and 1.33) on a virtual
// `kdp up`: mirror pods of the control plane, a kube-proxy pod and a kdp-cni pod per node, the
// DNS pods; with a 3-member local etcd (a cluster of its own), a mirror pod per etcd member and
// componentstatuses with etcd-0…;
// a deleted kube-proxy pod comes back and its node's kube-proxy syncs anew; editing the
// kube-proxy ConfigMap (kubectl edit) and restarting the DaemonSet switches every node to
// nftables; a node added later gets its pods.

import { existsSync, mkdtempSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { startCluster, type RunningCluster } from '../../src/cluster/up.js';
import { nodeSpecs } from '../../src/cluster/node-set.js';
import { listSnapshots, readSnapshot, rulesDir } from '../../src/proxy/history.js';
import { kubectlFor, kubectlMissing } from '../apiserver/helpers/kubectl.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';

const HAVE_ETCD = existsSync('/usr/bin/etcd');
if (!HAVE_ETCD && process.env.CI === 'true') throw new Error('CI=true but /usr/bin/etcd is missing');
const skip = kubectlMissing(27) || kubectlMissing(33);

interface PodJson {
  metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string> };
  spec: { nodeName?: string; hostNetwork?: boolean };
  status?: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{ containerID?: string; ready: boolean }> };
}

const ready = (p: PodJson) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

describe.skipIf(skip)('kube-system of a kdp up cluster with the real kubectl', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-ks-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: 33 });
  const pods = async (minor = 33): Promise<PodJson[]> => {
    const r = await kubectl(['get', 'pods', '-A', '-o', 'json'], { minor });
    expect(r.err).toBe('');
    return JSON.parse(r.out).items;
  };
  const systemPods = async (prefix: string) => (await pods()).filter((p) => p.metadata.namespace === 'kube-system'
    && p.metadata.name.startsWith(prefix));

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 3, port: 0, proxyMode: 'iptables', timeScale: 20,
      systemPods: true, progress: () => {} });
  }, 120_000);
  afterAll(async () => { await cluster?.close(); }, 60_000);

  it.each([27, 33])('kubectl 1.%i get pods -A lists the mirror pods, a kube-proxy and a kdp-cni pod per node, the DNS pods', async (minor) => {
    const r = await kubectl(['get', 'pods', '-A', '-o', 'wide'], { minor });
    expect(r.code).toBe(0);
    const rows = r.out.trim().split('\n').slice(1).map((l) => l.split(/\s+/));
    const names = rows.filter((c) => c[0] === 'kube-system').map((c) => c[1]!);
    for (const n of ['kube-apiserver-n1', 'kube-controller-manager-n1', 'kube-scheduler-n1']) {
      expect(names).toContain(n);
    }
    for (const prefix of ['kube-proxy-', 'kdp-cni-']) {
      const mine = rows.filter((c) => c[0] === 'kube-system' && /^[a-z0-9]{5}$/.test(c[1]!.slice(prefix.length))
        && c[1]!.startsWith(prefix));
      // NAMESPACE NAME READY STATUS RESTARTS AGE IP NODE …
      expect(mine.map((c) => c[7]).sort()).toEqual(['n1', 'n2', 'n3']);
      for (const c of mine) expect([c[2], c[3]]).toEqual(['1/1', 'Running']);
      // hostNetwork: the pod's IP is its node's.
      expect(mine.map((c) => c[6]).sort()).toEqual(['172.18.0.2', '172.18.0.3', '172.18.0.4']);
    }
    expect(names.filter((n) => n.startsWith('coredns-'))).toHaveLength(2);
  });

  it('the kube-proxy objects are kubeadm\'s: ConfigMap with config.conf and kubeconfig.conf, DaemonSet, ServiceAccount, binding', async () => {
    const cm = JSON.parse((await kubectl(['get', 'cm', 'kube-proxy', '-n', 'kube-system', '-o', 'json'])).out);
    expect(cm.data['config.conf']).toMatch(/^mode: iptables$/m);
    expect(cm.data['config.conf']).toMatch(/clusterCIDR: "10\.244\.0\.0\/16"/);
    expect(cm.data['config.conf']).toContain('kubeconfig: /var/lib/kube-proxy/kubeconfig.conf');
    expect(cm.data['kubeconfig.conf']).toContain('tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token');
    const ds = JSON.parse((await kubectl(['get', 'ds', 'kube-proxy', '-n', 'kube-system', '-o', 'json'])).out);
    const spec = ds.spec.template.spec;
    expect(spec.containers[0].image).toMatch(/^registry\.k8s\.io\/kube-proxy:v1\.33\./);
    expect(spec.containers[0].command).toEqual(['/usr/local/bin/kube-proxy', '--config=/var/lib/kube-proxy/config.conf',
      '--hostname-override=$(NODE_NAME)']);
    expect([spec.hostNetwork, spec.priorityClassName, spec.serviceAccountName]).toEqual([true, 'system-node-critical', 'kube-proxy']);
    expect(spec.tolerations).toContainEqual({ operator: 'Exists' });
    expect(ds.status).toMatchObject({ desiredNumberScheduled: 3, numberReady: 3 });
    const crb = JSON.parse((await kubectl(['get', 'clusterrolebinding', 'kubeadm:node-proxier', '-o', 'json'])).out);
    expect(crb.subjects).toContainEqual(expect.objectContaining({ kind: 'ServiceAccount', name: 'kube-proxy', namespace: 'kube-system' }));
    expect((await kubectl(['get', 'sa', 'kube-proxy', '-n', 'kube-system'])).code).toBe(0);
  });

  it('deleting a kube-proxy pod brings a new one on that node, whose kube-proxy syncs the node anew', async () => {
    const old = (await systemPods('kube-proxy-')).find((p) => p.spec.nodeName === 'n2')!;
    const dir = rulesDir(dataDir, 'n2');
    const before = Math.max(...listSnapshots(dir).map((s) => s.seq));
    const r = await kubectl(['delete', 'pod', '-n', 'kube-system', old.metadata.name]);
    expect(r.code).toBe(0);
    const fresh = await waitFor(async () => (await systemPods('kube-proxy-'))
      .find((p) => p.spec.nodeName === 'n2' && p.metadata.uid !== old.metadata.uid && ready(p)), 30_000, 'a new Ready kube-proxy pod on n2');
    expect(fresh.metadata.name).not.toBe(old.metadata.name);
    // The new kube-proxy's first (full) sync is a new snapshot of n2's rules, still iptables.
    const after = listSnapshots(dir).filter((s) => s.seq > before);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((s) => s.mode === 'iptables' && s.full)).toBe(true);
    const logs = await kubectl(['logs', '-n', 'kube-system', fresh.metadata.name]);
    expect(logs.out).toContain('Using iptables Proxier');
  });

  it('kubectl edit cm kube-proxy (mode: nftables) and rollout restart ds kube-proxy switch every node to nftables', async () => {
    const editor = join(dataDir, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i -E \'s/^([[:space:]]*)mode: iptables$/\\1mode: nftables/\' "$1"\n');
    chmodSync(editor, 0o700);
    process.env.KUBE_EDITOR = editor;
    try {
      const e = await kubectl(['edit', 'cm', 'kube-proxy', '-n', 'kube-system']);
      expect(e.err).toBe('');
      expect(e.out).toContain('configmap/kube-proxy edited');
    } finally {
      delete process.env.KUBE_EDITOR;
    }
    expect((await kubectl(['rollout', 'restart', 'ds', 'kube-proxy', '-n', 'kube-system'])).out)
      .toContain('daemonset.apps/kube-proxy restarted');
    const st = await kubectl(['rollout', 'status', 'ds', 'kube-proxy', '-n', 'kube-system', '--timeout=90s'], { timeoutMs: 100_000 });
    expect(st.out).toContain('daemon set "kube-proxy" successfully rolled out');
    for (const node of ['n1', 'n2', 'n3']) {
      await waitFor(() => readSnapshot(rulesDir(dataDir, node), '@latest', 'IPv4').mode === 'nftables', 30_000, `${node} in nftables mode`);
      const rules = await kdp('rules', '--node', node, '--data-dir', dataDir);
      expect(rules.out).toContain('table ip kube-proxy');
      expect(rules.out).not.toContain('KUBE-SERVICES -m comment');
    }
    // kdp trace reads each node's rules in the mode they are now in.
    const t = await kdp('trace', '--data-dir', dataDir, '-o', 'json', 'n2', 'svc/kube-system/kube-dns:53');
    expect(t.code).toBe(0);
    expect(JSON.parse(t.out).destinations.length).toBe(2);
    const proxies = await systemPods('kube-proxy-');
    expect(proxies.filter(ready)).toHaveLength(3);
    for (const p of proxies) {
      expect((await kubectl(['logs', '-n', 'kube-system', p.metadata.name])).out).toContain('Using nftables Proxier');
    }
  }, 150_000);

  it('a node added later gets its kube-proxy and kdp-cni pods', async () => {
    const n4 = nodeSpecs(4)[3]!;
    await cluster.nodeSet.start(n4);
    for (const prefix of ['kube-proxy-', 'kdp-cni-']) {
      await waitFor(async () => (await systemPods(prefix)).find((p) => p.spec.nodeName === 'n4' && ready(p)),
        30_000, `a Ready ${prefix} pod on n4`);
    }
    const ds = JSON.parse((await kubectl(['get', 'ds', '-n', 'kube-system', '-o', 'json'])).out).items;
    await waitFor(async () => {
      const list = JSON.parse((await kubectl(['get', 'ds', '-n', 'kube-system', '-o', 'json'])).out).items;
      return list.every((d: { status: { numberReady: number } }) => d.status.numberReady === 4);
    }, 30_000, 'both DaemonSets at 4 Ready');
    expect(ds.map((d: { metadata: { name: string } }) => d.metadata.name).sort()).toEqual(['kdp-cni', 'kube-proxy']);
  });
});

describe.skipIf(skip || !HAVE_ETCD)('the local etcd members of kdp up --etcd 3 with the real kubectl', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kdp-kse-'));
  const paths = dataDirPaths(dataDir);
  let cluster: RunningCluster;
  const kubectl = kubectlFor(paths.kubeconfig, { minor: 33 });
  const systemPods = async (prefix: string): Promise<PodJson[]> => {
    const r = await kubectl(['get', 'pods', '-n', 'kube-system', '-o', 'json']);
    expect(r.err).toBe('');
    return JSON.parse(r.out).items.filter((p: PodJson) => p.metadata.name.startsWith(prefix));
  };

  beforeAll(async () => {
    cluster = await startCluster({ paths, nodes: 3, port: 0, proxyMode: 'iptables', timeScale: 20, etcd: 3,
      dns: false, progress: () => {} });
  }, 120_000);
  afterAll(async () => { await cluster?.close(); }, 60_000);

  it.each([27, 33])('kubectl 1.%i get componentstatuses lists etcd-0, etcd-1, etcd-2 Healthy', async (minor) => {
    const r = await kubectl(['get', 'componentstatuses'], { minor });
    expect(r.code).toBe(0);
    for (const n of ['etcd-0', 'etcd-1', 'etcd-2', 'scheduler', 'controller-manager']) {
      expect(r.out).toMatch(new RegExp(`^${n}\\s+Healthy`, 'm'));
    }
    expect(r.out).toContain('{"health":"true"');
  });

  it('each etcd mirror pod shows its member\'s real PID and client port', async () => {
    const etcd = (await systemPods('etcd-')).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    expect(etcd.map((p) => [p.metadata.name, p.spec.nodeName])).toEqual([['etcd-n1', 'n1'], ['etcd-n2', 'n2'], ['etcd-n3', 'n3']]);
    const layout = JSON.parse(readFileSync(join(dataDir, 'etcd', 'cluster.json'), 'utf8')).members;
    etcd.forEach((p, i) => {
      const pid = Number(readFileSync(join(dataDir, 'etcd', `etcd-${i}.pid`), 'utf8'));
      expect(p.status?.containerStatuses?.[0]?.containerID).toBe(`kdp://${pid}`);
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('etcd');
      expect(p.metadata.annotations?.['kubeadm.kubernetes.io/etcd.advertise-client-urls'])
        .toBe(`https://127.0.0.1:${layout[i].clientPort}`);
    });
  });
});
