import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildPluginConfig, forNode, loadNetworkConfigList, parseNetworkConfigList,
} from '../../src/cni/conf-list.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns, listLinks } from '../../src/host/netns.js';
import { buildCniCaller, CniPluginError, type CniCaller } from '../../src/kubelet/cni-caller.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const REF = '/usr/lib/cni';

describe('network configuration lists (libcni semantics)', () => {
  it('a conf dir yields its first file by name; a single .conf is wrapped into a list', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-cniconf-'));
    try {
      writeFileSync(join(dir, '20-b.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'b', plugins: [{ type: 'bridge' }] }));
      writeFileSync(join(dir, '10-a.conf'), JSON.stringify({ cniVersion: '0.4.0', name: 'a', type: 'kdp-cni', bridge: 'x' }));
      writeFileSync(join(dir, '00-ignored.txt'), 'not a config');
      const list = loadNetworkConfigList(dir)!;
      expect(list.name).toBe('a');
      expect(list.cniVersion).toBe('0.4.0');
      expect(list.plugins).toEqual([{ cniVersion: '0.4.0', name: 'a', type: 'kdp-cni', bridge: 'x' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('picks the highest supported of cniVersion and cniVersions, and refuses a list without types', () => {
    const l = parseNetworkConfigList(JSON.stringify({
      cniVersion: '0.4.0', cniVersions: ['1.0.0', '9.9.9', '1.1.0'], name: 'n', plugins: [{ type: 'x' }],
    }), 'inline');
    expect(l.cniVersion).toBe('1.1.0');
    expect(() => parseNetworkConfigList('{"name":"n","plugins":[{}]}', 'f')).toThrow(/plugins\[0\] has no "type"/);
  });

  it('each plugin gets the list name and version, runtimeConfig for declared capabilities only, and prevResult', () => {
    const list = parseNetworkConfigList(JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'x' }] }), 'i');
    const conf = buildPluginConfig(list, { type: 'portmap', capabilities: { portMappings: true }, snat: true }, {
      prevResult: { ips: [] }, capabilityArgs: { portMappings: [{ hostPort: 1 }], bandwidth: { rate: 1 } },
    });
    expect(conf).toEqual({
      type: 'portmap', snat: true, cniVersion: '1.0.0', name: 'n',
      runtimeConfig: { portMappings: [{ hostPort: 1 }] }, prevResult: { ips: [] },
    });
  });
});

describe('fitting a user conflist to a node', () => {
  it('host-local usePodCidr / usePodCidrIPv6 become the node\'s pod CIDRs and dataDir defaults to the node dir', () => {
    const l = parseNetworkConfigList(JSON.stringify({
      cniVersion: '1.0.0', name: 'n', plugins: [
        { type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: 'usePodCidr' }], [{ subnet: 'usePodCidrIPv6' }]] } },
        { type: 'portmap' },
      ],
    }), 'f');
    const fit = forNode(l, ['10.244.3.0/24', 'fd00:10:244:3::/64'], '/data/cni/n4');
    expect(fit.plugins[0]!.ipam).toEqual({
      type: 'host-local', dataDir: '/data/cni/n4',
      ranges: [[{ subnet: '10.244.3.0/24' }], [{ subnet: 'fd00:10:244:3::/64' }]],
    });
    expect(fit.plugins[1]).toEqual({ type: 'portmap' });
    expect(() => forNode(l, ['10.244.3.0/24'], '/d')).toThrow(/usePodCidrIPv6: the node has no such pod CIDR/);
  });
});

const run = canUseNetns(['ip', 'nsenter', 'iptables-restore']) && existsSync(join(REF, 'bridge'));
if (!existsSync(join(REF, 'bridge')) && process.env.CI === 'true') throw new Error('CI=true but /usr/lib/cni is missing');
const exec = buildHostExec();
const prefix = testNetnsName();
const node = `${prefix}-node`;
let dataDir = '';
let pods = 0;

async function newPod(): Promise<string> {
  const name = `${prefix}-p${pods++}`;
  await ensureNetns(exec, name);
  return name;
}

function list(doc: Record<string, unknown>) {
  return parseNetworkConfigList(JSON.stringify({ cniVersion: '1.0.0', ...doc }), 'test');
}

