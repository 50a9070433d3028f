import { describe, expect, it } from 'vitest';
import { planCleanup } from '../../src/proxy/iptables/cleanup.js';

describe('iptables cleanup', () => {
  it('flushes and deletes only kube-proxy chains and unlinks its jumps', () => {
    const nat = '*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n' +
      ':KUBE-MARK-MASQ - [0:0]\n' +
      ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]\n:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]\n' +
      ':DOCKER - [0:0]\nCOMMIT\n';
    const filter = '*filter\n:INPUT ACCEPT [0:0]\n:KUBE-FORWARD - [0:0]\n' +
      ':KUBE-FIREWALL - [0:0]\nCOMMIT\n';
    const plan = planCleanup(nat, filter);
    expect(plan.restores).toEqual([
      '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n' +
      ':KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]\n' +
      ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]\n-X KUBE-SERVICES\n-X KUBE-MARK-MASQ\n' +
      '-X KUBE-SEP-BBBBBBBBBBBBBBBB\n' +
      '-X KUBE-SVC-AAAAAAAAAAAAAAAA\nCOMMIT\n',
      '*filter\n:KUBE-FORWARD - [0:0]\n-X KUBE-FORWARD\nCOMMIT\n',
    ]);
    expect(plan.deleteJumps).toHaveLength(12);
    expect(plan.deleteJumps.some((j) => j.args.includes('KUBE-FIREWALL'))).toBe(false);
  });
});
