import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kdp } from '../helpers/cli.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const golden = (s: string, mode: string) => fileURLToPath(new URL(`../../rules/${s}/${mode}.golden`, import.meta.url));

describe('kdp trace --rules (no cluster)', () => {
  it('traces a foreign iptables-save dump: DNS over UDP splits over both CoreDNS pods', async () => {
    const r = await kdp('trace', '--rules', fixture('foreign-kind-node.iptables-save'), '--mode', 'iptables',
      '--node-ip', '172.19.0.3', '--proto', 'udp', '-o', 'json', '10.244.0.5', '10.96.0.10:53');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.verdict).toBe('ACCEPT');
    expect(j.masquerade).toBe(false);
    expect(j.destinations.map((d: any) => [d.destination, d.probability])).toEqual([
      ['10.244.0.2:53', 0.5],
      ['10.244.0.3:53', 0.5],
    ]);
    const svc = j.hops.find((h: any) => h.chain === 'KUBE-SVC-TCOU7JCQXEZGVUNU');
    expect(svc.origin.servicePort).toBe('kube-system/kube-dns:dns');
  });

  it('shows the REJECT of a service without endpoints in a foreign dump', async () => {
    const r = await kdp('trace', '--rules', fixture('foreign-kind-node.iptables-save'), '--node-ip', '172.19.0.3',
      '-o', 'json', '10.244.0.5', '10.96.200.15:80');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).verdict).toBe('REJECT');
  });

  it('masquerades the node reaching the API service from its own address', async () => {
    const r = await kdp('trace', '--rules', fixture('foreign-kind-node.iptables-save'), '--node-ip', '172.19.0.3',
      '-o', 'json', '172.19.0.3', '10.96.0.1:443');
    const j = JSON.parse(r.out);
    expect(j.destinations).toEqual([expect.objectContaining({ destination: '172.19.0.2:6443', masquerade: true, probability: 1 })]);
  });

  it('prints numbered hops with the NAT step for people', async () => {
    const r = await kdp('trace', '--rules', golden('04-nodeport', 'iptables'), '--node-ip', '172.18.0.2', '192.0.2.1', '172.18.0.2:30080');
    expect(r.out).toMatch(/ 1\. node ingress/);
    expect(r.out).toContain('DNAT 172.18.0.2:30080 → 10.244.0.11:8080');
    expect(r.out).toContain('verdict: ACCEPT; masquerade: yes');
  });

  it.each([
    [['10.244.0.5', 'not-an-ip:80'], /DST: "not-an-ip:80" is not an IP address/],
    [['10.244.0.5', '10.96.0.10:70000'], /port "70000" is out of range/],
    [['10.244.0.5', '10.96.0.10'], /needs a port for tcp/],
    [['--proto', 'gre', '10.244.0.5', '10.96.0.10:53'], /--proto: "gre"/],
  ])('rejects bad input %j with a clear error', async (extra, msg) => {
    const r = await kdp('trace', '--rules', fixture('foreign-kind-node.iptables-save'), ...extra);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(msg);
  });

  it('reads dumps of kube-proxy\'s fake iptables, whose multi-word comments are unquoted', async () => {
    const r = await kdp('trace', '--rules', fixture('kube-proxy-fake-unquoted.iptables-save'), '--node-ip', '192.168.0.2',
      '-o', 'json', '10.0.0.5', '172.30.0.41:80');
    expect(r.err).toBe('');
    expect(JSON.parse(r.out).destinations.map((d: any) => d.destination)).toEqual(['10.180.0.1:80']);
  });

  it('names the line of a dump that does not parse', async () => {
    const r = await kdp('trace', '--rules', fixture('broken.iptables-save'), '10.244.0.5', '10.96.0.10:53');
    expect(r.err).toMatch(/KDP_PARSE.*line 3/);
  });
});

describe('kdp rules compile', () => {
  it('prints the same table as the golden in canonical order', async () => {
    const dir = fileURLToPath(new URL('../../rules/04-nodeport/', import.meta.url));
    const r = await kdp('rules', 'compile', '-f', `${dir}objects.yaml`, '--kube-proxy-config', `${dir}config.yaml`,
      '--node-name', 'node-a', '--node-ip', '172.18.0.2', '--pod-cidr', '10.244.0.0/24', '--mode', 'iptables', '--canonical');
    expect(r.err).toBe('');
    const { readFileSync } = await import('node:fs');
    expect(r.out).toBe(readFileSync(`${dir}iptables.golden`, 'utf8'));
  });

  it('rejects an unknown mode naming the flag', async () => {
    const r = await kdp('rules', 'compile', '-f', 'x.yaml', '--mode', 'bpf');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--mode: "bpf"/);
  });
});

describe('kdp rules compile input checks', () => {
  it('refuses an object the API server would refuse, naming document and field, printing nothing', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'kdp-in-')), 'objs.yaml');
    writeFileSync(file, [
      'apiVersion: v1', 'kind: Service', 'metadata: {name: web, namespace: default}',
      'spec: {clusterIP: 10.96.0.5, ports: [{port: 80}]}', '---',
      'apiVersion: discovery.k8s.io/v1', 'kind: EndpointSlice',
      'metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}',
      'endpoints: [{addresses: [10.244.0.5]}]', '',
    ].join('\n'));
    const r = await kdp('rules', 'compile', '-f', file, '--mode', 'iptables');
    expect(r.code).toBe(2); // input errors exit 2 (README)
    expect(r.out).toBe('');
    expect(r.err).toMatch(/document 2: EndpointSlice default\/web-1 is invalid: addressType: Required value/);
  });
});

describe('kdp trace --live and kdp verify --live refusals', () => {
  it('refuses --live together with --rules', async () => {
    const r = await kdp('trace', '--live', '--rules', fixture('foreign-kind-node.iptables-save'), '10.244.0.5', '10.96.0.10:53');
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/KDP_CONFIG.*--live traces a running cluster/);
  });

  it('refuses --live on a virtual cluster, naming why', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { dataDirPaths } = await import('../../src/cluster/data-dir.js');
    const { startCluster } = await import('../../src/cluster/up.js');
    const paths = dataDirPaths(mkdtempSync(join(tmpdir(), 'kdp-live-virtual-')));
    const cluster = await startCluster({
      paths, nodes: 1, port: 0, proxyMode: 'iptables', timeScale: 5, dataPlane: 'virtual', progress: () => {},
    });
    try {
      const t = await kdp('trace', '--live', '--data-dir', paths.root, 'n1', '10.96.0.1:443');
      expect(t.code).not.toBe(0);
      expect(t.err).toMatch(/KDP_LIVE_VIRTUAL.*is virtual.*sudo kdp up/);
      const v = await kdp('verify', '--live', '--data-dir', paths.root);
      expect(v.err).toMatch(/KDP_LIVE_VIRTUAL/);
    } finally {
      await cluster.close();
    }
  }, 60_000);
});
