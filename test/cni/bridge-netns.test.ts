import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostVethName } from '../../src/cni/bridge.js';
import { masqChainName } from '../../src/cni/masq.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns, listLinks } from '../../src/host/netns.js';
import { bridgeConf, cniEnv, invoke } from '../helpers/cni.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const run = canUseNetns(['ip', 'nsenter', 'iptables-restore', 'sysctl']);
const exec = buildHostExec();
const prefix = testNetnsName();
const node = `${prefix}-node`;
let dataDir = '';
let podCount = 0;

async function newPod(): Promise<string> {
  const name = `${prefix}-p${podCount++}`;
  await ensureNetns(exec, name);
  return name;
}

function conf(over: Record<string, unknown> = {}, ipam: Record<string, unknown> = {}) {
  return bridgeConf(over, { dataDir, ...ipam });
}

async function add(pod: string, id: string, c: unknown = conf(), extra: Record<string, string> = {}) {
  return invoke(exec, node, cniEnv('ADD', { CNI_CONTAINERID: id, CNI_NETNS: `/run/netns/${pod}`, ...extra }), c);
}

async function del(pod: string, id: string, c: unknown = conf()) {
  return invoke(exec, node, cniEnv('DEL', { CNI_CONTAINERID: id, CNI_NETNS: pod ? `/run/netns/${pod}` : '' }), c);
}

async function sh(ns: string, file: string, args: string[]): Promise<string> {
  return (await exec.run(file, args, { netns: ns })).stdout;
}

function reservations(network = 'kdptest'): string[] {
  const dir = join(dataDir, network);
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^[0-9a-f.:]+$/.test(f)) : [];
}

