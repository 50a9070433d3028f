import { describe, expect, it } from 'vitest';
import { cidrContains } from '../../../src/api/net.js';
import type { Service } from '../../../src/api/types.js';
import {
  buildServiceIPsPlugin, type ServiceAllocationPlugin,
} from '../../../src/apiserver/admission/index.js';
import { isKdpError, type KdpError } from '../../../src/errors.js';
import { fixedRandom, Harness, service } from './harness.js';

function setup(cidrs = ['10.96.0.0/12'], random = fixedRandom(0.5)) {
  const h = new Harness();
  const plugin = buildServiceIPsPlugin({ serviceCIDRs: cidrs, nodePortRange: '30000-32767',
    source: h, random });
  h.plugins = [plugin];
  const create = async (s: Service, o = {}) => (await h.write('CREATE', s, o)) as Service;
  const update = async (s: Service) => (await h.write('UPDATE', s)) as Service;
  return { h, plugin, create, update };
}

async function rejection(p: Promise<unknown>): Promise<KdpError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof Error)) throw new Error('expected a rejection');
  return e as KdpError;
}

describe('ClusterIP allocation', () => {
  it('gives a ClusterIP service an address in the service CIDR and fills clusterIPs', async () => {
    const { create } = setup();
    const s = await create(service('web'));
    expect(cidrContains('10.96.0.0/12', s.spec!.clusterIP!)).toBe(true);
    expect(s.spec!.clusterIPs).toEqual([s.spec!.clusterIP]);
    expect(s.spec!.ipFamilies).toEqual(['IPv4']);
  });

  it('never hands out the network, broadcast or first (API service) address', async () => {
    const { create } = setup(['10.0.0.0/28'], Math.random);
    const got = new Set<string>();
    for (let i = 0; i < 13; i++) got.add((await create(service(`s${i}`))).spec!.clusterIP!);
    expect([...got].sort()).toEqual(Array.from({ length: 13 }, (_, i) => `10.0.0.${i + 2}`)
      .sort());
    const full = await rejection(create(service('one-too-many')));
    expect(full.code).toBe('KDP_INTERNAL');
    expect(full.message).toBe('failed to allocate a serviceIP: range is full');
  });

  it('prefers the upper band: the static band (first 256 of a /12) is kept for requests',
    async () => {
      const { create } = setup(['10.96.0.0/12'], fixedRandom(0));
      expect((await create(service('a'))).spec!.clusterIP).toBe('10.96.1.1');
    });

  it('honours a requested address, including the first one', async () => {
    const { create } = setup();
    expect((await create(service('kubernetes', { clusterIP: '10.96.0.1' }))).spec!.clusterIPs)
      .toEqual(['10.96.0.1']);
    expect((await create(service('dns', { clusterIP: '10.96.0.10' }))).spec!.clusterIP)
      .toBe('10.96.0.10');
  });

  it('rejects a requested address outside the range with 422 on spec.clusterIPs', async () => {
    const { create } = setup();
    const e = await rejection(create(service('x', { clusterIP: '10.200.0.5' })));
    expect(e.code).toBe('KDP_INVALID');
    expect(e.message).toBe('Service "x" is invalid: spec.clusterIPs: Invalid value: ' +
      '[]string{"10.200.0.5"}: failed to allocate IP 10.200.0.5: the provided IP (10.200.0.5) ' +
      'is not in the valid range. The range of valid IPs is 10.96.0.0/12');
    expect(e.details.causes?.[0]?.field).toBe('spec.clusterIPs');
  });

  it('rejects a requested address already taken with "provided IP is already allocated"',
    async () => {
      const { create } = setup();
      await create(service('a', { clusterIP: '10.96.5.5' }));
      const e = await rejection(create(service('b', { clusterIP: '10.96.5.5' })));
      expect(e.code).toBe('KDP_INVALID');
      expect(e.message).toContain('failed to allocate IP 10.96.5.5: provided IP is already ' +
        'allocated');
    });

  it('leaves headless services without an address and ExternalName without any', async () => {
    const { create, plugin } = setup();
    const hl = await create(service('hl', { clusterIP: 'None' }));
    expect(hl.spec!.clusterIPs).toEqual(['None']);
    const ext = await create(service('ext', { type: 'ExternalName', externalName: 'a.b',
      ports: [] }));
    expect(ext.spec!.clusterIP ?? '').toBe('');
    expect(plugin.usage().ips.IPv4).toBe(0);
  });

  it('allocates one address per family for PreferDualStack on a dual-stack cluster', async () => {
    const { create } = setup(['10.96.0.0/12', 'fd00:10:96::/108']);
    const s = await create(service('ds', { ipFamilyPolicy: 'PreferDualStack' }));
    expect(s.spec!.ipFamilies).toEqual(['IPv4', 'IPv6']);
    expect(s.spec!.clusterIPs).toHaveLength(2);
    expect(cidrContains('fd00:10:96::/108', s.spec!.clusterIPs![1]!)).toBe(true);
  });

  it('rejects RequireDualStack on a single-stack cluster', async () => {
    const { create } = setup();
    const e = await rejection(create(service('ds', { ipFamilyPolicy: 'RequireDualStack' })));
    expect(e.message).toContain('spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this ' +
      'cluster is not configured for dual-stack services');
  });
});

