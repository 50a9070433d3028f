import { describe, expect, it } from 'vitest';
import { isKdpError } from '../../src/errors.js';
import {
  formatIpvsState, parseIpvsState, splitFamilies,
} from '../../src/ruleset/ipvs/index.js';

const TEXT = [
  '### ipvsadm -Sn',
  '-A -t 10.96.0.1:443 -s rr',
  '-a -t 10.96.0.1:443 -r 172.18.0.2:6443 -m -w 1',
  '### ipset save',
  'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536',
  'add KUBE-CLUSTER-IP 10.96.0.1,tcp:443',
  '### iptables-restore',
  '*nat',
  ':KUBE-SERVICES - [0:0]',
  'COMMIT',
  '### kube-ipvs0',
  '10.96.0.1/32',
  '',
].join('\n');

describe('ipvs state text (the ipvs.golden format)', () => {
  it('formats what it parsed byte for byte', () => {
    expect(formatIpvsState(parseIpvsState(TEXT))).toBe(TEXT);
  });

  it('splits the four sections into the model', () => {
    const s = parseIpvsState(TEXT);
    expect(s.ipvs.virtualServers).toHaveLength(1);
    expect(s.ipsets[0]!.entries).toEqual([{ value: '10.96.0.1,tcp:443' }]);
    expect(s.iptables).toBe('*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n');
    expect(s.dummyAddresses).toEqual(['10.96.0.1/32']);
  });

  it('names the line of the whole text when a section body is broken', () => {
    const broken = TEXT
      .replace('add KUBE-CLUSTER-IP 10.96.0.1,tcp:443', 'add KUBE-CLUSTER-IP bogus');
    expect(() => parseIpvsState(broken)).toThrow(/ipset line 6: invalid hash:ip,port member/);
  });

  it('rejects sections out of order', () => {
    const swapped = TEXT.replace('### ipset save', '### kube-ipvs0');
    try {
      parseIpvsState(swapped);
      expect.unreachable();
    } catch (e) {
      expect(isKdpError(e, 'KDP_PARSE')).toBe(true);
      expect((e as Error).message).toMatch(/line 4: expected header/);
    }
  });
});

describe('dual-stack compile output', () => {
  it('splits into one state text per family', () => {
    const v6 = TEXT.replace('10.96.0.1:443 -s', '[fd00::1]:443 -s')
      .replace('10.96.0.1:443 -r 172.18.0.2:6443', '[fd00::1]:443 -r [fd00::2]:6443')
      .replace('family inet ', 'family inet6 ').replace('10.96.0.1,tcp', 'fd00::1,tcp')
      .replace('10.96.0.1/32', 'fd00::1/128');
    const parts = splitFamilies(`# IPv4\n${TEXT}# IPv6\n${v6}`);
    expect(parts.map((p) => p.family)).toEqual(['IPv4', 'IPv6']);
    expect(parts.map((p) => formatIpvsState(parseIpvsState(p.text)))).toEqual([TEXT, v6]);
    expect(splitFamilies(TEXT)).toEqual([{ family: '', text: TEXT }]);
  });
});