describe.runIf(run)('kdp-cni bridge plugin in network namespaces (root)', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'kdp-cni-'));
    await ensureNetns(exec, node);
    await sh(node, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=0']);
  });

  afterAll(async () => {
    for (let i = 0; i < podCount; i++) await deleteNetns(exec, `${prefix}-p${i}`);
    await deleteNetns(exec, node);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ADD wires the pod: result shape, bridge, veth, address, default route, sysctls', async () => {
    const pod = await newPod();
    const out = await add(pod, 'ctr1');
    expect(out.exitCode, out.stdout).toBe(0);
    expect(out.stdout.endsWith('\n')).toBe(false);
    const r = out.json;
    expect(r.cniVersion).toBe('1.0.0');
    expect(r.interfaces.map((i: any) => i.name)).toEqual(['kdp-br0', hostVethName('ctr1', 'eth0'), 'eth0']);
    expect(r.interfaces[2].sandbox).toBe(`/run/netns/${pod}`);
    expect(r.ips).toEqual([{ interface: 2, address: '10.244.1.2/24', gateway: '10.244.1.1' }]);
    expect(r.routes).toEqual([{ dst: '0.0.0.0/0' }]);
    expect(r.dns).toEqual({});

    const nodeLinks = await listLinks(exec, node);
    const br = nodeLinks.find((l) => l.ifname === 'kdp-br0')!;
    expect(br.operstate).toBe('UP');
    expect(br.addrs).toContainEqual({ family: 'inet', local: '10.244.1.1', prefixlen: 24 });
    const veth = nodeLinks.find((l) => l.ifname === hostVethName('ctr1', 'eth0'))!;
    expect(veth.master).toBe('kdp-br0');
    const podLinks = await listLinks(exec, pod);
    expect(podLinks.find((l) => l.ifname === 'eth0')!.addrs).toContainEqual({ family: 'inet', local: '10.244.1.2', prefixlen: 24 });
    expect(await sh(pod, 'ip', ['route', 'show', 'default'])).toContain('default via 10.244.1.1 dev eth0');
    expect((await sh(pod, 'sysctl', ['-n', 'net.ipv4.conf.eth0.arp_notify'])).trim()).toBe('1');
    expect((await sh(pod, 'sysctl', ['-n', 'net.ipv6.conf.eth0.accept_dad'])).trim()).toBe('0');
    expect((await sh(node, 'sysctl', ['-n', 'net.ipv6.conf.kdp-br0.accept_ra'])).trim()).toBe('0');
    expect((await sh(node, 'sysctl', ['-n', 'net.ipv4.ip_forward'])).trim()).toBe('1');
    expect(readFileSync(join(dataDir, 'kdptest', '10.244.1.2'), 'utf8')).toBe('ctr1\r\neth0');
  });

  it('gives the next pod the next address, and the pods reach each other and the gateway', async () => {
    const pod = await newPod();
    const out = await add(pod, 'ctr2');
    expect(out.json.ips[0].address).toBe('10.244.1.3/24');
    await sh(pod, 'ping', ['-c', '1', '-W', '2', '10.244.1.2']);
    await sh(pod, 'ping', ['-c', '1', '-W', '2', '10.244.1.1']);
  });

  it('refuses an existing interface name and leaves it and the store untouched', async () => {
    const pod = await newPod();
    await sh(pod, 'ip', ['link', 'add', 'eth0', 'type', 'bridge']);
    const before = reservations();
    const out = await add(pod, 'ctr3');
    expect(out.json).toEqual({ code: 999, msg: 'container veth name provided (eth0) already exists' });
    expect(reservations()).toEqual(before);
    expect((await listLinks(exec, pod)).some((l) => l.ifname === 'eth0' && l.linkKind === 'bridge')).toBe(true);
  });

  it('a bridge address clash fails the ADD and leaves no interface, reservation or rule behind; retry works', async () => {
    const pod = await newPod();
    const before = reservations();
    // Another subnet on the same bridge: fails at the gateway check, after IPAM allocated.
    const clash = conf({ ipMasq: true }, { ranges: [[{ subnet: '10.251.0.0/24' }]] });
    const out = await add(pod, 'ctr4', clash);
    expect(out.json).toEqual({
      code: 999,
      msg: 'failed to set bridge addr: "kdp-br0" already has an IP address different from 10.251.0.1/24',
    });
    expect((await listLinks(exec, pod)).map((l) => l.ifname)).toEqual(['lo']);
    expect((await listLinks(exec, node)).some((l) => l.ifname === hostVethName('ctr4', 'eth0'))).toBe(false);
    expect(reservations()).toEqual(before);
    expect(await sh(node, 'iptables-save', ['-t', 'nat'])).not.toContain(masqChainName('kdptest', 'ctr4'));
    expect((await del(pod, 'ctr4', clash)).exitCode).toBe(0);
    const retry = await add(pod, 'ctr4', conf({ forceAddress: false }));
    expect(retry.exitCode, retry.stdout).toBe(0);
  });

  it('a failure inside the pod after the veth exists leaves no interface, reservation or rule behind', async () => {
    const pod = await newPod();
    const before = reservations();
    // The pod cannot add a route via a gateway outside its subnet: fails after veth + addresses.
    const bad = conf({ ipMasq: true }, { routes: [{ dst: '10.99.0.0/16', gw: '10.200.0.1' }] });
    const out = await add(pod, 'ctr8', bad);
    expect(out.exitCode).toBe(1);
    expect(out.json.code).toBe(999);
    expect((await listLinks(exec, pod)).map((l) => l.ifname)).toEqual(['lo']);
    expect((await listLinks(exec, node)).some((l) => l.ifname === hostVethName('ctr8', 'eth0'))).toBe(false);
    expect(reservations()).toEqual(before);
    expect(await sh(node, 'iptables-save', ['-t', 'nat'])).not.toContain(masqChainName('kdptest', 'ctr8'));
  });

  it('wires a CNI_NETNS path outside /run/netns through nsenter, with the same result', async () => {
    const pod = await newPod();
    const path = `/run/netns/../netns/${pod}`;
    const out = await invoke(exec, node, cniEnv('ADD', { CNI_CONTAINERID: 'ctr9', CNI_NETNS: path }), conf());
    expect(out.exitCode, out.stdout).toBe(0);
    expect(out.json.interfaces[2]).toMatchObject({ name: 'eth0', sandbox: path });
    const eth0 = (await listLinks(exec, pod)).find((l) => l.ifname === 'eth0')!;
    expect(eth0.addrs).toContainEqual({ family: 'inet', local: out.json.ips[0].address.split('/')[0], prefixlen: 24 });
    expect(eth0.address).toBe(out.json.interfaces[2].mac);
    expect((await sh(pod, 'sysctl', ['-n', 'net.ipv4.conf.eth0.arp_notify'])).trim()).toBe('1');
    const d = await invoke(exec, node, cniEnv('DEL', { CNI_CONTAINERID: 'ctr9', CNI_NETNS: path }), conf());
    expect(d.exitCode).toBe(0);
    expect((await listLinks(exec, pod)).map((l) => l.ifname)).toEqual(['lo']);
  });

  it('dual stack: an address and gateway per family, both default routes, v6 forwarding on', async () => {
    const pod = await newPod();
    await sh(node, 'sysctl', ['-q', '-w', 'net.ipv6.conf.all.forwarding=0']);
    const ds = conf({}, {
      ranges: [[{ subnet: '10.244.1.0/24' }], [{ subnet: 'fd00:10:244:1::/64' }]],
      routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
    });
    const out = await add(pod, 'ctr10', ds);
    expect(out.exitCode, out.stdout).toBe(0);
    const v6 = out.json.ips.find((i: any) => i.address.includes(':'));
    expect(v6).toEqual({ interface: 2, address: 'fd00:10:244:1::2/64', gateway: 'fd00:10:244:1::1' });
    expect(out.json.ips.some((i: any) => i.address.startsWith('10.244.1.'))).toBe(true);
    expect(await sh(pod, 'ip', ['-6', 'route', 'show', 'default'])).toContain('default via fd00:10:244:1::1 dev eth0');
    expect(await sh(pod, 'ip', ['-4', 'route', 'show', 'default'])).toContain('default via 10.244.1.1 dev eth0');
    expect((await sh(node, 'sysctl', ['-n', 'net.ipv6.conf.all.forwarding'])).trim()).toBe('1');
    await sh(pod, 'ping', ['-6', '-c', '1', '-W', '3', 'fd00:10:244:1::1']);
    expect((await del(pod, 'ctr10', ds)).exitCode).toBe(0);
    expect(reservations().filter((r) => r.includes(':'))).toEqual([]);
  });

  it('DEL removes interface, reservation and masquerade rules; again, and after the netns is gone', async () => {
    const pod = await newPod();
    const masq = conf({ ipMasq: true });
    const out = await add(pod, 'ctr5', masq);
    const ip = out.json.ips[0].address.split('/')[0];
    expect(await sh(node, 'iptables-save', ['-t', 'nat'])).toContain(masqChainName('kdptest', 'ctr5'));
    await deleteNetns(exec, pod); // the runtime lost the pod first (cni.md §4.7)
    const d1 = await del(pod, 'ctr5', masq);
    expect(d1).toMatchObject({ exitCode: 0, stdout: '' });
    expect(reservations()).not.toContain(ip);
    expect(await sh(node, 'iptables-save', ['-t', 'nat'])).not.toContain(masqChainName('kdptest', 'ctr5'));
    expect((await del(pod, 'ctr5', masq)).exitCode).toBe(0);
    expect((await del('', 'ctr5', masq)).exitCode).toBe(0);
    expect((await listLinks(exec, node)).some((l) => l.ifname === 'kdp-br0')).toBe(true);
  });

  it('CHECK passes with the ADD result and names what is missing otherwise', async () => {
    const pod = await newPod();
    const out = await add(pod, 'ctr6');
    const env = cniEnv('CHECK', { CNI_CONTAINERID: 'ctr6', CNI_NETNS: `/run/netns/${pod}` });
    const ok = await invoke(exec, node, env, conf({ prevResult: out.json }));
    expect(ok).toMatchObject({ exitCode: 0, stdout: '' });
    expect((await invoke(exec, node, env, conf())).json.msg).toBe('Required prevResult missing');
    const wrongId = await invoke(exec, node, { ...env, CNI_CONTAINERID: 'ctrX' }, conf({ prevResult: out.json }));
    expect(wrongId.json.msg).toBe('host-local: Failed to find address added by container ctrX');
    const addr = out.json.ips[0].address;
    await sh(pod, 'ip', ['addr', 'del', addr, 'dev', 'eth0']);
    const noAddr = await invoke(exec, node, env, conf({ prevResult: out.json }));
    expect(noAddr.json.msg).toBe(`Failed to match addr ${addr} on interface eth0`);
  });

  it('refuses the plugin\'s own namespace (code 8) for ADD and DEL without touching it', async () => {
    const env = cniEnv('ADD', { CNI_CONTAINERID: 'ctr7', CNI_NETNS: `/run/netns/${node}`, CNI_IFNAME: 'eth9' });
    const before = await listLinks(exec, node);
    const out = await invoke(exec, node, env, conf());
    expect(out.json).toEqual({ code: 8, msg: "plugin's netns and netns from CNI_NETNS should not be the same" });
    const delOut = await invoke(exec, node, { ...env, CNI_COMMAND: 'DEL' }, conf());
    expect(delOut.json.code).toBe(8);
    expect((await listLinks(exec, node)).map((l) => l.ifname)).toEqual(before.map((l) => l.ifname));
  });

  it('GC releases every attachment not listed as valid and keeps the listed ones', async () => {
    const held = reservations();
    expect(held.length).toBeGreaterThan(1);
    const gcConf = conf({ cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'ctr1', ifname: 'eth0' }] });
    const out = await invoke(exec, node, { CNI_COMMAND: 'GC', CNI_PATH: '/usr/lib/cni' }, gcConf);
    expect(out).toMatchObject({ exitCode: 0, stdout: '' });
    expect(reservations()).toEqual(['10.244.1.2']);
  });

  it('ten concurrent ADDs get ten distinct addresses', async () => {
    const pods = await Promise.all(Array.from({ length: 10 }, () => newPod()));
    const outs = await Promise.all(pods.map((p, i) => add(p, `par${i}`)));
    const ips = outs.map((o) => o.json?.ips?.[0]?.address);
    expect(outs.every((o) => o.exitCode === 0)).toBe(true);
    expect(new Set(ips).size).toBe(10);
  });

  it('concurrent first ADDs on a node without the bridge all succeed (one creates it)', async () => {
    const pods = await Promise.all(Array.from({ length: 5 }, () => newPod()));
    const fresh = conf({ name: 'kdpfresh', bridge: 'kdp-br9' }, { ranges: [[{ subnet: '10.247.0.0/24' }]] });
    const outs = await Promise.all(pods.map((p, i) => add(p, `fresh${i}`, fresh)));
    expect(outs.map((o) => o.exitCode)).toEqual([0, 0, 0, 0, 0]);
    const br = (await listLinks(exec, node)).find((l) => l.ifname === 'kdp-br9')!;
    expect(br.addrs.filter((a) => a.family === 'inet')).toEqual([{ family: 'inet', local: '10.247.0.1', prefixlen: 24 }]);
  });
});
