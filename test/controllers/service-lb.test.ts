// The lab cloud's LoadBalancer service controller, driven with the real kubectl against a kdp API
// server (virtual: no kernel involved): addresses from --lb-cidr, release on delete and on type
// change, exhaustion and a taken loadBalancerIP leave the Service pending with an event, a foreign
// loadBalancerClass is left alone.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_USER } from '../../src/apiserver/app.js';
import { buildInProcessClient } from '../../src/client/in-process.js';
import type { Client } from '../../src/client/types.js';
import type { Service } from '../../src/api/types/service.js';
import { buildControllerManager, type ControllerManager } from '../../src/controllers/manager.js';
import { LB_CLEANUP_FINALIZER } from '../../src/controllers/service-lb/controller.js';
import { buildLbPool, parseLbCidrs } from '../../src/controllers/service-lb/pool.js';
import { resolveControllerOptions } from '../../src/controllers/options.js';
import { kubectlMissing, startKubectlHarness, type KubectlHarness } from '../apiserver/helpers/kubectl.js';
import { waitFor } from '../helpers/cluster.js';

const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;

describe('LoadBalancer address pool', () => {
  it('hands out the lowest free address per family and reuses a freed one first', () => {
    const p = buildLbPool(parseLbCidrs('172.18.255.200/30,fd00:18::ff00/126'));
    expect([p.allocate('IPv4'), p.allocate('IPv4'), p.allocate('IPv6')])
      .toEqual(['172.18.255.200', '172.18.255.201', 'fd00:18::ff00']);
    p.release('172.18.255.200');
    expect(p.allocate('IPv4')).toBe('172.18.255.200');
    expect(p.occupy('172.18.255.203')).toBe(true);
    expect(p.occupy('172.18.255.203')).toBe(false);
    expect(p.occupy('10.0.0.1')).toBe(false);
    expect(p.allocate('IPv4')).toBe('172.18.255.202');
    expect(p.allocate('IPv4')).toBeUndefined();
    expect(p.free('IPv6')).toBe(3);
  });

  it('rejects a bad --lb-cidr naming the flag, and --cloud-provider other than kdp|none', () => {
    expect(() => parseLbCidrs('172.18.255.300/29')).toThrow('--lb-cidr: "172.18.255.300/29" is not a CIDR');
    expect(() => parseLbCidrs('10.0.0.0/29,10.1.0.0/29')).toThrow('--lb-cidr: two IPv4 CIDRs');
    expect(() => resolveControllerOptions({ cloudProvider: 'aws' as 'kdp' }))
      .toThrow('--cloud-provider: expected kdp or none, got "aws"');
    expect(resolveControllerOptions({}).lbCIDRs).toEqual(['172.18.255.200/29']);
  });
});

