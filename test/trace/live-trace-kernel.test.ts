import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { startCaptures } from '../../src/trace/live/capture.js';
import { startNftTrace } from '../../src/trace/live/kernel-trace-nft.js';
import { startXtTrace } from '../../src/trace/live/kernel-trace-xt.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

// The kernel's own tracing and tcpdump, live in throwaway namespaces: a TCP connect to a
// "service" on loopback that a kube-proxy-like rule DNATs, with a fixed source port.
const exec = buildHostExec();
const dir = mkdtempSync(join(tmpdir(), 'kdp-ktrace-'));

const CONNECT = `
const s = require('net').connect({ host: '127.0.0.1', port: 81, localPort: Number(process.argv[1]) });
s.on('connect', () => { s.end(); process.exit(0); });
s.on('error', () => process.exit(0));
setTimeout(() => process.exit(0), 2000);
`;
const connect = (netns: string, sport: number) => exec.run(process.execPath, ['-e', CONNECT, String(sport)], { netns });

describe.runIf(canUseNetns(['ip', 'nft', 'iptables', 'xtables-monitor', 'tcpdump']))('kernel tracing and capture in a namespace', () => {
  const nftNs = testNetnsName();
  const xtNs = testNetnsName();

  beforeAll(async () => {
    for (const ns of [nftNs, xtNs]) await ensureNetns(exec, ns);
    await exec.run('nft', ['-f', '-'], { netns: nftNs, input: `table ip kube-proxy {
  chain nat-output { type nat hook output priority -100; policy accept; jump services; }
  chain services { ip daddr 127.0.0.1 tcp dport 81 dnat to 127.0.0.1:82; }
}
` });
    await exec.run('iptables-restore', ['-w', '5', '--noflush'], { netns: xtNs, input: `*nat
:KUBE-SERVICES - [0:0]
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-SERVICES -d 127.0.0.1/32 -p tcp -m tcp --dport 81 -j DNAT --to-destination 127.0.0.1:82
COMMIT
` });
  }, 30_000);

  afterAll(async () => {
    for (const ns of [nftNs, xtNs]) await deleteNetns(exec, ns);
  });

  it('nft monitor trace reports the rules the packet matched, and kdp-trace goes afterwards', async () => {
    const before = (await exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: nftNs })).stdout;
    const file = join(dir, 'nft.txt');
    const s = await startNftTrace(exec, { name: 'n1', netns: nftNs }, { protocol: 'tcp', sport: 41001 }, file);
    await connect(nftNs, 41001);
    const t = await s.stop();
    expect(t.rules.map((r) => [r.stage, r.verdict])).toEqual([
      ['ip kube-proxy nat-output', 'jump services'],
      ['ip kube-proxy services', 'accept'],
    ]);
    expect(t.rules[1]!.text).toContain('dnat to 127.0.0.1:82');
    expect(t.rules[1]!.handle).toBeGreaterThan(0);
    expect(t.packets).toBeGreaterThan(0);
    expect(readFileSync(file, 'utf8')).toContain('trace id');
    const tables = (await exec.run('nft', ['list', 'tables'], { netns: nftNs })).stdout;
    expect(tables).not.toContain('kdp-trace');
    expect((await exec.run('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: nftNs })).stdout).toBe(before);
  }, 30_000);

  it('xtables-monitor --trace reports the iptables rules matched, and the TRACE rules go afterwards', async () => {
    const file = join(dir, 'xt.txt');
    // A rule an interrupted run left behind goes too.
    await exec.run('iptables', ['-t', 'raw', '-A', 'OUTPUT', '-p', 'udp', '--sport', '1', '-m', 'comment',
      '--comment', 'kdp-trace', '-j', 'TRACE'], { netns: xtNs });
    const s = await startXtTrace(exec, { name: 'n1', netns: xtNs }, { protocol: 'tcp', sport: 41002 }, file);
    expect((await exec.run('iptables-save', ['-t', 'raw'], { netns: xtNs })).stdout).toContain('kdp-trace');
    await connect(xtNs, 41002);
    const t = await s.stop();
    expect(t.rules.map((r) => `${r.stage} ${r.verdict}`)).toEqual([
      'nat OUTPUT jump KUBE-SERVICES',
      'nat KUBE-SERVICES accept',
    ]);
    expect(t.rules[1]!.text).toContain('-j DNAT --to-destination 127.0.0.1:82');
    expect((await exec.run('iptables-save', ['-t', 'raw'], { netns: xtNs })).stdout).not.toContain('kdp-trace');
  }, 30_000);

  it('tcpdump captures the probe after NAT into a pcap file that parses', async () => {
    const c = await startCaptures([{ netns: nftNs, iface: 'lo', label: 'lo' }], join(dir, 'cap'),
      { protocol: 'tcp', sport: 41003, dst: '127.0.0.1', dport: 81 });
    await connect(nftNs, 41003);
    const [r] = await c.stop();
    expect(existsSync(r!.file)).toBe(true);
    expect(r!.error).toBeUndefined();
    const syn = r!.packets.find((p) => p.packet.flags === 'S');
    // Captured on lo after the OUTPUT DNAT: the service port 81 became 82.
    expect(syn?.packet).toMatchObject({ src: '127.0.0.1', dst: '127.0.0.1', sport: 41003, dport: 82, protocol: 'tcp' });
  }, 30_000);

  it('a capture on a missing interface reports its error and the others still run', async () => {
    const c = await startCaptures([
      { netns: nftNs, iface: 'lo', label: 'lo' }, { netns: nftNs, iface: 'nope0', label: 'nope' },
    ], join(dir, 'cap2'), { protocol: 'udp', sport: 41004 });
    const [ok, bad] = await c.stop();
    expect(ok!.error).toBeUndefined();
    expect(bad!.error).toMatch(/KDP_LIVE_CAPTURE|nope0|exited/);
  }, 30_000);
});
