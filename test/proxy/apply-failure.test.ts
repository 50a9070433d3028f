// A bad Service in the store costs only its own rules, and a failed apply shows as failed: in
// kube-proxy's apply status and `<rules dir>/apply.json` (what `kdp status` and `kdp rules`
// read), as a Warning Event KubeProxyApplyFailed on the Node, until a later apply succeeds.
// Virtual mode with a failing applier; as root, a kernel applier whose node namespace is
// removed under it (a real `ip netns exec` failure) and brought back.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Event, Service } from '../../src/api/types.js';
import type { KubeObject } from '../../src/client/types.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { buildMemoryApplier, type RuleApplier } from '../../src/proxy/applier.js';
import { readApplyStatus, readSnapshot, RuleHistory } from '../../src/proxy/history.js';
import { buildKubeProxy, type KubeProxy } from '../../src/proxy/proxy-server.js';
import { startApi, waitFor } from '../helpers/cluster.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const EPS = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices',
  namespace: 'default' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events', namespace: 'default' } as const;

function svc(name: string, clusterIP: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' },
    spec: { clusterIP, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } };
}

function slice(service: string, ip: string): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: `${service}-1`, namespace: 'default',
      labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip], conditions: { ready: true }, nodeName: 'n1' }],
  };
}

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function start(applier: RuleApplier) {
  const api = await startApi();
  cleanup.push(() => api.close());
  const dir = join(mkdtempSync(join(tmpdir(), 'kdp-apply-')), 'rules');
  const logs: string[] = [];
  const errors: string[] = [];
  const proxy: KubeProxy = await buildKubeProxy({
    client: api.client, nodeName: 'n1', nodeIPs: ['172.18.0.2'], applier, mode: applier.mode,
    history: new RuleHistory(dir), timeScale: 0.01, driftCheckMs: 0,
    log: (l) => logs.push(l), onError: (e) => errors.push(String(e)),
  });
  await proxy.start();
  cleanup.push(() => proxy.stop());
  return { api, proxy, dir, logs, errors };
}

const events = async (api: Awaited<ReturnType<typeof startApi>>, reason: string) =>
  (await api.client.list<Event>(EVENTS)).items.filter((e) => e.reason === reason);

/** Stores a Service whose timeoutSeconds is "abc", written around validation (as a store from
 *  before type checks may hold it), with an endpoint. */
async function storeBadService(api: Awaited<ReturnType<typeof startApi>>): Promise<void> {
  await api.client.create(SVC, svc('bad', '10.96.0.10'));
  const key = '/registry/services/default/bad';
  const obj = JSON.parse((await api.store.get(key))!.value) as Service;
  obj.spec!.sessionAffinity = 'ClientIP';
  const abc = 'abc' as unknown as number;
  obj.spec!.sessionAffinityConfig = { clientIP: { timeoutSeconds: abc } };
  await api.store.update(key, JSON.stringify(obj));
  await api.client.create(EPS, slice('bad', '10.244.0.5'));
}

describe('kube-proxy with a bad Service in the store (virtual mode)', () => {
  it('programs every other Service, also one created afterwards, and reports the bad one',
    async () => {
      const { api, proxy, dir, logs } = await start(buildMemoryApplier('iptables'));
      await storeBadService(api);
      await api.client.create(SVC, svc('later', '10.96.0.11'));
      await api.client.create(EPS, slice('later', '10.244.0.6'));
      await waitFor(() => readSnapshot(dir, '@latest').text.includes('10.244.0.6'), 20_000,
        'rules of the Service created after the bad one');
      await proxy.synced();
      const text = readSnapshot(dir, '@latest').text;
      expect(text).toContain('default/later:http cluster IP');
      expect(text).not.toContain('10.96.0.10');
      expect(text).not.toContain('abc');
      expect(proxy.applyStatus()).toEqual([expect.objectContaining({ family: 'IPv4',
        failed: false, failures: 0 })]);
      await waitFor(() => logs.some((l) => l.includes('Service default/bad: left out: ' +
        'spec.sessionAffinityConfig.clientIP.timeoutSeconds')), 20_000, 'the log line');
      const [ev] = await waitFor(async () => {
        const e = await events(api, 'KubeProxyInvalidService');
        return e.length ? e : undefined;
      }, 20_000, 'a KubeProxyInvalidService event');
      expect(ev).toMatchObject({ type: 'Warning',
        involvedObject: { kind: 'Service', namespace: 'default', name: 'bad' },
        source: { component: 'kube-proxy', host: 'n1' } });
      expect(ev!.message).toMatch(/^no rules: spec\.sessionAffinityConfig.*got "abc"/);
    }, 30_000);
});

