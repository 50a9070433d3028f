// The pod's resolv.conf and hosts file, as upstream's kubelet renders them (dns.go,
// kubelet_pods.go managedHostsFileContent) and containerd writes them.

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types.js';
import {
  parseResolvConf, podDnsSettings, podKernelHostname, renderHosts, renderResolvConf,
} from '../../src/kubelet/resolv-conf.js';

const HOST = '# from the node\nnameserver 192.0.2.53\nnameserver 192.0.2.54\n' +
  'search old.example\nsearch lab.example. corp.example .\noptions edns0 timeout:2\n';
const CFG = { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', hostResolvConf: HOST };

function pod(spec: Record<string, unknown> = {}, name = 'web-0', ns = 'shop'): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns },
    spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } } as Pod;
}

describe('resolv.conf per dnsPolicy', () => {
  it('parses the host file as upstream: every nameserver, the last search line, options', () => {
    expect(parseResolvConf(HOST)).toEqual({ servers: ['192.0.2.53', '192.0.2.54'],
      searches: ['lab.example', 'corp.example'], options: ['edns0', 'timeout:2'] });
  });

  it('ClusterFirst (the default): cluster DNS, the namespace search list then the host\'s, ndots:5', () => {
    expect(renderResolvConf(pod(), CFG)).toBe(
      'search shop.svc.cluster.local svc.cluster.local cluster.local lab.example corp.example\n' +
      'nameserver 10.96.0.10\n' +
      'options ndots:5\n');
  });

  it('dual stack: both cluster DNS addresses', () => {
    const s = podDnsSettings(pod(), { ...CFG, clusterDNS: ['10.96.0.10', 'fd00:10:96::a'] });
    expect(s.servers).toEqual(['10.96.0.10', 'fd00:10:96::a']);
  });

  it('Default: the node\'s file as parsed', () => {
    expect(renderResolvConf(pod({ dnsPolicy: 'Default' }), CFG)).toBe(
      'search lab.example corp.example\nnameserver 192.0.2.53\nnameserver 192.0.2.54\n' +
      'options edns0 timeout:2\n');
  });

  it('ClusterFirst on the host network falls back to Default; ClusterFirstWithHostNet does not', () => {
    expect(renderResolvConf(pod({ hostNetwork: true }), CFG)).toContain('nameserver 192.0.2.53');
    expect(renderResolvConf(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), CFG))
      .toContain('nameserver 10.96.0.10');
  });

  it('None with dnsConfig: the documented example', () => {
    const p = pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['192.0.2.1'],
      searches: ['ns1.svc.cluster-domain.example', 'my.dns.search.suffix'],
      options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } });
    expect(renderResolvConf(p, CFG)).toBe('search ns1.svc.cluster-domain.example my.dns.search.suffix\n' +
      'nameserver 192.0.2.1\noptions ndots:2 edns0\n');
  });

  it('dnsConfig merges into ClusterFirst: duplicates dropped, an option overridden by name', () => {
    const p = pod({ dnsConfig: { nameservers: ['10.96.0.10', '1.1.1.1'], searches: ['cluster.local', 'x.example'],
      options: [{ name: 'ndots', value: '1' }, { name: 'single-request' }] } });
    expect(renderResolvConf(p, CFG)).toBe(
      'search shop.svc.cluster.local svc.cluster.local cluster.local lab.example corp.example x.example\n' +
      'nameserver 10.96.0.10\nnameserver 1.1.1.1\noptions ndots:1 single-request\n');
  });

  it('limits: three nameservers, 32 search paths, with upstream\'s warnings', () => {
    const p = pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'],
      searches: Array.from({ length: 40 }, (_, i) => `s${i}.example`) } });
    const s = podDnsSettings(p, CFG);
    expect(s.servers).toEqual(['1.1.1.1', '2.2.2.2', '3.3.3.3']);
    expect(s.searches).toHaveLength(32);
    expect(s.warnings[0]).toBe('Nameserver limits were exceeded, some nameservers have been omitted, ' +
      'the applied nameserver line is: 1.1.1.1 2.2.2.2 3.3.3.3');
    expect(s.warnings[1]).toMatch(/^Search Line limits were exceeded/);
  });

  it('no cluster DNS configured: ClusterFirst falls back to Default with a warning', () => {
    const s = podDnsSettings(pod(), { ...CFG, clusterDNS: [] });
    expect(s.servers).toEqual(['192.0.2.53', '192.0.2.54']);
    expect(s.warnings[0]).toContain('Falling back to "Default" policy.');
  });

  it('--resolv-conf="" under Default: localhost of the node\'s families and search "."', () => {
    const s = podDnsSettings(pod({ dnsPolicy: 'Default' }),
      { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', nodeIPs: ['172.18.0.2', 'fc00::2'] });
    expect(s).toMatchObject({ servers: ['127.0.0.1', '::1'], searches: ['.'] });
  });
});

describe('/etc/hosts and the hostname', () => {
  const HEAD = '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';

  it('the pod\'s own names per IP', () => {
    expect(renderHosts(pod(), ['10.244.1.5', 'fd00:10:244:1::5'])).toBe(HEAD +
      '10.244.1.5\tweb-0\nfd00:10:244:1::5\tweb-0\n');
  });

  it('hostname + subdomain: the FQDN first; host aliases after a blank line', () => {
    const p = pod({ hostname: 'db', subdomain: 'dbs', hostAliases: [{ ip: '192.0.2.9', hostnames: ['a', 'b'] }] });
    expect(renderHosts(p, ['10.244.1.5'])).toBe(HEAD +
      '10.244.1.5\tdb.dbs.shop.svc.cluster.local\tdb\n\n# Entries added by HostAliases.\n192.0.2.9\ta\tb\n');
    expect(podKernelHostname(p, 'cluster.local')).toBe('db');
    expect(podKernelHostname(pod({ hostname: 'db', subdomain: 'dbs', setHostnameAsFQDN: true }), 'cluster.local'))
      .toBe('db.dbs.shop.svc.cluster.local');
  });

  it('a name longer than 63 characters is cut, without a trailing dash', () => {
    const name = `${'a'.repeat(62)}-xyz`;
    expect(podKernelHostname(pod({}, name), 'cluster.local')).toBe('a'.repeat(62));
  });
});