describe('NodePort allocation', () => {
  it('gives NodePort services a port from the upper part of 30000-32767', async () => {
    const { create } = setup(undefined, fixedRandom(0));
    const s = await create(service('np', { type: 'NodePort' }));
    expect(s.spec!.ports![0]!.nodePort).toBe(30086);
  });

  it('honours a requested node port and rejects a taken or out-of-range one with 422',
    async () => {
      const { create } = setup();
      const ports = (nodePort: number) => [{ port: 80, nodePort }];
      expect((await create(service('a', { type: 'NodePort', ports: ports(30080) })))
        .spec!.ports![0]!.nodePort).toBe(30080);
      const taken = await rejection(create(service('b', { type: 'NodePort',
        ports: ports(30080) })));
      expect(taken.message).toBe('Service "b" is invalid: spec.ports[0].nodePort: Invalid ' +
        'value: 30080: provided port is already allocated');
      const out = await rejection(create(service('c', { type: 'NodePort', ports: ports(8080) })));
      expect(out.message).toContain('provided port is not in the valid range. The range of ' +
        'valid ports is 30000-32767');
    });

  it('gives ports with the same number (TCP and UDP 53) one node port', async () => {
    const { create } = setup();
    const s = await create(service('dns', { type: 'NodePort', ports: [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, protocol: 'TCP' }] }));
    expect(s.spec!.ports![0]!.nodePort).toBe(s.spec!.ports![1]!.nodePort);
  });

  it('allocates a healthCheckNodePort for LoadBalancer with externalTrafficPolicy Local',
    async () => {
      const { create, plugin } = setup();
      const s = await create(service('lb', { type: 'LoadBalancer',
        externalTrafficPolicy: 'Local' }));
      expect(s.spec!.healthCheckNodePort).toBeGreaterThanOrEqual(30000);
      expect(s.spec!.healthCheckNodePort).not.toBe(s.spec!.ports![0]!.nodePort);
      expect(plugin.usage().nodePorts).toBe(2);
    });

  it('gives no node ports to a LoadBalancer with allocateLoadBalancerNodePorts false',
    async () => {
      const { create } = setup();
      const s = await create(service('lb', { type: 'LoadBalancer',
        allocateLoadBalancerNodePorts: false }));
      expect(s.spec!.ports![0]!.nodePort).toBeUndefined();
    });
});

