import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffNetpolTables } from '../../src/diff/netpol.js';
import { buildModel } from '../../src/netpol/model.js';
import { compileNetpolNftables } from '../../src/netpol/nftables.js';
import type { NetworkPolicy } from '../../src/netpol/types.js';
import {
  NETPOL_HISTORY, readNetpolSnapshot, readNetpolTable, writeNetpolTable,
} from '../../src/netpol/table-file.js';
import { kdp } from '../helpers/cli.js';
import { ALL_PODS, NODE_IPS, ipOf, namespace, pod } from '../netpol/scenarios/cluster.js';
import { egress, ingress, nsSel, policy, policyML } from '../netpol/scenarios/builders.js';

const table = (node: string, ...policies: NetworkPolicy[]) => compileNetpolNftables(buildModel({
  pods: ALL_PODS.map((k) => pod(k)), namespaces: ['x', 'y', 'z'].map((n) => namespace(n)), policies,
  nodeIPs: NODE_IPS,
}), { node });
const PODS = new Map(ALL_PODS.map((k) => [ipOf(k), k]));
const DENY = policy('x', 'deny', {}, ingress());
const ALLOW_Y = policyML('x', 'allow-y', { pod: 'a' }, ingress({ from: [{ namespaceSelector: nsSel('y') }],
  ports: [{ port: 80 }, { port: 8080, endPort: 8090, protocol: 'UDP' }] }));

describe('kdp diff of NetworkPolicy tables', () => {
  it('an added allow policy opened exactly its pod pairs and ports, said per policy with the rules before and after', () => {
    const d = diffNetpolTables({ label: 'A', text: table('n1', DENY) }, { label: 'B', text: table('n1', DENY, ALLOW_Y) }, PODS);
    expect(d.policiesAdded).toEqual(['x/allow-y']);
    expect(d.policiesRemoved).toEqual([]);
    expect(d.changes.map((c) => `${c.kind} ${c.from} → ${c.to} ${c.ports} [${c.policies.join(',')}]`)).toEqual([
      'opened y/a → x/a TCP/80 [x/allow-y]', 'opened y/a → x/a UDP/8080-8090 [x/allow-y]',
      'opened y/b → x/a TCP/80 [x/allow-y]', 'opened y/b → x/a UDP/8080-8090 [x/allow-y]',
      'opened y/c → x/a TCP/80 [x/allow-y]', 'opened y/c → x/a UDP/8080-8090 [x/allow-y]',
    ]);
    expect(d.changes[0]).toMatchObject({ before: 'denied: x/a isolated for ingress by x/deny',
      after: 'allowed by x/allow-y ingress rule 0' });
  });

  it('a new default-deny closes every source to the isolated pods, on all ports and protocols, and names it', () => {
    const d = diffNetpolTables({ label: 'A', text: table('n1') }, { label: 'B', text: table('n1', DENY) }, PODS);
    const closed = d.changes.filter((c) => c.kind === 'closed');
    expect(closed.length).toBe(d.changes.length);
    expect(new Set(closed.map((c) => c.policies.join(',')))).toEqual(new Set(['x/deny']));
    // From y/b to x/a: every port of every protocol, as whole ranges.
    expect(closed.filter((c) => c.from === 'y/b' && c.to === 'x/a').map((c) => c.ports))
      .toEqual(['TCP/1-65535', 'UDP/1-65535', 'SCTP/1-65535']);
    // Outside addresses are closed too (named as ranges); the node's own address stays open.
    expect(closed.some((c) => c.from.includes('-') && c.to === 'x/a')).toBe(true);
    expect(closed.some((c) => c.from.startsWith('the node'))).toBe(false);
  });

  it('deleting a policy that isolated a pod for egress reopens its pairs, attributed to that policy', () => {
    const noOut = policyML('x', 'a-no-egress', { pod: 'a' }, egress());
    const d = diffNetpolTables({ label: 'A', text: table('n1', noOut) }, { label: 'B', text: table('n1') }, PODS);
    expect(d.policiesRemoved).toEqual(['x/a-no-egress']);
    expect(d.changes.every((c) => c.kind === 'opened' && c.from === 'x/a' && c.policies.join() === 'x/a-no-egress'))
      .toBe(true);
    expect(d.changes.some((c) => c.to === 'z/c')).toBe(true);
  });

  it('the same policies recompiled give no change', () => {
    const d = diffNetpolTables({ label: 'A', text: table('n2', DENY, ALLOW_Y) }, { label: 'B', text: table('n2', DENY, ALLOW_Y) });
    expect(d.changes).toEqual([]);
  });

  it('kdp diff detects kdp-netpol files, exits 1 on a change and 0 on none; JSON; refuses other text with --netpol', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-npd-'));
    const [a, b] = [join(dir, 'a.nft'), join(dir, 'b.nft')];
    writeFileSync(a, table('n1', DENY));
    writeFileSync(b, table('n1', DENY, ALLOW_Y));
    const r = await kdp('diff', '--data-dir', join(dir, 'none'), a, b);
    expect(r.code).toBe(1);
    expect(r.out).toContain('policies added: x/allow-y');
    expect(r.out).toContain('x/allow-y: opened 2, closed 0');
    // Without a cluster, pods are named from the table's own maps (x/a is isolated here); the
    // peers, y's three pods, are one run of addresses.
    expect(r.out).toContain('+ opened 10.244.2.10-10.244.2.12 → x/a TCP/80');
    expect((await kdp('diff', '--data-dir', join(dir, 'none'), a, a)).code).toBe(0);
    const j = JSON.parse((await kdp('diff', '--data-dir', join(dir, 'none'), '-o', 'json', a, b)).out);
    expect(j).toMatchObject({ view: 'netpol', policiesAdded: ['x/allow-y'] });
    writeFileSync(join(dir, 'c.txt'), '*filter\nCOMMIT\n');
    const bad = await kdp('diff', '--netpol', '--data-dir', join(dir, 'none'), a, join(dir, 'c.txt'));
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('not a kdp-netpol table');
  });

  it("a node's applied tables are kept (bounded) and read back by @N / @latest~K", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdp-nph-'));
    for (let i = 1; i <= NETPOL_HISTORY + 3; i++) writeNetpolTable(dir, `t${i}\n`);
    expect(readNetpolTable(dir)).toBe(`t${NETPOL_HISTORY + 3}\n`);
    expect(readNetpolSnapshot(dir, '@latest')).toEqual({ seq: NETPOL_HISTORY + 3, text: `t${NETPOL_HISTORY + 3}\n` });
    expect(readNetpolSnapshot(dir, '@latest~1').text).toBe(`t${NETPOL_HISTORY + 2}\n`);
    expect(readNetpolSnapshot(dir, '@5').text).toBe('t5\n');
    expect(() => readNetpolSnapshot(dir, '@3')).toThrow(/not kept \(have @4\.\.@23\)/);
  });
});