describe('a failed apply shows as failed until one succeeds (virtual mode)', () => {
  it('apply status, apply.json and a KubeProxyApplyFailed Node Event; cleared by success',
    async () => {
      const inner = buildMemoryApplier('nftables');
      let failing = true;
      const flaky: RuleApplier = {
        mode: 'nftables',
        apply: async (f, r) => {
          if (failing) throw new Error('nft: Error: syntax error\nline 7: injected');
          return inner.apply(f, r);
        },
        dump: (f) => inner.dump(f),
      };
      const { api, proxy, dir, logs } = await start(flaky);
      await api.client.create(SVC, svc('web', '10.96.0.50'));
      await waitFor(() => (proxy.applyStatus()[0]?.failures ?? 0) >= 2, 20_000,
        'two failed applies');
      const onDisk = readApplyStatus(dir);
      expect(onDisk).toEqual([expect.objectContaining({ family: 'IPv4', failed: true,
        failures: expect.any(Number), lastError: expect.objectContaining({
          message: 'nft: Error: syntax error\nline 7: injected' }) })]);
      expect(onDisk[0]!.failures).toBeGreaterThanOrEqual(2);
      const ev = await waitFor(async () => (await events(api, 'KubeProxyApplyFailed'))[0], 20_000,
        'a KubeProxyApplyFailed event');
      expect(ev).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Node', name: 'n1' } });
      expect(ev.message).toBe('IPv4 nftables rules could not be applied; the previous rules ' +
        'stay in force: nft: Error: syntax error\nline 7: injected');

      failing = false;
      await waitFor(() => readApplyStatus(dir)[0]?.failed === false, 20_000, 'a good apply');
      expect(readApplyStatus(dir)).toEqual([expect.objectContaining({ failed: false, failures: 0,
        lastError: expect.objectContaining({ message: expect.stringContaining('injected') }) })]);
      expect(proxy.applyStatus()[0]).toMatchObject({ failed: false, failures: 0 });
      expect(logs.some((l) => /IPv4 rules applied again after \d+ failed attempts/.test(l)))
        .toBe(true);
      expect(await inner.dump('IPv4')).toContain('10.96.0.50');
    }, 30_000);
});

const rootOK = canUseNetns(['ip', 'iptables-restore', 'iptables-save']);

describe.skipIf(!rootOK)('kube-proxy in a node namespace (netns)', () => {
  it('with a bad Service in the store, the kernel takes every other Service', async () => {
    const exec = buildHostExec();
    const ns = testNetnsName();
    await ensureNetns(exec, ns);
    cleanup.push(() => deleteNetns(exec, ns));
    const { api, proxy, dir, errors } = await start(buildKernelApplier(exec, ns, 'iptables'));
    await storeBadService(api);
    await api.client.create(SVC, svc('later', '10.96.0.11'));
    await api.client.create(EPS, slice('later', '10.244.0.6'));
    const saved = async () => (await exec.run('iptables-save', ['-t', 'nat'], { netns: ns }))
      .stdout;
    await waitFor(async () => (await saved()).includes('10.244.0.6:8080'), 20_000,
      'the later Service in the kernel');
    await proxy.synced();
    expect(await saved()).not.toContain('10.96.0.10');
    expect(errors).toEqual([]);
    expect(readApplyStatus(dir)).toEqual([expect.objectContaining({ failed: false })]);
  }, 60_000);

  it('a node namespace gone under kube-proxy fails its applies, shown until it is back',
    async () => {
      const exec = buildHostExec();
      const ns = testNetnsName();
      await ensureNetns(exec, ns);
      cleanup.push(() => deleteNetns(exec, ns));
      const { api, proxy, dir } = await start(buildKernelApplier(exec, ns, 'iptables'));
      await api.client.create(SVC, svc('web', '10.96.0.50'));
      await proxy.synced();
      expect(readApplyStatus(dir)[0]).toMatchObject({ failed: false });

      await deleteNetns(exec, ns);
      await api.client.create(SVC, svc('other', '10.96.0.51'));
      const failed = await waitFor(() => readApplyStatus(dir).find((a) => a.failed), 20_000,
        'a failed kernel apply');
      expect(failed.lastError!.message).toMatch(/iptables-restore.*failed/);
      const ev = await waitFor(async () => (await events(api, 'KubeProxyApplyFailed'))[0], 20_000,
        'a KubeProxyApplyFailed event');
      expect(ev.involvedObject).toMatchObject({ kind: 'Node', name: 'n1' });

      await ensureNetns(exec, ns);
      await waitFor(() => readApplyStatus(dir)[0]?.failed === false, 30_000, 'a good apply');
      // No endpoints: both Services are REJECTed in the filter table.
      const saved = (await exec.run('iptables-save', [], { netns: ns })).stdout;
      expect(saved).toContain('default/web:http has no endpoints');
      expect(saved).toContain('default/other:http has no endpoints');
    }, 60_000);
});
