// The DNS server over a real API server: it watches Services, EndpointSlices and Namespaces as
// a client, so a Service created, changed or deleted is answered accordingly well within 1 s;
// /ready turns 200 once synced, /health answers, /metrics shows CoreDNS's metric names.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SERVE_CONFIG } from '../../src/dns/corefile.js';
import { startDns, type RunningDns } from '../../src/dns/serve.js';
import { startApi } from '../helpers/cluster.js';
import { lines, query } from './dns-client.js';
import { slice, svc } from './fixtures.js';

const SVC = { group: '', version: 'v1', resource: 'services', namespace: 'default' };
const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', namespace: 'default' };
const Z = 'cluster.local';

let api: Awaited<ReturnType<typeof startApi>>;
let dns: RunningDns;
const logs: string[] = [];

beforeAll(async () => {
  api = await startApi();
  // The bare API server has no namespaces (the cluster's bootstrap makes them).
  await api.client.create({ group: '', version: 'v1', resource: 'namespaces' },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  await api.client.create(SVC, svc('default', 'web', { clusterIP: '10.96.0.50',
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }));
  dns = await startDns({ client: api.client, host: '127.0.0.1', log: (l) => logs.push(l),
    config: { ...DEFAULT_SERVE_CONFIG, port: 0, forward: undefined, health: { host: '', port: 0 },
      ready: { host: '', port: 0 }, metrics: { host: '', port: 0 } } });
});

afterAll(async () => {
  await dns?.close();
  await api?.close();
});

/** Polls until `fn` passes (at most 1 s: the bound for a change to show). */
async function within1s(fn: () => Promise<void>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    try {
      await fn();
      return Date.now() - t0;
    } catch (e) {
      if (Date.now() - t0 > 1000) throw e;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

const ask = (name: string, type = 'A') => query(dns.dns.port, name, type);

describe('live records', () => {
  it('answers a Service that existed before it started', async () => {
    expect(lines((await ask(`web.default.svc.${Z}`)).answers))
      .toEqual([`web.default.svc.${Z}. 5 IN A 10.96.0.50`]);
  });

  it('a Service created, changed and deleted shows within 1 s each', async () => {
    const name = `late.default.svc.${Z}`;
    expect((await ask(name)).rcode).toBe('NXDOMAIN');
    await api.client.create(SVC, svc('default', 'late', { clusterIP: '10.96.0.51', ports: [{ port: 80 }] }));
    await within1s(async () => { expect(lines((await ask(name)).answers)).toEqual([`${name}. 5 IN A 10.96.0.51`]); });
    await api.client.patch(SVC, 'late', 'merge', { spec: { ports: [{ name: 'http', port: 8080 }] } });
    await within1s(async () => {
      expect(lines((await ask(`_http._tcp.${name}`, 'SRV')).answers))
        .toEqual([`_http._tcp.${name}. 5 IN SRV 0 100 8080 ${name}.`]);
    });
    await api.client.delete(SVC, 'late');
    await within1s(async () => { expect((await ask(name)).rcode).toBe('NXDOMAIN'); });
  });

  it('a headless Service follows its EndpointSlices (ready ones only)', async () => {
    const name = `db.default.svc.${Z}`;
    await api.client.create(SVC, svc('default', 'db', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] }));
    await within1s(async () => { expect((await ask(name)).rcode).toBe('NXDOMAIN'); });
    await api.client.create(SLICES, slice('default', 'db', 'db-abc', 'IPv4',
      [{ ip: '10.244.1.7', hostname: 'db-0' }, { ip: '10.244.2.8', hostname: 'db-1', ready: false }],
      [{ name: 'pg', port: 5432 }]));
    await within1s(async () => {
      expect(lines((await ask(name)).answers)).toEqual([`${name}. 5 IN A 10.244.1.7`]);
      expect(lines((await ask(`db-0.${name}`)).answers)).toEqual([`db-0.${name}. 5 IN A 10.244.1.7`]);
    });
  });

  it('a namespace created makes its names exist', async () => {
    const name = `fresh.svc.${Z}`;
    expect((await ask(name)).rcode).toBe('NXDOMAIN');
    await api.client.create({ group: '', version: 'v1', resource: 'namespaces' },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } });
    await within1s(async () => { expect((await ask(name)).rcode).toBe('NOERROR'); });
  });
});

describe('health, readiness and metrics', () => {
  const get = async (port: number | undefined, path: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: r.status, body: await r.text() };
  };

  it('/health and /ready answer OK once synced', async () => {
    expect(await get(dns.http.ports.health, '/health')).toEqual({ status: 200, body: 'OK' });
    expect(await get(dns.http.ports.ready, '/ready')).toEqual({ status: 200, body: 'OK' });
    expect((await get(dns.http.ports.ready, '/nope')).status).toBe(404);
  });

  it('/metrics counts requests, rcodes and durations under CoreDNS\'s names', async () => {
    await ask(`web.default.svc.${Z}`);
    await ask(`nope.default.svc.${Z}`);
    const { body } = await get(dns.http.ports.metrics, '/metrics');
    expect(body).toMatch(/coredns_dns_requests_total\{server="dns:\/\/:0",zone="\.",view="",proto="udp",family="1",type="A"\} \d+/);
    expect(body).toMatch(/coredns_dns_responses_total\{server="dns:\/\/:0",zone="\.",view="",rcode="NXDOMAIN",plugin="kubernetes"\} \d+/);
    expect(body).toMatch(/coredns_dns_request_duration_seconds_bucket\{le="0\.00025",server="dns:\/\/:0",zone="\.",view=""\} \d+/);
  });
});
