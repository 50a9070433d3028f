// The sysctls kube-proxy sets at start, as upstream (cmd/kube-proxy/app/server_linux.go and
// conntrack.go, pkg/proxy/iptables/proxier.go), restricted to the per-network-namespace ones: a
// kernel applier writes them inside the node's namespace, never on the host.
//
// - iptables mode, IPv4 with localhost NodePorts (nodePortAddresses unset or holding
//   127.0.0.0/8): net.ipv4.conf.all.route_localnet=1, so a packet from 127.0.0.1 that the
//   NodePort rules DNAT to a pod may leave the loopback (else the kernel drops it as a martian).
//   nftables mode does not serve localhost NodePorts and leaves it alone.
// - net.bridge.bridge-nf-call-iptables / -ip6tables = 1 (br_netfilter: bridged pod-to-pod
//   traffic through the rules; upstream only warns when it is off). Written only where the
//   namespace has the key (br_netfilter loaded); kdp never loads a module.
// - conntrack (conntrack.go's setIntSysCtl: only ever raised, never lowered):
//   nf_conntrack_max = max(maxPerCore × cores, min) (0 maxPerCore: left alone);
//   nf_conntrack_tcp_timeout_established, nf_conntrack_tcp_timeout_close_wait. The hash size
//   (a module parameter of the whole host) is never touched. A kernel that keeps
//   nf_conntrack_max read-only outside the host's namespace refuses it: reported, not fatal
//   (upstream fails; kind sets maxPerCore 0 for the same reason).

import type { ConntrackSettings } from './config.js';
import type { ProxyMode } from './backend.js';
import { proxyMode } from './registry.js';
import type { SysctlWrite } from '../host/sysctls.js';

export type { SysctlWrite };

export interface SysctlPlanInput {
  readonly mode: ProxyMode;
  /** Any IPv4 family config of this kube-proxy serves localhost NodePorts. */
  readonly localhostNodePorts: boolean;
  readonly conntrack: ConntrackSettings;
  /** CPUs of the machine (upstream: runtime.NumCPU()). */
  readonly cores: number;
}

export const ROUTE_LOCALNET = 'net.ipv4.conf.all.route_localnet';

export function kubeProxySysctls(p: SysctlPlanInput): SysctlWrite[] {
  const out: SysctlWrite[] = [];
  if (proxyMode(p.mode).routeLocalnet && p.localhostNodePorts) {
    out.push({ key: ROUTE_LOCALNET, value: 1, raiseOnly: false, ifPresent: false });
  }
  for (const key of ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables']) {
    out.push({ key, value: 1, raiseOnly: false, ifPresent: true });
  }
  const ct = p.conntrack;
  if (ct.maxPerCore > 0) {
    const max = Math.max(ct.maxPerCore * p.cores, ct.min);
    out.push({ key: 'net.netfilter.nf_conntrack_max', value: max, raiseOnly: true, ifPresent: false });
  }
  if (ct.tcpEstablishedTimeoutS > 0) {
    out.push({ key: 'net.netfilter.nf_conntrack_tcp_timeout_established', value: ct.tcpEstablishedTimeoutS,
      raiseOnly: true, ifPresent: false });
  }
  if (ct.tcpCloseWaitTimeoutS > 0) {
    out.push({ key: 'net.netfilter.nf_conntrack_tcp_timeout_close_wait', value: ct.tcpCloseWaitTimeoutS,
      raiseOnly: true, ifPresent: false });
  }
  return out;
}
