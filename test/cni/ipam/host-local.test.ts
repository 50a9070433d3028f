import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildDiskIpamStore, buildHostLocalIpam, buildMemoryIpamStore, canonicalizeRange, rangeString,
} from '../../../src/cni/ipam/index.js';

describe('host-local range', () => {
  it('defaults gateway and start to network+1 and end to broadcast-1 for IPv4', () => {
    const r = canonicalizeRange({ subnet: '10.244.1.0/24' });
    expect(rangeString(r)).toBe('10.244.1.1-10.244.1.254');
  });
  it('ends IPv6 ranges at the last address', () => {
    expect(rangeString(canonicalizeRange({ subnet: 'fd00::/120' }))).toBe('fd00::1-fd00::ff');
  });
  it('rejects a /31 as too small and host bits as set', () => {
    expect(() => canonicalizeRange({ subnet: '10.0.0.0/31' })).toThrow(/too small/);
    expect(() => canonicalizeRange({ subnet: '10.0.0.1/24' })).toThrow(/host bits set/);
    expect(() => canonicalizeRange({ subnet: '10.0.0.0/33' })).toThrow(/invalid CIDR address/);
  });
  it('rejects a rangeStart outside the subnet', () => {
    expect(() => canonicalizeRange({ subnet: '10.0.0.0/24', rangeStart: '10.0.1.1' }))
      .toThrow('RangeStart 10.0.1.1 not in network 10.0.0.0/24');
  });
});

describe('host-local allocation', () => {
  it('a /30 has exactly one usable address', () => {
    const ipam = buildHostLocalIpam([[{ subnet: '10.245.0.0/30' }]], buildMemoryIpamStore());
    expect(ipam.allocate('a', 'eth0')).toEqual([{ address: '10.245.0.2/30', gateway: '10.245.0.1' }]);
    expect(() => ipam.allocate('b', 'eth0')).toThrow(
      'failed to allocate for range 0: no IP addresses available in range set: 10.245.0.1-10.245.0.2');
  });

  it('hands out addresses round-robin and does not reuse a freed one until the walk wraps', () => {
    const ipam = buildHostLocalIpam([[{ subnet: '10.244.1.0/24' }]], buildMemoryIpamStore());
    const ips = ['c1', 'c2', 'c3'].map((c) => ipam.allocate(c, 'eth0')[0]!.address);
    expect(ips).toEqual(['10.244.1.2/24', '10.244.1.3/24', '10.244.1.4/24']);
    expect(ipam.release('c2', 'eth0')).toEqual(['10.244.1.3']);
    expect(ipam.allocate('c4', 'eth0')[0]!.address).toBe('10.244.1.5/24');
  });

  it('wraps to the freed address when the range is exhausted (observed host-local run)', () => {
    const ipam = buildHostLocalIpam([
      [{ subnet: '10.246.0.0/24', rangeStart: '10.246.0.10', rangeEnd: '10.246.0.12' }],
      [{ subnet: 'fd00:10:246::/120' }],
    ], buildMemoryIpamStore());
    const first = ipam.allocate('h1', 'eth0');
    expect(first).toEqual([
      { address: '10.246.0.10/24', gateway: '10.246.0.1' },
      { address: 'fd00:10:246::2/120', gateway: 'fd00:10:246::1' },
    ]);
    ipam.allocate('h2', 'eth0');
    ipam.allocate('h3', 'eth0');
    expect(() => ipam.allocate('h1', 'eth0')).toThrow('failed to allocate for range 0: ' +
      '10.246.0.10 has been allocated to h1, duplicate allocation is not allowed');
    expect(() => ipam.allocate('h4', 'eth0')).toThrow(
      'no IP addresses available in range set: 10.246.0.10-10.246.0.12');
    ipam.release('h2', 'eth0');
    expect(ipam.release('h2', 'eth0')).toEqual([]);
    expect(ipam.allocate('h5', 'eth0').map((c) => c.address))
      .toEqual(['10.246.0.11/24', 'fd00:10:246::5/120']);
  });

  it('never hands out the gateway and refuses it when requested', () => {
    const ipam = buildHostLocalIpam([[{ subnet: '10.0.0.0/29', gateway: '10.0.0.3' }]],
      buildMemoryIpamStore());
    const got = [1, 2, 3, 4, 5].map((i) => ipam.allocate(`c${i}`, 'eth0')[0]!.address);
    expect(got).toEqual(['10.0.0.1/29', '10.0.0.2/29', '10.0.0.4/29', '10.0.0.5/29', '10.0.0.6/29']);
    const other = buildHostLocalIpam([[{ subnet: '10.0.0.0/29' }]], buildMemoryIpamStore());
    expect(() => other.allocate('x', 'eth0', ['10.0.0.1'])).toThrow("requested ip 10.0.0.1 is subnet's gateway");
  });

  it('honours a requested IP and refuses it when taken', () => {
    const ipam = buildHostLocalIpam([[{ subnet: '10.244.1.0/24' }]], buildMemoryIpamStore());
    expect(ipam.allocate('a', 'eth0', ['10.244.1.100'])[0]!.address).toBe('10.244.1.100/24');
    expect(() => ipam.allocate('b', 'eth0', ['10.244.1.100'])).toThrow(
      'requested IP address 10.244.1.100 is not available in range set 10.244.1.1-10.244.1.254');
  });

  it('continues across ranges of one set', () => {
    const ipam = buildHostLocalIpam([[
      { subnet: '10.0.0.0/30' }, { subnet: '10.0.1.0/30' },
    ]], buildMemoryIpamStore());
    expect(['a', 'b'].map((c) => ipam.allocate(c, 'eth0')[0]!.address))
      .toEqual(['10.0.0.2/30', '10.0.1.2/30']);
  });

  it('rejects overlapping range sets', () => {
    expect(() => buildHostLocalIpam([[{ subnet: '10.0.0.0/24' }], [{ subnet: '10.0.0.0/25' }]],
      buildMemoryIpamStore())).toThrow('range set 0 overlaps with 1');
  });
});

describe('host-local disk store', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('writes one file per IP holding id CRLF ifname, the last reserved IP and a lock file', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kdp-ipam-'));
    dirs.push(dataDir);
    const store = buildDiskIpamStore({ dataDir, network: 'kdp-net' });
    const ipam = buildHostLocalIpam([[{ subnet: '10.244.1.0/24' }]], store);
    ipam.allocate('ctr1', 'eth0');
    ipam.allocate('ctr2', 'eth0');
    const dir = join(dataDir, 'kdp-net');
    expect(readFileSync(join(dir, '10.244.1.2'), 'utf8')).toBe('ctr1\r\neth0');
    expect(readFileSync(join(dir, 'last_reserved_ip.0'), 'utf8')).toBe('10.244.1.3');
    expect(readdirSync(dir).sort()).toEqual(['10.244.1.2', '10.244.1.3', 'last_reserved_ip.0', 'lock']);
    expect(ipam.release('ctr1', 'eth0')).toEqual(['10.244.1.2']);
    // A fresh store over the same directory continues after the last reserved IP.
    const again = buildHostLocalIpam([[{ subnet: '10.244.1.0/24' }]],
      buildDiskIpamStore({ dataDir, network: 'kdp-net' }));
    expect(again.allocate('ctr3', 'eth0')[0]!.address).toBe('10.244.1.4/24');
    expect(again.get('ctr2', 'eth0')).toEqual(['10.244.1.3']);
  });
});
