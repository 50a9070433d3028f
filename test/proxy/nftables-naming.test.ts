// Per-service object names of the nftables proxier: 8 characters of base32(SHA-256) and the
// readable service-port (and endpoint) name, as upstream; plus the cleanup transactions.

import { describe, expect, it } from 'vitest';
import { cleanupArtifacts, isNotFoundError } from '../../src/proxy/nftables/cleanup.js';
import { endpointChainNameBase, hashAndTruncate, isAffinitySetName, isServiceChainName,
  masqueradeMark, servicePortChainNameBase } from '../../src/proxy/nftables/naming.js';

describe('nftables naming', () => {
  it('hashes service ports as a real cluster and upstream tests show them', () => {
    expect(servicePortChainNameBase({ namespace: 'default', name: 'kubernetes', port: 'https',
      protocol: 'TCP' })).toBe('2QRHZV4L-default/kubernetes/tcp/https');
    expect(servicePortChainNameBase({ namespace: 'ns1', name: 'svc1', port: 'p80',
      protocol: 'TCP' })).toBe('ULMVA6XW-ns1/svc1/tcp/p80');
    expect(servicePortChainNameBase({ namespace: 'shop', name: 'web', port: '',
      protocol: 'UDP' })).toBe('O3NUMANU-shop/web/udp/');
  });

  it('names endpoints with IPv6 colons turned into dots', () => {
    const n = { namespace: 'shop', name: 'web', port: 'http', protocol: 'TCP' } as const;
    expect(endpointChainNameBase(n, '10.244.1.5', 8080))
      .toBe('FDH7QP7U-shop/web/tcp/http__10.244.1.5/8080');
    expect(endpointChainNameBase(n, 'fd00:10:244::5', 8080))
      .toBe('AKVQXSKM-shop/web/tcp/http__fd00.10.244..5/8080');
  });

  it('truncates names over 240 characters with "..."', () => {
    const [a, b, c] = ['a', 'b', 'c'].map((x) => x.repeat(63));
    const long = `${a}/${b}/tcp/${c}__${'f'.repeat(39)}/65535`;
    const h = hashAndTruncate(long);
    expect(h).toHaveLength(240);
    expect(h.endsWith('...')).toBe(true);
  });

  it('tells per-service chains and affinity sets from fixed objects', () => {
    expect(isServiceChainName('service-ULMVA6XW-ns1/svc1/tcp/p80')).toBe(true);
    expect(isServiceChainName('services')).toBe(false);
    expect(isAffinitySetName('affinity-X')).toBe(true);
    expect(isAffinitySetName('cluster-ips')).toBe(false);
  });

  it('prints the mark as Go %#08x does', () => {
    expect(masqueradeMark(14)).toBe('0x00004000');
    expect(masqueradeMark(12)).toBe('0x00001000');
  });

  it('cleans up by deleting the table of both families', () => {
    expect(cleanupArtifacts().map((a) => a.text)).toEqual(['delete table ip kube-proxy\n',
      'delete table ip6 kube-proxy\n']);
    expect(isNotFoundError('Error: No such file or directory')).toBe(true);
  });
});

describe('origins of per-service names', () => {
  it('maps a chain or affinity set name back to its service-port key', async () => {
    const { portKeyOfName } = await import('../../src/proxy/nftables/origins.js');
    expect(portKeyOfName('service-ULMVA6XW-ns1/svc1/tcp/p80')).toBe('ns1/svc1:p80/TCP');
    expect(portKeyOfName('endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80'))
      .toBe('ns1/svc1:p80/TCP');
    expect(portKeyOfName('external-O3NUMANU-shop/web/udp/')).toBe('shop/web/UDP');
    expect(portKeyOfName('services')).toBeUndefined();
  });
});