describe('release and repair', () => {
  it('a failed or dry-run create releases what admission reserved', async () => {
    const { create, plugin } = setup();
    await create(service('a', { type: 'NodePort', clusterIP: '10.96.7.7',
      ports: [{ port: 80, nodePort: 30007 }] }), { failStore: true });
    await create(service('a', { clusterIP: '10.96.7.7' }), { dryRun: true });
    expect(plugin.usage()).toEqual({ ips: { IPv4: 0 }, nodePorts: 0 });
    await create(service('b', { type: 'NodePort', clusterIP: '10.96.7.7',
      ports: [{ port: 80, nodePort: 30007 }] }));
    expect(plugin.usage()).toEqual({ ips: { IPv4: 1 }, nodePorts: 1 });
  });

  it('a rejected create releases the reservations it made before failing', async () => {
    const { create, plugin } = setup();
    await create(service('a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30001 }] }));
    await rejection(create(service('b', { type: 'NodePort', clusterIP: '10.96.9.9',
      ports: [{ port: 81, nodePort: 30002 }, { port: 82, nodePort: 30001 }] })));
    expect(plugin.usage()).toEqual({ ips: { IPv4: 1 }, nodePorts: 1 });
  });

  it('an update that omits clusterIP and nodePort keeps the allocated values', async () => {
    const { create, update } = setup();
    const s = await create(service('a', { type: 'NodePort' }));
    const u = await update(service('a', { type: 'NodePort' }));
    expect(u.spec!.clusterIP).toBe(s.spec!.clusterIP);
    expect(u.spec!.ports![0]!.nodePort).toBe(s.spec!.ports![0]!.nodePort);
  });

  it('changing NodePort to ClusterIP clears and releases the node port on commit', async () => {
    const { create, update, plugin } = setup();
    const s = await create(service('a', { type: 'NodePort' }));
    const u = await update({ ...s, spec: { ...s.spec!, type: 'ClusterIP' } });
    expect(u.spec!.ports![0]!.nodePort).toBeUndefined();
    expect(plugin.usage().nodePorts).toBe(0);
    expect(plugin.usage().ips.IPv4).toBe(1);
  });

  it('changing ClusterIP to NodePort allocates a node port', async () => {
    const { create, update, plugin } = setup();
    const s = await create(service('a'));
    const u = await update({ ...s, spec: { ...s.spec!, type: 'NodePort' } });
    expect(u.spec!.ports![0]!.nodePort).toBeGreaterThanOrEqual(30000);
    expect(plugin.usage().nodePorts).toBe(1);
  });

  it('changing to ExternalName releases the cluster IP', async () => {
    const { create, update, plugin } = setup();
    const s = await create(service('a'));
    const u = await update({ ...s, spec: { ...s.spec!, type: 'ExternalName',
      externalName: 'x.example' } });
    expect(u.spec!.clusterIP ?? '').toBe('');
    expect(plugin.usage().ips.IPv4).toBe(0);
  });

  it('deleting releases addresses and ports, but only once the object is gone', async () => {
    const { h, create, plugin } = setup();
    await create(service('a', { type: 'NodePort', clusterIP: '10.96.3.3' }));
    await h.remove('Service', 'default', 'a', true);
    expect(plugin.usage()).toEqual({ ips: { IPv4: 1 }, nodePorts: 1 });
    await h.remove('Service', 'default', 'a');
    expect(plugin.usage()).toEqual({ ips: { IPv4: 0 }, nodePorts: 0 });
    await create(service('b', { clusterIP: '10.96.3.3' }));
  });

  it('a Service removed around admission no longer blocks its address or port', async () => {
    const { h, create, plugin } = setup();
    await create(service('a', { type: 'NodePort', clusterIP: '10.96.4.4',
      ports: [{ port: 80, nodePort: 30444 }] }));
    h.objects.clear();
    const b = await create(service('b', { type: 'NodePort', clusterIP: '10.96.4.4',
      ports: [{ port: 80, nodePort: 30444 }] }));
    expect(b.spec!.clusterIP).toBe('10.96.4.4');
    expect(plugin.usage()).toEqual({ ips: { IPv4: 1 }, nodePorts: 1 });
  });

  it('a new plugin over existing Services rebuilds its bitmaps before allocating', async () => {
    const { h, create } = setup();
    await create(service('a', { type: 'NodePort', clusterIP: '10.96.4.4',
      ports: [{ port: 80, nodePort: 30444 }] }));
    const fresh: ServiceAllocationPlugin = buildServiceIPsPlugin({
      serviceCIDRs: ['10.96.0.0/12'], nodePortRange: '30000-32767', source: h });
    h.plugins = [fresh];
    const e = await rejection(h.write('CREATE', service('b', { clusterIP: '10.96.4.4' })));
    expect(isKdpError(e, 'KDP_INVALID')).toBe(true);
    expect(fresh.usage()).toEqual({ ips: { IPv4: 1 }, nodePorts: 1 });
    await fresh.repair();
    expect(fresh.usage()).toEqual({ ips: { IPv4: 1 }, nodePorts: 1 });
  });
});
