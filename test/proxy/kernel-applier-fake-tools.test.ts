// kube-proxy's kernel applier runs without root on the fake rule tools (host/fake-rule-tools.ts):
// what it applies reads back equal to what was compiled (no drift), and a sync the tool refuses
// throws the tool's own message and leaves the node's rules as they were — the behaviour the
// netns tests check against the real tools.

import { describe, expect, it } from 'vitest';
import { buildFakeRuleTools } from '../../src/host/fake-rule-tools.js';
import { compileOffline } from '../../src/proxy/compile.js';
import { buildKernelApplier } from '../../src/proxy/kernel-applier.js';
import { compileOptions, loadScenario } from '../helpers/scenarios.js';

const result = (full: boolean, kind: string, text: string) => ({ full, artifacts: [{ kind, text }], origins: new Map() });

describe('kernel applier on the fake rule tools', () => {
  it.each([['iptables', 'iptables-restore'], ['nftables', 'nft']] as const)('%s: applied, read back, refused', async (mode, kind) => {
    const tools = buildFakeRuleTools();
    const applier = buildKernelApplier(tools, 'kdp-x-n1', mode);
    const text = await compileOffline(compileOptions(loadScenario('01-clusterip'), mode, false));
    await applier.apply('IPv4', result(true, kind, text));
    const held = await applier.dump('IPv4');
    expect(held).toMatch(mode === 'iptables' ? /-A KUBE-SERVICES / : /chain services/);
    expect(await applier.drift!('IPv4')).toEqual([]);

    const refused = mode === 'iptables'
      ? '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -j KUBE-NOWHERE\nCOMMIT\n'
      : 'add rule ip kube-proxy nowhere accept\n';
    const err = await applier.apply('IPv4', result(false, kind, refused)).catch((e: Error) => e);
    expect(String(err)).toMatch(mode === 'iptables'
      ? /\[netns kdp-x-n1\] iptables-restore -w 5 --noflush --counters failed \(2\): .*Chain 'KUBE-NOWHERE' does not exist/
      : /\[netns kdp-x-n1\] nft -f - failed \(1\): \/dev\/stdin:1:.*Error: Could not process rule: No such file or directory/);
    expect(await applier.dump('IPv4')).toBe(held);
    expect(await applier.drift!('IPv4')).toEqual([]);
  });
});
