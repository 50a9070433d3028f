// What upstream's kube-proxy does at start in a node's namespace before its first sync: the
// rules of the modes it is NOT running are removed (iptables mode cleans nftables' table,
// nftables mode cleans iptables' chains and jumps), so switching a node's mode (kubeadm:
// edit the kube-proxy ConfigMap, restart the DaemonSet) leaves one mode's rules. Each mode's
// registry entry brings its cleanup (`kernel.cleanupLeftovers`); "already gone" is not an error.
// kdp's own tables (KDP-MASQ, kdp-netpol) are not kube-proxy's and stay.

import type { ProxyMode } from './backend.js';
import { proxyMode, proxyModeNames } from './registry.js';
import type { HostExec } from '../host/exec.js';

/** Removes the other modes' kube-proxy rules in `netns`; returns what failed (logged, not fatal). */
export async function cleanupOtherModes(exec: HostExec, netns: string, mode: ProxyMode): Promise<string[]> {
  const problems: string[] = [];
  for (const other of proxyModeNames()) {
    if (other === mode) continue;
    problems.push(...await proxyMode(other).kernel?.cleanupLeftovers(exec, netns) ?? []);
  }
  return problems;
}
