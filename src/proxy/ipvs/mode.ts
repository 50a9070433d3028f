// The ipvs mode's registry entry (../registry.ts): its compiler, the in-memory table of virtual
// mode (FakeIpvs, memory-table.ts), the dump checks, the tracer's filter and the diff's reader.
// No kernel commands: netns mode cannot run ipvs (kdp loads no IP_VS module), so the kernel
// appliers refuse it.

import { ipvsSections } from '../../diff/families.js';
import { ipvsFacts } from '../../diff/ipvs-facts.js';
import { reduceIpvsPair } from '../../diff/ipvs-reduce.js';
import { normaliseIpvs } from '../../diff/normalise.js';
import { checkIpvs } from '../../ruleset/check.js';
import type { IptablesTable } from '../../ruleset/iptables/model.js';
import { parse, tablesOf } from '../../ruleset/iptables/parse.js';
import { parseIpvsState } from '../../ruleset/ipvs/state-text.js';
import { buildIpvsFilter } from '../../trace/ipvs/filter.js';
import type { ProxyModeEntry } from '../registry.js';
import { buildIpvsMemoryTable } from './memory-table.js';

export const ipvsMode: ProxyModeEntry = {
  name: 'ipvs',
  loadBackend: () => import('./proxier.js'),
  configSection: 'ipvs',
  // Upstream's ipvs proxier masquerades with the iptables section's settings.
  masqueradeSection: 'iptables',
  defaultNodePortAddresses: [],
  routeLocalnet: false,
  syncFailureMetric: {
    name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
    help: 'Cumulative proxy iptables restore failures',
  },
  canonicalByDefault: true,
  memoryTable: () => buildIpvsMemoryTable(),
  check: (text) => checkIpvs(text),
  isEmpty: (text) => !/^### /m.test(text),
  traceFilter: (rules) => buildIpvsFilter(rules),
  diff: {
    claimsText: (text) => /^### ipvsadm -Sn$/m.test(text),
    parse(table, facts) {
      const state = parseIpvsState(table.text);
      const ipt: IptablesTable[] = state.iptables.trim() ? tablesOf(parse(state.iptables)) : [];
      ipvsFacts(state, ipt, facts);
      return normaliseIpvs(state, ipt);
    },
    reducePair: (a, b) => reduceIpvsPair(a, b),
    sections: (text) => ipvsSections(text),
    familyFromAddresses: true,
    reparseWhole: false,
    emptyText: '### ipvsadm -Sn\n### ipset save\n### iptables-restore\n### kube-ipvs0\n',
  },
  noKernelReason: 'kdp does not load the IP_VS kernel module',
};
