// The ipvs mode's in-memory table (virtual mode). The IPVS part is held in FakeIpvs
// (host/fake-ipvsadm.ts), fed the ipvs artifact as `ipvsadm -R` input and dumped by its
// `ipvsadm -Sn`: the same model the fake rule tools answer `ipvsadm` with, so the memory path
// and the kernel path hold the same table and refuse the same lines with ipvsadm's messages
// (exit 255 "Service already exists", exit 2 "illegal virtual server address[:port]
// specified", ...). The iptables input goes through FakeIptables as `iptables-restore --noflush`
// (its refusals, exit 1/2/4, fail the apply too) and is dumped as the input it was, the form the
// tracer and the diff read; ipset and kube-ipvs0 have no fake and are held as text.

import { SECTION_HEADERS } from '../../ruleset/ipvs/state-text.js';
import { FakeIpvs } from '../../host/fake-ipvsadm.js';
import { FakeIptables, toolRefusal } from '../../host/fake-iptables.js';
import type { MemoryTable } from '../registry.js';
import { canonicalize } from './proxier.js';

export function buildIpvsMemoryTable(): MemoryTable {
  let ipvs: FakeIpvs | undefined;
  let iptables: FakeIptables | undefined;
  let others = '';
  return {
    apply(result) {
      // Staged on a fresh table: the artifact is the whole IPVS state (ipvsadm -Sn text, which
      // ipvsadm -R reads back); a refused line leaves the held table as it was, as the
      // applier's contract asks (ipvsadm itself is not atomic).
      const staged = new FakeIpvs();
      let stagedIptables: FakeIptables | undefined;
      let rest = '';
      for (const a of result.artifacts) {
        if (a.kind === 'ipvs') {
          const r = staged.restore(a.text);
          if (r.exitCode !== 0) throw toolRefusal('ipvsadm -R', r.exitCode, r.stderr);
          continue;
        }
        if (a.kind === 'iptables-restore' || a.kind === 'ip6tables-restore') {
          // Staged on a copy of the held tables, as the iptables mode's table is.
          stagedIptables = new FakeIptables(a.kind);
          if (iptables) stagedIptables.restore(iptables.save());
          stagedIptables.restore(a.text);
        }
        rest += canonicalize(a);
      }
      ipvs = staged;
      iptables = stagedIptables ?? iptables;
      others = rest;
    },
    dump: () => (ipvs ? `${SECTION_HEADERS[0]}\n${ipvs.save()}${others}` : ''),
  };
}
