// Every netconf field that reaches an `ip -batch` line or another command is checked before any
// side effect: a bad one answers CNI code 7 (invalid network configuration) naming the field,
// and the recording exec stays empty (no bridge, no stray link, no address).

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { netnsNameOf } from '../../src/cni/netns-target.js';
import { bridgeConf, cniEnv, invoke } from '../helpers/cni.js';

const dataDir = mkdtempSync(join(tmpdir(), 'kdp-cni-conf-'));

async function add(over: Record<string, unknown>, ipam: Record<string, unknown> = {}) {
  const exec = buildRecordingExec();
  // An existing namespace path, so nothing but the config can stop the ADD.
  const env = cniEnv('ADD', { CNI_NETNS: '/proc/self/ns/net' });
  const out = await invoke(exec, 'kdp-t-node', env, bridgeConf(over, { dataDir, ...ipam }));
  return { ...out, calls: exec.calls.length };
}

describe('CNI netconf validation (code 7, before any side effect)', () => {
  it.each([
    ['a space', 'br 0', /^bridge: "br 0": interface name contains \/ or : or whitespace/],
    ['a slash', 'a/b', /^bridge: "a\/b": interface name contains/],
    ['a colon', 'br:0', /^bridge: "br:0": interface name contains/],
    ['a tab', 'br\t0', /^bridge: .*whitespace/],
    ['only a dot', '.', /^bridge: ".": interface name is \. or \.\./],
    ['two dots', '..', /^bridge: "..": interface name is \. or \.\./],
    ['16 bytes', 'b'.repeat(16), /^bridge: "b{16}": interface name is too long/],
    ['a quote', 'br"0', /^bridge: .*quote/],
    ['a hash', 'br#0', /^bridge: .*#/],
    ['a number', 5, /^bridge: must be a string/],
  ])('refuses a bridge name with %s', async (_what, bridge, msg) => {
    const out = await add({ bridge });
    expect(out.json.code).toBe(7);
    expect(out.json.msg).toMatch(msg);
    expect(out.calls).toBe(0);
  });

  it.each([[-1], [0.5], [1.5e3 + 0.5], [67], [65536], ['1500'], [true]])(
    'refuses mtu %j naming mtu', async (mtu) => {
      const out = await add({ mtu });
      expect(out.json.code).toBe(7);
      expect(out.json.msg).toMatch(/^mtu: must be an integer from 68 to 65535/);
      expect(out.calls).toBe(0);
    });

  it.each([
    ['ipMasq as a string', { ipMasq: 'yes' }, {}, /^ipMasq must be a boolean/],
    ['ranges as an object', {}, { ranges: { subnet: '10.0.0.0/24' } }, /^ipam\.ranges: /],
    ['an empty range set', {}, { ranges: [[]] }, /^ipam\.ranges\[0\]: must be a non-empty/],
    ['a bad subnet', {}, { ranges: [[{ subnet: '10.244.1.0/33' }]] },
      /^ipam\.ranges\[0\]\[0\]: invalid CIDR address: 10\.244\.1\.0\/33/],
    ['a subnet with a space', {}, { ranges: [[{ subnet: '10.244.1.0/24 x' }]] },
      /^ipam\.ranges\[0\]\[0\]: invalid CIDR address/],
    ['a gateway with a space', {},
      { ranges: [[{ subnet: '10.244.1.0/24', gateway: '10.244.1.1 x' }]] },
      /^ipam\.ranges\[0\]\[0\]: invalid gateway/],
    ['a rangeStart as a number', {}, { ranges: [[{ subnet: '10.244.1.0/24', rangeStart: 5 }]] },
      /^ipam\.ranges\[0\]\[0\]\.rangeStart: must be a string/],
    ['a legacy subnet that is not a CIDR', {}, { ranges: undefined, subnet: 'x' },
      /^ipam: invalid CIDR address: x/],
    ['routes as an object', {}, { routes: { dst: '0.0.0.0/0' } }, /^ipam\.routes: must be a list/],
    ['a route dst with extra words', {}, { routes: [{ dst: '0.0.0.0/0 dev eth9' }] },
      /^ipam\.routes\[0\]\.dst: invalid CIDR address/],
    ['a route without dst', {}, { routes: [{ gw: '10.244.1.1' }] }, /^ipam\.routes\[0\]\.dst/],
    ['a route gw of another family', {}, { routes: [{ dst: '0.0.0.0/0', gw: 'fd00::1' }] },
      /^ipam\.routes\[0\]\.gw: invalid IPv4 gateway address: fd00::1/],
    ['a dataDir that is not a string', {}, { dataDir: 5 }, /^ipam\.dataDir: must be a string/],
    ['an ipam type that is not a string', {}, { type: 5 }, /^ipam\.type: must be a string/],
    ['a requested IP that is a number', { args: { cni: { ips: [5] } } }, {},
      /^args\.cni\.ips\[0\]: invalid IP address: 5/],
    ['a requested IP with extra words', { args: { cni: { ips: ['10.244.1.5 dev x'] } } }, {},
      /^args\.cni\.ips\[0\]: invalid IP address/],
  ])('refuses %s naming the field', async (_what, over, ipam, msg) => {
    const out = await add(over, ipam);
    expect(out.json.code, out.stdout).toBe(7);
    expect(out.json.msg).toMatch(msg);
    expect(out.calls).toBe(0);
  });

  it('accepts a valid mtu and writes the bridge by name, after the name keyword', async () => {
    const exec = buildRecordingExec();
    const env = cniEnv('ADD', { CNI_NETNS: '/proc/self/ns/net' });
    await invoke(exec, 'kdp-t-node', env, bridgeConf({ mtu: 1400, bridge: 'up' }, { dataDir }));
    const batch = exec.calls.find((c) => c.args.includes('-batch'));
    expect(batch?.input).toContain('link add name up address ');
    expect(batch?.input).toContain(' mtu 1400 type bridge');
    expect(batch?.input).toContain('link set dev up up');
  });
});

describe('pod namespace names in ip -batch lines', () => {
  it('uses a /run/netns name only when it is one batch word, else the path', () => {
    expect(netnsNameOf('/run/netns/cni-1234-abcd')).toBe('cni-1234-abcd');
    expect(netnsNameOf('/var/run/netns/kdp-t-1')).toBe('kdp-t-1');
    expect(netnsNameOf('/run/netns/a b')).toBeUndefined();
    expect(netnsNameOf('/run/netns/a#b')).toBeUndefined();
    expect(netnsNameOf('/run/netns/..')).toBeUndefined();
  });
});
