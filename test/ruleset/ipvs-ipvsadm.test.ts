import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { formatIpvsadm, parseIpvsadm, virtualServerKey } from '../../src/ruleset/ipvs/index.js';

const SAVE = [
  '-A -t 10.96.0.1:443 -s rr',
  '-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1',
  '-A -u 10.96.0.10:53 -s rr -p 10800',
  '-a -u 10.96.0.10:53 -r 10.244.0.5:53 -m -w 1',
  '-a -u 10.96.0.10:53 -r 10.244.1.7:53 -m -w 0',
  '-A --sctp-service 10.96.0.30:3868 -s mh -b mh-port',
  '-A -t [fd00:10:96::1]:443 -s rr',
  '-a -t [fd00:10:96::1]:443 -r [fd00:10:244::5]:6443 -m -w 1',
  '',
].join('\n');

describe('ipvsadm -Sn text', () => {
  it('formats what it parsed byte for byte', () => {
    expect(formatIpvsadm(parseIpvsadm(SAVE))).toBe(SAVE);
  });

  it('reads persistence, weight and protocol into the model', () => {
    const t = parseIpvsadm(SAVE);
    const dns = t.virtualServers[1]!;
    expect(virtualServerKey(dns)).toBe('10.96.0.10:53/UDP');
    expect(dns.persistence).toBe(10800);
    expect(dns.realServers.map((r) => r.weight)).toEqual([1, 0]);
    expect(t.virtualServers[2]!.protocol).toBe('SCTP');
    expect(t.virtualServers[3]!.realServers[0]!.address).toBe('fd00:10:244::5');
  });

  it('formats an empty table as empty text', () => {
    expect(formatIpvsadm(parseIpvsadm(''))).toBe('');
  });

  it.each([
    ['-A -x 10.96.0.1:443 -s rr', 1, 'expected -t'],
    ['-A -t 10.96.0.1 -s rr', 1, 'invalid service address'],
    ['-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.2:443 -r 1.2.3.4:80 -m -w 1', 2, 'undeclared'],
    ['-A -t 10.96.0.1:443 -s rr\n-a -t 10.96.0.1:443 -r 1.2.3.4:80 -m', 2, 'expected -w'],
    ['-A -t 10.96.0.1:443 -s rr -q 5', 1, 'unsupported virtual server option'],
  ])('rejects %j at line %i', (text, line, reason) => {
    try {
      parseIpvsadm(text);
      expect.unreachable();
    } catch (e) {
      expect(isKdpError(e, 'KDP_PARSE')).toBe(true);
      expect((e as Error).message).toContain(`line ${line}`);
      expect((e as Error).message).toContain(reason);
    }
  });
});