const kdpBridge = (ipamDir: string, subnet: string, bridge = 'kdp-cc0') => ({
  type: 'kdp-cni', bridge, isGateway: true, hairpinMode: true,
  ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet }]], routes: [{ dst: '0.0.0.0/0' }] },
});

describe.runIf(run)('the CNI caller runs config lists through real plugins (root)', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'kdp-cnicaller-'));
    await ensureNetns(exec, node);
  });

  afterAll(async () => {
    for (const c of callers) c.close();
    for (let i = 0; i < pods; i++) await deleteNetns(exec, `${prefix}-p${i}`);
    await deleteNetns(exec, node);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const callers: CniCaller[] = [];
  const caller = () => {
    const c = buildCniCaller({ exec, binDirs: [REF], cacheDir: join(dataDir, 'cache'), nodeNetns: node });
    callers.push(c);
    return c;
  };

  it('chains kdp-cni with the reference tuning and portmap plugins, passing prevResult and runtimeConfig', async () => {
    const pod = await newPod();
    const l = list({
      name: 'chain', plugins: [
        kdpBridge(join(dataDir, 'ipam'), '10.246.1.0/24'),
        { type: 'tuning', sysctl: { 'net.core.somaxconn': '777' } },
        { type: 'portmap', capabilities: { portMappings: true }, snat: true },
      ],
    });
    const att = {
      containerID: 'chain1', netns: `/run/netns/${pod}`, ifname: 'eth0',
      capabilityArgs: { portMappings: [{ hostPort: 18080, containerPort: 8080, protocol: 'tcp' }] },
    };
    const c = caller();
    const result = await c.add(l, att);
    // tuning and portmap return their prevResult: kdp-cni's result came through both of them.
    expect((result.ips as any[])[0]).toEqual({ interface: 2, address: '10.246.1.2/24', gateway: '10.246.1.1' });
    expect((result.interfaces as any[]).map((i) => i.name)).toEqual(['kdp-cc0', expect.stringMatching(/^kdpv/), 'eth0']);
    expect((await exec.run('sysctl', ['-n', 'net.core.somaxconn'], { netns: pod })).stdout.trim()).toBe('777');
    const nat = (await exec.run('iptables-save', ['-t', 'nat'], { netns: node })).stdout;
    expect(nat).toContain('--dport 18080');
    expect(nat).toContain('10.246.1.2:8080');
    expect(c.cachedResult(l, att)).toEqual(result);
    // (No CHECK here: Debian's portmap 1.1.1 fails CHECK on its missing ipv6 chain.)

    await c.del(l, att);
    expect((await exec.run('iptables-save', ['-t', 'nat'], { netns: node })).stdout).not.toContain('--dport 18080');
    expect((await listLinks(exec, pod)).map((x) => x.ifname)).toEqual(['lo']);
    expect(c.cachedResult(l, att)).toBeUndefined();
  });

  it('wires a pod with the reference bridge + host-local exec\'d, and DEL cleans up', async () => {
    const pod = await newPod();
    const ipamDir = join(dataDir, 'ref-ipam');
    const l = list({
      name: 'refnet', plugins: [{
        type: 'bridge', bridge: 'kdp-ref0', isGateway: true, hairpinMode: true,
        ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet: '10.246.2.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] },
      }],
    });
    const att = { containerID: 'ref1', netns: `/run/netns/${pod}`, ifname: 'eth0' };
    const c = caller();
    const r = await c.add(l, att);
    expect((r.ips as any[])[0].address).toBe('10.246.2.2/24');
    const links = await listLinks(exec, pod);
    expect(links.find((x) => x.ifname === 'eth0')!.addrs).toContainEqual({ family: 'inet', local: '10.246.2.2', prefixlen: 24 });
    await exec.run('ping', ['-c', '1', '-W', '2', '10.246.2.1'], { netns: pod });
    expect(readdirSync(join(ipamDir, 'refnet'))).toContain('10.246.2.2');
    await c.check(l, att);

    await c.del(l, att);
    expect((await listLinks(exec, pod)).map((x) => x.ifname)).toEqual(['lo']);
    expect(readdirSync(join(ipamDir, 'refnet'))).not.toContain('10.246.2.2');
    expect(existsSync(join(dataDir, 'cache', 'results', 'refnet-ref1-eth0'))).toBe(false);
  });

  it('an exec\'d plugin\'s error surfaces with its code and msg, and the failed ADD is undone', async () => {
    const pod = await newPod();
    const ipamDir = join(dataDir, 'fail-ipam');
    const l = list({
      name: 'failnet', plugins: [
        { type: 'bridge', bridge: 'kdp-ref1', isGateway: true,
          ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet: '10.246.3.0/24' }]] } },
        { type: 'tuning', sysctl: { 'net.no.such.key': '1' } },
      ],
    });
    const att = { containerID: 'fail1', netns: `/run/netns/${pod}`, ifname: 'eth0' };
    const err = await caller().add(l, att).catch((e) => e);
    expect(err).toBeInstanceOf(CniPluginError);
    expect(err.plugin).toBe('tuning');
    expect(err.cniCode).toBe(999);
    expect(err.cniMsg).toMatch(/no\/such\/key|no such file/i);
    expect(err.message).toContain('CNI ADD of plugin tuning failed: code 999');
    // libcni semantics: the runtime DELs the list, so the bridge plugin's work is gone too.
    expect((await listLinks(exec, pod)).map((x) => x.ifname)).toEqual(['lo']);
    expect(readdirSync(join(ipamDir, 'failnet')).filter((f) => /^\d/.test(f) && !f.startsWith('last'))).toEqual([]);

    const bad = list({ name: 'badnet', plugins: [{ type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: 'nope' }]] } }] });
    const e2 = await caller().add(bad, { ...att, containerID: 'fail2' }).catch((e) => e);
    expect(e2).toBeInstanceOf(CniPluginError);
    expect(e2.plugin).toBe('bridge');
    expect(e2.cniMsg).toContain('nope');
    const missing = await caller().add(list({ name: 'nobin', plugins: [{ type: 'kdp-no-such-plugin' }] }), att).catch((e) => e);
    expect(missing.cniMsg).toBe(`failed to find plugin "kdp-no-such-plugin" in path [${REF}]`);
  });

  it('runs kdp-cni exec\'d (bin/kdp-cni.js) when told to, with the same result shape', async () => {
    const pod = await newPod();
    const l = list({ name: 'execd', plugins: [kdpBridge(join(dataDir, 'ipam-x'), '10.246.4.0/24', 'kdp-cc1')] });
    const c = buildCniCaller({ exec, binDirs: [REF], cacheDir: join(dataDir, 'cache'), nodeNetns: node, execKdpCni: true });
    const att = { containerID: 'x1', netns: `/run/netns/${pod}`, ifname: 'eth0' };
    const r = await c.add(l, att);
    expect((r.ips as any[])[0]).toEqual({ interface: 2, address: '10.246.4.2/24', gateway: '10.246.4.1' });
    expect(JSON.parse(readFileSync(join(dataDir, 'cache', 'results', 'execd-x1-eth0'), 'utf8')).kind).toBe('cniCacheV1');
    await c.del(l, att);
    expect((await listLinks(exec, pod)).map((x) => x.ifname)).toEqual(['lo']);
  });

  it('after a failed in-process ADD the same caller (and its ip session) wires the next pod', async () => {
    const pod = await newPod();
    await exec.run('ip', ['-n', pod, 'link', 'add', 'eth0', 'type', 'bridge']);
    const c = caller();
    const l = list({ name: 'again', plugins: [kdpBridge(join(dataDir, 'ipam-a'), '10.246.5.0/24', 'kdp-cc2')] });
    const err = await c.add(l, { containerID: 'a1', netns: `/run/netns/${pod}`, ifname: 'eth0' }).catch((e) => e);
    expect(err).toBeInstanceOf(CniPluginError);
    expect(err.cniMsg).toBe('container veth name provided (eth0) already exists');
    expect((await listLinks(exec, pod)).map((x) => [x.ifname, x.linkKind])).toEqual([['lo', undefined], ['eth0', 'bridge']]);
    const r = await c.add(l, { containerID: 'a2', netns: `/run/netns/${pod}`, ifname: 'eth1' });
    const addr = (r.ips as any[])[0].address as string;
    expect(addr).toMatch(/^10\.246\.5\.\d+\/24$/);
    const eth1 = (await listLinks(exec, pod)).find((x) => x.ifname === 'eth1')!;
    expect(eth1.addrs).toContainEqual({ family: 'inet', local: addr.split('/')[0], prefixlen: 24 });
  });
});
