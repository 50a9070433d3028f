import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadObjectsFromText } from '../../src/api/load.js';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, ensureNetns } from '../../src/host/netns.js';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import { modelFromObjects } from '../../src/netpol/objects.js';
import { parseNetpolNft, simulateForward } from '../../src/netpol/nft-sim.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

const ROOT = join(__dirname, '../../rules/netpol');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const SCENARIOS = readdirSync(ROOT).filter((d) => /^\d\d-/.test(d)).sort();

function compileAll(dir: string): Map<string, string> {
  const file = join(ROOT, dir, 'objects.yaml');
  const objs = loadObjectsFromText(readFileSync(file, 'utf8'), file).map((o) => o.object);
  const m = modelFromObjects(objs);
  const out = new Map<string, string>();
  for (const node of [...m.nodeIPs.keys()].sort()) {
    out.set(node, compileNetpolNftables(m, { node }));
  }
  return out;
}

describe('netpol nftables goldens (rules/netpol)', () => {
  for (const dir of SCENARIOS) {
    it(`${dir}: every node's table matches its golden byte for byte`, () => {
      for (const [node, text] of compileAll(dir)) {
        const golden = join(ROOT, dir, `${node}.nft`);
        if (UPDATE || !existsSync(golden)) writeFileSync(golden, text);
        expect(text, golden).toBe(readFileSync(golden, 'utf8'));
        expect(compileAll(dir).get(node)).toBe(text);
      }
    });
  }
  it('keeps replies first, then egress before ingress, with return (not accept) for allows', () => {
    const t = compileAll(SCENARIOS[0]!).get('n1')!;
    const fwd = t.split('\n').filter((l) => l.startsWith('add rule inet kdp-netpol forward '));
    expect(fwd).toEqual([
      'add rule inet kdp-netpol forward ct state established,related accept',
      'add rule inet kdp-netpol forward ip saddr vmap @egress-pods-v4',
      'add rule inet kdp-netpol forward ip daddr vmap @ingress-pods-v4',
    ]);
    expect(t).not.toMatch(/ingress-x\/a .* accept/);
    expect(t).toContain('add element inet kdp-netpol node-ips-v4 { 172.18.0.2 }');
    // ipBlock 192.168.0.0/16 except 192.168.10.0/24, plus y/b's IP, as disjoint intervals.
    expect(t).toContain('add element inet kdp-netpol peers-x/allow-a/ingress-0-v4 { '
      + '10.244.2.14, 192.168.0.0-192.168.9.255, 192.168.11.0-192.168.255.255 }');
  });
});

describe('dual-stack tables (rules/netpol/02-dual-stack), walked by the interpreter', () => {
  const t = parseNetpolNft(compileAll('02-dual-stack').get('n1')!);
  const go = (saddr: string, daddr: string, dport: number, protocol: 'tcp' | 'udp' = 'tcp') =>
    simulateForward(t, { saddr, daddr, dport, protocol });
  it('named port and pod peer hold over IPv6 as over IPv4', () => {
    expect(go('fd00:10:244::5', 'fd00:10:244::6', 5432)).toEqual({ verdict: 'accept',
      by: 'policy accept' });
    expect(go('10.244.0.5', '10.244.0.6', 5432).verdict).toBe('accept');
    expect(go('fd00:10:244::5', 'fd00:10:244::6', 5433)).toEqual({ verdict: 'drop',
      by: 'shop/web isolated for egress by shop/web-egress' });
  });
  it('an IPv6 ipBlock except is carved out; the node\'s own IPv6 is allowed', () => {
    expect(go('2001:db8::9', 'fd00:10:244::6', 22).verdict).toBe('accept');
    expect(go('2001:db8:0:1::9', 'fd00:10:244::6', 22)).toEqual({ verdict: 'drop',
      by: 'shop/db isolated for ingress by shop/db' });
    expect(go('fc00:f853:ccd:e793::2', 'fd00:10:244::6', 22).verdict).toBe('accept');
    expect(go('fd00:10:244::5', '2001:db8::1', 53, 'udp').verdict).toBe('accept');
  });
});

const enabled = canUseNetns(['ip', 'nft']);
describe.runIf(enabled)('netpol nftables goldens load into a real kernel', () => {
  const exec = buildHostExec();
  const made: string[] = [];
  afterAll(async () => { for (const ns of made) await deleteNetns(exec, ns); });
  for (const dir of SCENARIOS) {
    it(`${dir}: \`nft -c -f\` accepts every node's table, and \`nft -f\` applies it twice`,
      async () => {
        const ns = testNetnsName();
        made.push(ns);
        await ensureNetns(exec, ns);
        for (const [, text] of compileAll(dir)) {
          await exec.run('nft', ['-c', '-f', '-'], { netns: ns, input: text });
          await exec.run('nft', ['-f', '-'], { netns: ns, input: text });
          await exec.run('nft', ['-f', '-'], { netns: ns, input: text });
          const listed = (await exec.run('nft', ['list', 'table', 'inet', 'kdp-netpol'],
            { netns: ns })).stdout;
          expect(listed).toContain('ct state established,related accept');
        }
      });
  }
});
