// kubeadm's Corefile configures kdp's DNS server; unknown directives and bad values are
// errors naming the line; flags override the file.

import { describe, expect, it } from 'vitest';
import { kubeadmCorefile } from '../../src/cluster/addons/dns.js';
import { parseCorefile } from '../../src/dns/corefile.js';
import { dnsConfigOf, parseDnsArgs } from '../../src/dns/main.js';
import { parseResolvConf } from '../../src/dns/forward.js';

describe('Corefile', () => {
  it('kubeadm\'s Corefile: cluster.local + reverse zones, pods insecure, ttl 30, forward, HTTP ports', () => {
    const c = parseCorefile(kubeadmCorefile('cluster.local'));
    expect(c).toMatchObject({ port: 53, zone: 'cluster.local', reverseZones: true, ttl: 30,
      pods: 'insecure', forward: { resolvConf: '/etc/resolv.conf', upstreams: [], maxConcurrent: 1000 },
      health: { host: '', port: 8080 }, ready: { host: '', port: 8181 }, metrics: { host: '', port: 9153 } });
    expect(c.ignored).toEqual(['errors', 'cache', 'loop', 'reload', 'loadbalance']);
  });

  it('the plugin\'s defaults when the block says nothing: ttl 5, pods disabled', () => {
    const c = parseCorefile('.:1053 {\n  kubernetes example.test\n}\n');
    expect(c).toMatchObject({ port: 1053, zone: 'example.test', ttl: 5, pods: 'disabled',
      reverseZones: false });
    expect(c.forward).toBeUndefined();
  });

  it('forward to addresses', () => {
    const c = parseCorefile('. {\n kubernetes cluster.local\n forward . 192.0.2.1 [2001:db8::1]:5353\n}');
    expect(c.forward?.upstreams).toEqual([{ host: '192.0.2.1', port: 53 }, { host: '2001:db8::1', port: 5353 }]);
  });

  it('errors name the line', () => {
    expect(() => parseCorefile('.:53 {\n kubernetes cluster.local\n rewrite name a b\n}'))
      .toThrow(/Corefile:3: unknown directive 'rewrite'/);
    expect(() => parseCorefile('.:53 {\n kubernetes cluster.local {\n  ttl 9999\n }\n}'))
      .toThrow(/Corefile:3: ttl: must be 0..3600/);
    expect(() => parseCorefile('.:53 {\n kubernetes cluster.local {\n  pods maybe\n }\n}'))
      .toThrow(/Corefile:3: pods: "maybe"/);
    expect(() => parseCorefile('.:53 {\n kubernetes cluster.local\n')).toThrow(/unclosed block/);
    expect(() => parseCorefile('.:53 {\n errors\n}')).toThrow(/no kubernetes plugin/);
  });
});

describe('kdp-dns flags', () => {
  it('takes CoreDNS\'s -conf and kdp\'s --flags', () => {
    expect(parseDnsArgs(['-conf', '/etc/coredns/Corefile', '--port=0', '--listen', '127.0.0.1']))
      .toEqual({ conf: '/etc/coredns/Corefile', port: 0, listen: '127.0.0.1' });
    expect(() => parseDnsArgs(['--bogus', 'x'])).toThrow(/unknown argument "--bogus"/);
    expect(() => parseDnsArgs(['--port', 'x'])).toThrow(/--port: "x" is not a number/);
  });

  it('a missing -conf file means the defaults (ttl 5, pods insecure), said in the log', () => {
    const logs: string[] = [];
    const c = dnsConfigOf({ conf: '/nonexistent/Corefile', metrics: '' }, (l) => logs.push(l));
    expect(c).toMatchObject({ ttl: 5, pods: 'insecure', zone: 'cluster.local' });
    expect(c.metrics).toBeUndefined();
    expect(logs[0]).toMatch(/\/nonexistent\/Corefile not found/);
  });
});

describe('resolv.conf', () => {
  it('nameserver lines only, scopes dropped, duplicates once', () => {
    expect(parseResolvConf('# c\nsearch x\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\n' +
      'nameserver 10.0.0.2\noptions ndots:5\nnameserver not-an-ip\n')).toEqual(['10.0.0.2', 'fe80::1']);
  });
});
