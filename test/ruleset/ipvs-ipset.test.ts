import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import { formatIpsetSave, isValidEntry, parseIpsetSave } from '../../src/ruleset/ipvs/index.js';

// Shaped like a real `ipset save` from ipset 7.17 (kernel adds bucketsize/initval).
const SAVE = [
  'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12' +
    ' initval 0x612f2790',
  'add KUBE-CLUSTER-IP 10.96.0.10,udp:53',
  'add KUBE-CLUSTER-IP 10.96.0.1,tcp:443',
  'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535',
  'add KUBE-NODE-PORT-TCP 30080',
  'create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536',
  'add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5',
  'create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536',
  'add KUBE-LOAD-BALANCER-SOURCE-CIDR 1.2.3.4,tcp:80,10.0.0.0/8',
  'create KUBE-6-IPVS-IPS hash:ip family inet6 hashsize 1024 maxelem 65536',
  'add KUBE-6-IPVS-IPS fd00::1',
  'create X hash:ip,port family inet hashsize 1024 maxelem 65536 comment bucketsize 12' +
    ' initval 0xe54abf35',
  'add X 1.1.1.1,sctp:5 comment "hi there"',
  '',
].join('\n');

describe('ipset save text', () => {
  it('formats what it parsed byte for byte', () => {
    expect(formatIpsetSave(parseIpsetSave(SAVE))).toBe(SAVE);
  });

  it('keeps create options in order and entry comments', () => {
    const sets = parseIpsetSave(SAVE);
    expect(sets.map((s) => s.type)).toEqual([
      'hash:ip,port', 'bitmap:port', 'hash:ip,port,ip', 'hash:ip,port,net', 'hash:ip',
      'hash:ip,port',
    ]);
    expect(sets[1]!.options).toEqual([{ key: 'range', value: '0-65535' }]);
    expect(sets[5]!.options.find((o) => o.key === 'comment')).toEqual({ key: 'comment' });
    expect(sets[5]!.entries[0]).toEqual({ value: '1.1.1.1,sctp:5', comment: 'hi there' });
  });

  it('checks members against the set type', () => {
    expect(isValidEntry('hash:ip,port', '10.96.0.1,tcp:443')).toBe(true);
    expect(isValidEntry('hash:ip,port', '10.96.0.1')).toBe(false);
    expect(isValidEntry('bitmap:port', '70000')).toBe(false);
    expect(isValidEntry('hash:ip,port,net', 'fd00::1,tcp:80,fd00::/64')).toBe(true);
    expect(isValidEntry('hash:ip,port,ip', '10.0.0.1,tcp:80,nope')).toBe(false);
  });

  it.each([
    ['create A hash:mac', 1, 'unsupported set type'],
    ['add A 1.2.3.4', 1, 'undeclared set'],
    ['create A hash:ip,port\nadd A 1.2.3.4', 2, 'invalid hash:ip,port member'],
    ['create A bitmap:port range 0-65535\nadd A 80 timeout 5', 2, 'unsupported member option'],
    ['flush A', 1, 'expected create or add'],
    ['create A hash:ip\nadd A 1.2.3.4 comment "x', 2, 'unbalanced'],
  ])('rejects %j at line %i', (text, line, reason) => {
    try {
      parseIpsetSave(text);
      expect.unreachable();
    } catch (e) {
      expect(isKdpError(e, 'KDP_PARSE')).toBe(true);
      expect((e as Error).message).toContain(`line ${line}`);
      expect((e as Error).message).toContain(reason);
    }
  });
});
