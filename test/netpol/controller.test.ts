// The node agent's policy controller against a real API server and informers, with the memory
// applier (virtual mode): the node's table follows policies, pods and namespaces; identical text
// is not re-applied; a refused apply keeps the previous table and is retried.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInformerFactory, type InformerFactory } from '../../src/client/informer.js';
import type { KubeObject } from '../../src/client/types.js';
import { buildMemoryNetpolApplier, type NetpolApplier } from '../../src/netpol/applier.js';
import { buildNetpolController, type NetpolController } from '../../src/netpol/controller.js';
import { parseNetpolNft, simulateForward } from '../../src/netpol/nft-sim.js';
import { startApi } from '../helpers/cluster.js';

const NS = { group: '', version: 'v1', resource: 'namespaces' } as const;
const pods = (namespace: string) => ({ group: '', version: 'v1', resource: 'pods', namespace }) as const;
const NP = (namespace: string) =>
  ({ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', namespace }) as const;

describe('netpol controller (memory applier)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let informers: InformerFactory;
  let ctl: NetpolController;
  let applier: NetpolApplier;
  const errors: unknown[] = [];

  async function pod(ns: string, name: string, node: string, ip: string): Promise<void> {
    await api.client.create(pods(ns), { apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: ns, labels: { pod: name } },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'kdp/echo', ports: [{ containerPort: 80 }] }] },
    } as KubeObject);
    await api.client.patch(pods(ns), name, 'merge',
      { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } }, { subresource: 'status' });
  }
  const verdict = (saddr: string, daddr: string) => simulateForward(parseNetpolNft(applier.current()!),
    { saddr, daddr, protocol: 'tcp', dport: 80 }).verdict;

  beforeEach(async () => {
    errors.length = 0;
    api = await startApi();
    for (const [name, labels] of [['x', { team: 'x' }], ['y', {}]] as const) {
      await api.client.create(NS, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } } as KubeObject);
    }
    await pod('x', 'a', 'n1', '10.244.1.2');
    await pod('y', 'b', 'n2', '10.244.2.2');
    informers = buildInformerFactory(api.client);
    informers.start();
    applier = buildMemoryNetpolApplier();
    ctl = buildNetpolController({ nodeName: 'n2', nodeIPs: ['172.18.0.3'], informers, applier,
      debounceMs: 10, retryMs: 30, onError: (e) => errors.push(e) });
    await ctl.start();
  });
  afterEach(async () => {
    ctl.stop();
    informers.stop();
    await api.close();
  });

  it('compiles the node table on start: no policy, everything passes', () => {
    expect(applier.current()).toContain('table inet kdp-netpol');
    expect(verdict('10.244.1.2', '10.244.2.2')).toBe('accept');
    expect(ctl.applyCount).toBe(1);
  });

  it('follows a default deny, an allow by namespace label, a relabelled namespace and a deletion', async () => {
    await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: {} } } as KubeObject);
    await ctl.synced();
    expect(verdict('10.244.1.2', '10.244.2.2')).toBe('drop');
    expect(applier.current()).toContain('ingress-y/b');

    await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'allow-x', namespace: 'y' },
      spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }] },
    } as KubeObject);
    await ctl.synced();
    expect(verdict('10.244.1.2', '10.244.2.2')).toBe('accept');

    await api.client.patch(NS, 'x', 'merge', { metadata: { labels: { team: 'other' } } });
    await ctl.synced();
    expect(verdict('10.244.1.2', '10.244.2.2')).toBe('drop');

    await api.client.delete(NP('y'), 'deny');
    await api.client.delete(NP('y'), 'allow-x');
    await ctl.synced();
    expect(verdict('10.244.1.2', '10.244.2.2')).toBe('accept');
    expect(applier.current()).not.toContain('ingress-y/b');
    expect(errors).toEqual([]);
  });

  it("only the node's own pods get chains; other nodes' pods are peers", async () => {
    await api.client.create(NP('x'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'x' }, spec: { podSelector: {} } } as KubeObject);
    await ctl.synced();
    expect(applier.current()).not.toContain('ingress-x/a'); // a runs on n1
  });

  it('an unchanged text is not applied again; a refused apply keeps the previous table and is retried', async () => {
    const first = applier.current();
    await api.client.patch(pods('y'), 'b', 'merge', { metadata: { annotations: { note: 'x' } } });
    await ctl.synced();
    expect(ctl.applyCount).toBe(1);

    let refuse = 2;
    const real = applier.apply.bind(applier);
    applier.apply = async (t) => {
      if (refuse-- > 0) throw new Error('refused');
      await real(t);
    };
    await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: {} } } as KubeObject);
    await ctl.synced();
    expect(errors.length).toBeGreaterThan(0);
    expect(applier.current()).toBe(first);
    await expect.poll(() => applier.current() !== first, { timeout: 2000 }).toBe(true);
    expect(verdict('10.244.1.2', '10.244.2.2')).toBe('drop');
  });

  it('a finished pod leaves the table', async () => {
    await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: {} } } as KubeObject);
    await ctl.synced();
    expect(applier.current()).toContain('ingress-y/b');
    await api.client.patch(pods('y'), 'b', 'merge', { status: { phase: 'Succeeded' } }, { subresource: 'status' });
    await ctl.synced();
    expect(applier.current()).not.toContain('ingress-y/b');
  });

  describe('a pod programmed by the runtime before the API knows its IP (programPod)', () => {
    const newPod = async (name: string) => api.client.create(pods('y'), { apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'y', labels: { pod: name } },
      spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'kdp/echo' }] } } as KubeObject);

    it('is isolated in the applied table when programPod resolves, and stays once the API has its IP', async () => {
      await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
        metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } } as KubeObject);
      const p = await newPod('fresh');
      await ctl.programPod(p as never, ['10.244.2.9']);
      // Its first packet, either way, meets its chains; the API still has no IP for it.
      expect(verdict('10.244.2.9', '10.244.1.2')).toBe('drop');
      expect(verdict('10.244.1.2', '10.244.2.9')).toBe('drop');
      expect(applier.current()).toContain('egress-y/fresh');
      await api.client.patch(pods('y'), 'fresh', 'merge', { status: { phase: 'Running', podIP: '10.244.2.9',
        podIPs: [{ ip: '10.244.2.9' }] } }, { subresource: 'status' });
      await ctl.synced();
      expect(verdict('10.244.2.9', '10.244.1.2')).toBe('drop');
    });

    it('a deleted pod takes its early IPs out of the table', async () => {
      await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
        metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: {} } } as KubeObject);
      const p = await newPod('gone');
      await ctl.programPod(p as never, ['10.244.2.8']);
      expect(applier.current()).toContain('10.244.2.8');
      await api.client.delete(pods('y'), 'gone', { gracePeriodSeconds: 0 });
      await expect.poll(async () => { await ctl.synced(); return applier.current()!.includes('10.244.2.8'); },
        { timeout: 2000 }).toBe(false);
    });

    it('rejects when the apply holding the pod is refused (its containers must not start); a pod no policy selects needs no apply', async () => {
      const free = await newPod('free');
      const before = ctl.applyCount;
      await ctl.programPod(free as never, ['10.244.2.6']);
      expect(ctl.applyCount).toBe(before);
      await api.client.create(NP('y'), { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy',
        metadata: { name: 'deny', namespace: 'y' }, spec: { podSelector: { matchLabels: { pod: 'refused' } } } } as KubeObject);
      await ctl.synced();
      const p = await newPod('refused');
      applier.apply = async () => { throw new Error('refused'); };
      await expect(ctl.programPod(p as never, ['10.244.2.7'])).rejects.toThrow('refused');
    });
  });
});