describe.skipIf(kubectlMissing(33))('LoadBalancer service controller with kubectl 1.33', () => {
  let h: KubectlHarness;
  let manager: ControllerManager;
  let client: Client;
  const kubectl = async (...args: string[]) => {
    const r = await h.kubectl(args, { minor: 33 });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const externalIP = async (name: string) =>
    (await kubectl('get', 'svc', name, '--no-headers')).trim().split(/\s+/)[3];
  const events = async (name: string) =>
    kubectl('get', 'events', '--field-selector', `involvedObject.name=${name}`,
      '-o', 'custom-columns=TYPE:.type,REASON:.reason,MSG:.message', '--no-headers');

  beforeAll(async () => {
    h = await startKubectlHarness();
    client = buildInProcessClient(h.server.server.service, ADMIN_USER);
    manager = buildControllerManager({ client,
      options: { controllers: ['service-lb'], lbCIDR: '172.18.255.200/31' } });
    await manager.start();
    await kubectl('create', 'deployment', 'web', '--image=registry.k8s.io/e2e-test-images/agnhost:2.43');
  }, 60_000);
  afterAll(async () => { await manager?.stop(); await h?.close(); });

  it('kubectl expose --type=LoadBalancer shows an EXTERNAL-IP from the pool, ipMode VIP, with the cleanup finalizer and events', async () => {
    await kubectl('expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80', '--name', 'lb1');
    expect(await waitFor(async () => (await externalIP('lb1')) === '172.18.255.200' || undefined)).toBe(true);
    const svc = JSON.parse(await kubectl('get', 'svc', 'lb1', '-o', 'json')) as Service;
    expect(svc.status?.loadBalancer?.ingress).toEqual([{ ip: '172.18.255.200', ipMode: 'VIP' }]);
    expect(svc.metadata.finalizers).toContain(LB_CLEANUP_FINALIZER);
    await manager.flushEvents();
    const ev = await events('lb1');
    expect(ev).toMatch(/Normal\s+EnsuringLoadBalancer\s+Ensuring load balancer/);
    expect(ev).toMatch(/Normal\s+EnsuredLoadBalancer\s+Ensured load balancer/);
    // One change, one pair (our own writes coming back through the watch are not new changes).
    const counts = await kubectl('get', 'events', '--field-selector', 'involvedObject.name=lb1',
      '-o', 'custom-columns=REASON:.reason,COUNT:.count', '--no-headers');
    expect(counts.trim().split('\n').map((l) => l.trim().split(/\s+/).join(' ')).sort())
      .toEqual(['EnsuredLoadBalancer 1', 'EnsuringLoadBalancer 1']);
  });

  it('an exhausted pool leaves the next Service <pending> with SyncLoadBalancerFailed; deleting a Service frees its address for it', async () => {
    await kubectl('expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80', '--name', 'lb2');
    await waitFor(async () => (await externalIP('lb2')) === '172.18.255.201' || undefined);
    await kubectl('expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80', '--name', 'lb3');
    await waitFor(async () => /SyncLoadBalancerFailed/.test(await events('lb3')) || undefined);
    expect(await externalIP('lb3')).toBe('<pending>');
    expect(await events('lb3')).toContain('Error syncing load balancer: failed to ensure load balancer: ' +
      'no available IP address in the pool 172.18.255.200/31 (IPv4)');
    await kubectl('delete', 'svc', 'lb1', '--wait=true', '--timeout=20s');
    expect(await waitFor(async () => (await externalIP('lb3')) === '172.18.255.200' || undefined)).toBe(true);
    await manager.flushEvents();
    await expect(client.get(SVC, 'lb1')).rejects.toMatchObject({ code: 'KDP_NOT_FOUND' });
  });

  it('a type change away from LoadBalancer releases the address, clears the status and the finalizer', async () => {
    // (kdp's API server does not yet drop type-dependent fields as upstream's strategy does.)
    await kubectl('patch', 'svc', 'lb2', '--type=json', '-p', JSON.stringify([
      { op: 'replace', path: '/spec/type', value: 'ClusterIP' },
      { op: 'remove', path: '/spec/allocateLoadBalancerNodePorts' },
      { op: 'remove', path: '/spec/externalTrafficPolicy' },
      { op: 'remove', path: '/spec/ports/0/nodePort' }]));
    const svc = await waitFor(async () => {
      const s = await client.get<Service>(SVC, 'lb2');
      return !s.metadata.finalizers?.includes(LB_CLEANUP_FINALIZER) && !s.status?.loadBalancer?.ingress ? s : undefined;
    });
    expect(svc.spec?.type).toBe('ClusterIP');
    await manager.flushEvents();
    const ev = await events('lb2');
    expect(ev).toMatch(/DeletingLoadBalancer\s+Deleting load balancer/);
    expect(ev).toMatch(/DeletedLoadBalancer\s+Deleted load balancer/);
    // The freed address goes to the next Service.
    await kubectl('expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80', '--name', 'lb4');
    expect(await waitFor(async () => (await externalIP('lb4')) === '172.18.255.201' || undefined)).toBe(true);
  });

  it('spec.loadBalancerIP is honoured when free; taken or outside the pool: pending and an event', async () => {
    await kubectl('delete', 'svc', 'lb3', 'lb4', '--wait=true', '--timeout=20s');
    await waitFor(async () => (await kubectl('get', 'svc', '-o', 'name')).includes('lb4') ? undefined : true);
    const lb = (name: string, ip: string) => h.file(`${name}.yaml`, [
      'apiVersion: v1', 'kind: Service', `metadata: {name: ${name}}`,
      `spec: {type: LoadBalancer, loadBalancerIP: "${ip}", selector: {app: web}, ports: [{port: 80}]}`, ''].join('\n'));
    await kubectl('apply', '-f', await lb('want201', '172.18.255.201'));
    expect(await waitFor(async () => (await externalIP('want201')) === '172.18.255.201' || undefined)).toBe(true);
    await kubectl('apply', '-f', await lb('taken', '172.18.255.201'));
    await waitFor(async () => /SyncLoadBalancerFailed/.test(await events('taken')) || undefined);
    expect(await events('taken')).toContain('spec.loadBalancerIP: 172.18.255.201 is already allocated to another Service');
    await kubectl('apply', '-f', await lb('outside', '10.9.9.9'));
    await waitFor(async () => /SyncLoadBalancerFailed/.test(await events('outside')) || undefined);
    expect(await events('outside')).toContain('spec.loadBalancerIP: 10.9.9.9 is not in the pool 172.18.255.200/31');
    expect(await externalIP('taken')).toBe('<pending>');
    expect(await externalIP('outside')).toBe('<pending>');
  });

  it('a Service with another spec.loadBalancerClass is left alone', async () => {
    await kubectl('apply', '-f', await h.file('cls.yaml', ['apiVersion: v1', 'kind: Service', 'metadata: {name: cls}',
      'spec: {type: LoadBalancer, loadBalancerClass: example.com/other, selector: {app: web}, ports: [{port: 80}]}', ''].join('\n')));
    await new Promise((r) => setTimeout(r, 300));
    const s = await client.get<Service>(SVC, 'cls');
    expect(s.metadata.finalizers ?? []).not.toContain(LB_CLEANUP_FINALIZER);
    expect(s.status?.loadBalancer?.ingress).toBeUndefined();
  });

  it('a restarted controller keeps the addresses Services hold and hands out only free ones', async () => {
    await manager.stop();
    manager = buildControllerManager({ client,
      options: { controllers: ['service-lb'], lbCIDR: '172.18.255.200/31' } });
    await manager.start();
    await kubectl('expose', 'deployment', 'web', '--type=LoadBalancer', '--port', '80', '--name', 'after');
    expect(await waitFor(async () => (await externalIP('after')) === '172.18.255.200' || undefined)).toBe(true);
    expect(await externalIP('want201')).toBe('172.18.255.201');
    expect(await externalIP('taken')).toBe('<pending>');
  });
});

describe.skipIf(kubectlMissing(33))('LoadBalancer service controller, dual stack', () => {
  let h: KubectlHarness;
  let manager: ControllerManager;
  let client: Client;
  beforeAll(async () => {
    h = await startKubectlHarness({ serviceCIDR: '10.96.0.0/16,fd00:10:96::/112' });
    client = buildInProcessClient(h.server.server.service, ADMIN_USER);
    manager = buildControllerManager({ client,
      options: { controllers: ['service-lb'], lbCIDR: '172.18.255.200/31,fd00:18::ff00/127' } });
    await manager.start();
  }, 60_000);
  afterAll(async () => { await manager?.stop(); await h?.close(); });

  it('a dual-stack Service gets one address per family, in spec.ipFamilies order; single stack gets its family only', async () => {
    const svc = (name: string, policy: string, families: string) => h.file(`${name}.yaml`, [
      'apiVersion: v1', 'kind: Service', `metadata: {name: ${name}}`,
      `spec: {type: LoadBalancer, ipFamilyPolicy: ${policy}, ipFamilies: [${families}], selector: {app: x}, ports: [{port: 80}]}`, ''].join('\n'));
    for (const [name, policy, fam] of [['dual', 'RequireDualStack', 'IPv6, IPv4'], ['six', 'SingleStack', 'IPv6']]) {
      const r = await h.kubectl(['apply', '-f', await svc(name!, policy!, fam!)], { minor: 33 });
      expect(r.stderr).toBe('');
    }
    const ingress = (name: string) => waitFor(async () =>
      (await client.get<Service>(SVC, name)).status?.loadBalancer?.ingress);
    expect(await ingress('dual')).toEqual([{ ip: 'fd00:18::ff00', ipMode: 'VIP' }, { ip: '172.18.255.200', ipMode: 'VIP' }]);
    expect(await ingress('six')).toEqual([{ ip: 'fd00:18::ff01', ipMode: 'VIP' }]);
    const out = await h.kubectl(['get', 'svc', 'dual', '--no-headers'], { minor: 33 });
    expect(out.stdout.trim().split(/\s+/)[3]).toBe('fd00:18::ff00,172.18.255.200');
  });
});

describe('--cloud-provider=none', () => {
  it('builds no service controller work: the controller is inert', async () => {
    const { buildServiceLbController } = await import('../../src/controllers/service-lb/controller.js');
    const ctl = buildServiceLbController({ options: resolveControllerOptions({ cloudProvider: 'none' }) } as never);
    expect(ctl.name).toBe('service-lb');
  });
});
