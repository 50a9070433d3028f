// Simulated hosts' layout (issue 19): host subnets and gateways, node placement and addresses,
// the flags' errors, and what `ensure` makes (recorded, no kernel).

import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildHosts, hostOfNode, hostUnderlay, nodeIPOnHosts, parseHostLayout } from '../../src/host/hosts.js';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { HostStateFile } from '../../src/host/state.js';
import { loadTopology } from '../../src/host/topology.js';

const spec = loadTopology();

describe('simulated hosts', () => {
  it('routed: a subnet per host (the underlay shifted by its size), gateway at the same offset', () => {
    const layout = { count: 3, link: 'routed' as const };
    expect([0, 1, 2].map((k) => hostUnderlay(spec, 'kdp-x', layout, k))).toEqual([
      { index: 0, name: 'h1', netns: 'kdp-x-underlay', bridge: 'br0', cidr: '172.18.0.0/16', gateway: '172.18.0.1' },
      { index: 1, name: 'h2', netns: 'kdp-x-underlay-h2', bridge: 'br0', cidr: '172.19.0.0/16', gateway: '172.19.0.1' },
      { index: 2, name: 'h3', netns: 'kdp-x-underlay-h3', bridge: 'br0', cidr: '172.20.0.0/16', gateway: '172.20.0.1' },
    ]);
    // Node i on host i mod N, numbered within its host.
    expect([0, 1, 2, 3, 4].map((i) => [hostOfNode(layout, i), nodeIPOnHosts(spec, layout, i)])).toEqual([
      [0, '172.18.0.2'], [1, '172.19.0.2'], [2, '172.20.0.2'], [0, '172.18.0.3'], [1, '172.19.0.3']]);
  });

  it('l2: one subnet, one numbering (as a single host)', () => {
    const layout = { count: 2, link: 'l2' as const };
    expect(hostUnderlay(spec, 'kdp-x', layout, 1).cidr).toBe('172.18.0.0/16');
    expect([0, 1, 2].map((i) => nodeIPOnHosts(spec, layout, i))).toEqual(['172.18.0.2', '172.18.0.3', '172.18.0.4']);
  });

  it('flags: errors name the flag', () => {
    expect(parseHostLayout(undefined, undefined)).toEqual({ count: 1, link: 'routed' });
    expect(() => parseHostLayout(0, 'routed')).toThrow('--hosts: 0 is not between 1 and 16');
    expect(() => parseHostLayout(2, 'vlan')).toThrow('--host-link: "vlan" is not one of routed, l2');
  });

  it('routed ensure: the router, a /30 uplink per host, routes to every host subnet; recorded before made', async () => {
    const exec = buildRecordingExec();
    exec.on(() => true, { stdout: '', stderr: '' });
    const state = new HostStateFile(join(mkdtempSync(join(tmpdir(), 'kdp-hosts-')), 'state.json'), 'kdp-x');
    await buildHosts({ exec, state, spec, prefix: 'kdp-x', layout: { count: 2, link: 'routed' } }).ensure();
    expect(state.current.netns).toEqual(['kdp-x-router', 'kdp-x-underlay-h2']);
    const batches = exec.calls.filter((c) => c.args.includes('-batch')).map((c) => `${c.args[1]}: ${c.input?.trim()}`);
    expect(batches).toContain('kdp-x-router: addr replace 10.255.0.5/30 dev kdp-h-2\nlink set kdp-h-2 up\n' +
      'route replace 172.19.0.0/16 via 10.255.0.6 dev kdp-h-2');
    expect(batches).toContain('kdp-x-underlay-h2: addr replace 172.19.0.1/16 dev br0\naddr replace 10.255.0.6/30 dev kdp-wan\n' +
      'link set kdp-wan up\nroute replace default via 10.255.0.5 dev kdp-wan');
  });
});
