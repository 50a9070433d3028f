import { describe, expect, it } from 'vitest';
import {
  apiServiceIP, buildDefaultServiceCIDR, dnsServiceIP, parseServiceCIDRs, serviceIPFamilies,
} from '../../src/api/service-cidr.js';

describe('service CIDRs', () => {
  it('parses single and dual-stack ranges canonically', () => {
    expect(parseServiceCIDRs('10.96.0.1/12')).toEqual(['10.96.0.0/12']);
    const dual = parseServiceCIDRs('10.96.0.0/12, FD00:10:96::/108');
    expect(dual).toEqual(['10.96.0.0/12', 'fd00:10:96::/108']);
    expect(serviceIPFamilies(dual)).toEqual(['IPv4', 'IPv6']);
  });
  it('derives the API and DNS service IPs from the primary range', () => {
    expect(apiServiceIP(['10.96.0.0/12'])).toBe('10.96.0.1');
    expect(dnsServiceIP(['fd00:10:96::/108', '10.96.0.0/12'])).toBe('fd00:10:96::a');
  });
  it('rejects bad configurations with KDP_CONFIG', () => {
    for (const s of ['', 'x', '10.0.0.0/8', '10.96.0.0/12,10.97.0.0/16',
      '10.96.0.0/12,fd00::/108,fd01::/108', '10.0.0.0/31']) {
      expect(() => parseServiceCIDRs(s),
        s).toThrow(expect.objectContaining({ code: 'KDP_CONFIG' }));
    }
  });
  it('limits either family to 2^20 addresses, naming the primary or secondary range', () => {
    expect(() => parseServiceCIDRs('10.0.0.0/11')).toThrow(
      'specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12');
    expect(() => parseServiceCIDRs('10.96.0.0/12,fd00::/64')).toThrow(
      'specified --secondary-service-cluster-ip-range is too large; for 128-bit addresses, the mask must be >= 108');
    expect(parseServiceCIDRs('fd00:10:96::/108')).toEqual(['fd00:10:96::/108']);
  });

  it('builds the default ServiceCIDR object `kubernetes`', () => {
    const o = buildDefaultServiceCIDR(['10.96.0.0/12'], '2026-01-01T00:00:00Z');
    expect(o.metadata.name).toBe('kubernetes');
    expect(o.spec).toEqual({ cidrs: ['10.96.0.0/12'] });
    expect(o.status!.conditions![0]).toMatchObject({ type: 'Ready', status: 'True' });
  });
});
