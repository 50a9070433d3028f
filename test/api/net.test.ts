import { describe, expect, it } from 'vitest';
import {
  addToIP, addressIndex, canonicalCIDR, canonicalIP, cidrContains, cidrSize, cidrsOverlap,
  compareIPs, ipFamilyOf, isIP, lastAddress, nthAddress, parseCIDR, parseIP, subnetAt,
} from '../../src/api/net.js';

describe('IP parsing', () => {
  it('accepts IPv4 with leading zeros as decimal, as ParseIPSloppy does', () => {
    expect(canonicalIP('010.001.0.9')).toBe('10.1.0.9');
  });
  it('rejects malformed IPv4', () => {
    for (const s of ['1.2.3', '1.2.3.256', '1.2.3.4.5', 'a.b.c.d', '1.2.3.', '', ' 1.2.3.4']) {
      expect(isIP(s), s).toBe(false);
    }
  });
  it('formats IPv6 as RFC 5952 like Go', () => {
    expect(canonicalIP('FE80:0:0:0:0:0:0:1')).toBe('fe80::1');
    expect(canonicalIP('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(canonicalIP('2001:db8:0:1:1:1:1:1')).toBe('2001:db8:0:1:1:1:1:1');
    expect(canonicalIP('::')).toBe('::');
    expect(canonicalIP('::1')).toBe('::1');
    expect(canonicalIP('1::')).toBe('1::');
    expect(canonicalIP('64:ff9b::1.2.3.4')).toBe('64:ff9b::102:304');
  });
  it('treats IPv4-mapped IPv6 as IPv4', () => {
    expect(parseIP('::ffff:1.2.3.4')).toEqual({ family: 'IPv4', value: 0x01020304n });
    expect(canonicalIP('::ffff:1.2.3.4')).toBe('1.2.3.4');
  });
  it('rejects malformed IPv6 and zones', () => {
    for (const s of ['1::2::3', ':::', '1:2:3:4:5:6:7:8:9', '12345::', 'fe80::1%eth0', ':1.2.3.4',
      '1:2:3:4:5:6:7']) {
      expect(isIP(s), s).toBe(false);
    }
  });
  it('reports the family of addresses and CIDRs', () => {
    expect(ipFamilyOf('10.0.0.1')).toBe('IPv4');
    expect(ipFamilyOf('fd00::/64')).toBe('IPv6');
    expect(ipFamilyOf('nope')).toBeUndefined();
  });
});

describe('CIDR helpers', () => {
  it('parses and canonicalises CIDRs with host bits set', () => {
    expect(canonicalCIDR('10.96.0.1/12')).toBe('10.96.0.0/12');
    expect(canonicalCIDR('fd00:10:96::5/112')).toBe('fd00:10:96::/112');
    expect(parseCIDR('10.0.0.0/33')).toBeNull();
    expect(parseCIDR('fd00::/129')).toBeNull();
    expect(parseCIDR('10.0.0.0')).toBeNull();
    expect(parseCIDR('10.0.0.0/x')).toBeNull();
  });
  it('tests containment and overlap per family', () => {
    expect(cidrContains('10.96.0.0/12', '10.111.255.255')).toBe(true);
    expect(cidrContains('10.96.0.0/12', '10.112.0.0')).toBe(false);
    expect(cidrContains('10.96.0.0/12', 'fd00::1')).toBe(false);
    expect(cidrContains('fd00::/64', 'fd00::ffff')).toBe(true);
    expect(cidrsOverlap('10.0.0.0/8', '10.1.0.0/16')).toBe(true);
    expect(cidrsOverlap('10.0.0.0/16', '10.1.0.0/16')).toBe(false);
  });
  it('maps index to address and back', () => {
    expect(nthAddress('10.96.0.0/12', 1)).toBe('10.96.0.1');
    expect(nthAddress('10.96.0.0/12', 10)).toBe('10.96.0.10');
    expect(nthAddress('fd00:10:96::/112', 10)).toBe('fd00:10:96::a');
    expect(addressIndex('10.96.0.0/12', '10.97.0.1')).toBe(65537n);
    expect(addressIndex('10.96.0.0/12', '10.0.0.1')).toBe(-1n);
    expect(() => nthAddress('10.0.0.0/30', 4)).toThrow(RangeError);
    expect(cidrSize('10.96.0.0/12')).toBe(1048576n);
    expect(lastAddress('10.244.1.0/24')).toBe('10.244.1.255');
  });
  it('carves subnets and does address arithmetic', () => {
    expect(subnetAt('10.244.0.0/16', 24, 3)).toBe('10.244.3.0/24');
    expect(subnetAt('fd00:10:244::/56', 64, 1)).toBe('fd00:10:244:1::/64');
    expect(() => subnetAt('10.244.0.0/16', 24, 256)).toThrow(RangeError);
    expect(addToIP('10.0.0.255', 1)).toBe('10.0.1.0');
    expect(() => addToIP('255.255.255.255', 1)).toThrow(RangeError);
    expect(['10.0.0.2', 'fd00::1', '10.0.0.1'].sort(compareIPs))
      .toEqual(['10.0.0.1', '10.0.0.2', 'fd00::1']);
  });
});
