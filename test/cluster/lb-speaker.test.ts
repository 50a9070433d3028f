// The netns LoadBalancer speaker's decisions (MetalLB layer 2) against a fake kernel: one owner per
// address by sha256(node#ip), only Ready and not-excluded nodes, only nodes with a ready endpoint
// for externalTrafficPolicy Local, withdrawn when the Service goes or its owner stops being Ready.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../src/api/types.js';
import type { Service } from '../../src/api/types/service.js';
import { buildInformerFactory, type InformerFactory } from '../../src/client/informer.js';
import type { Client } from '../../src/client/types.js';
import { electOwner, EXCLUDE_LB_LABEL, fakeLbAddresses, startLbSpeaker, type LbSpeaker } from '../../src/cluster/lb-speaker.js';
import { startApi } from '../helpers/cluster.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' } as const;
const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' } as const;

describe('LoadBalancer speaker (layer 2, fake kernel)', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let client: Client;
  let informers: InformerFactory;
  let speaker: LbSpeaker;
  const kernel = fakeLbAddresses();
  const owners = () => Object.fromEntries([...kernel.held].flatMap(([n, s]) => [...s].map((ip) => [ip, n])));
  const ready = async (name: string, status: 'True' | 'False', labels: Record<string, string> = {}) => {
    await client.create(NODES, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } } as Node).catch(() => undefined);
    await client.patch(NODES, name, 'merge', { status: { conditions: [{ type: 'Ready', status }] } }, { subresource: 'status' });
  };
  const lbService = async (name: string, ip: string, etp: 'Cluster' | 'Local' = 'Cluster') => {
    await client.create(SVC, { apiVersion: 'v1', kind: 'Service', metadata: { name },
      spec: { type: 'LoadBalancer', externalTrafficPolicy: etp,
        ...(etp === 'Local' ? { healthCheckNodePort: 32000 } : {}), selector: { app: name }, ports: [{ port: 80 }] } } as Service);
    await client.patch(SVC, name, 'merge', { status: { loadBalancer: { ingress: [{ ip, ipMode: 'VIP' }] } } },
      { subresource: 'status' });
  };
  const settle = async () => { await new Promise((r) => setTimeout(r, 100)); await speaker.settled(); };

  beforeAll(async () => {
    api = await startApi();
    client = api.client;
    informers = buildInformerFactory(client);
    speaker = startLbSpeaker({ informers, addresses: kernel, inPool: (ip) => ip.startsWith('172.18.255.') });
    informers.start();
    await informers.waitForSync();
    for (const n of ['n1', 'n2', 'n3']) await ready(n, 'True');
    await ready('n4', 'True', { [EXCLUDE_LB_LABEL]: '' });
  });
  afterAll(async () => { await speaker?.stop(); informers?.stop(); await api?.close(); });

  it('one Ready, not-excluded node owns each pool address, as MetalLB elects it', async () => {
    await lbService('a', '172.18.255.200');
    await lbService('b', '172.18.255.201');
    await lbService('notours', '192.0.2.9');
    await settle();
    expect(owners()).toEqual({
      '172.18.255.200': electOwner('172.18.255.200', ['n1', 'n2', 'n3']),
      '172.18.255.201': electOwner('172.18.255.201', ['n3', 'n2', 'n1']),
    });
  });

  it('the address moves when its owner stops being Ready, and is withdrawn with the Service', async () => {
    const first = owners()['172.18.255.200']!;
    await ready(first, 'False');
    await settle();
    const rest = ['n1', 'n2', 'n3'].filter((n) => n !== first);
    expect(owners()['172.18.255.200']).toBe(electOwner('172.18.255.200', rest));
    await ready(first, 'True');
    await client.delete(SVC, 'a');
    await settle();
    expect(owners()['172.18.255.200']).toBeUndefined();
  });

  it('externalTrafficPolicy Local: only a node with a ready endpoint announces', async () => {
    await client.create(SLICES, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: 'loc-1', labels: { 'kubernetes.io/service-name': 'loc' } }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.244.1.5'], nodeName: 'n2', conditions: { ready: true } },
        { addresses: ['10.244.2.5'], nodeName: 'n3', conditions: { ready: false } }],
      ports: [{ port: 8080, protocol: 'TCP' }] } as never);
    await lbService('loc', '172.18.255.202', 'Local');
    await settle();
    expect(owners()['172.18.255.202']).toBe('n2');
  });
});
