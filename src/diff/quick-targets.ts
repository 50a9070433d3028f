// Probe targets read straight from the text for the common forms (iptables save/restore,
// the nft transaction kube-proxy writes), so `--behaviour` does not parse each table twice
// (the tracer parses it too). Other forms return undefined: use the facts' targets instead.

import { proxyMode } from '../proxy/registry.js';
import { lowerProto } from './facts-util.js';
import type { DiffFormat, ProbeTarget } from './types.js';

const IPT_CHAIN = /^(?:\[\d+:\d+\] )?-A KUBE-(SERVICES|NODEPORTS|EXTERNAL-SERVICES) /;
const NFT_SETS = 'service-ips|service-nodeports|no-endpoint-services|no-endpoint-nodeports|' +
  'firewall-ips';
const NFT_ELEMENT = new RegExp(
  `^add element (?:ip|ip6|inet) \\S+ (${NFT_SETS}) \\{ (.*?)(?: comment "[^"]*")? : `);

export function quickTargets(format: DiffFormat, text: string): ProbeTarget[] | undefined {
  return proxyMode(format).diff.quickTargets?.(text);
}

/** iptables save/restore text: the KUBE-SERVICES, -NODEPORTS, -EXTERNAL-SERVICES jumps. */
export function iptablesTargets(text: string): ProbeTarget[] {
  const out: ProbeTarget[] = [];
  for (const line of text.split('\n')) {
    const m = IPT_CHAIN.exec(line);
    if (!m) continue;
    const proto = lowerProto(/ -p (\S+)/.exec(line)?.[1]);
    const port = Number(/ --dport (\d+)/.exec(line)?.[1]);
    if (!proto || !port || line.includes(' ! -d ')) continue;
    const ip = / -d (\S+)/.exec(line)?.[1]?.replace(/\/(32|128)$/, '');
    if (ip) out.push({ kind: m[1] === 'SERVICES' ? 'cluster' : 'external', ip, port, proto });
    else if (m[1] === 'NODEPORTS') out.push({ kind: 'nodeport', ip: '', port, proto });
  }
  return out;
}

/** kube-proxy's nft transaction: the elements of its service maps. */
export function nftTargets(text: string): ProbeTarget[] {
  const out: ProbeTarget[] = [];
  for (const line of text.split('\n')) {
    const m = NFT_ELEMENT.exec(line);
    if (!m) continue;
    const key = m[2]!.split(' . ');
    if (key.length === 3) {
      const proto = lowerProto(key[1]);
      if (proto) out.push({ kind: 'cluster', ip: key[0]!, port: Number(key[2]), proto });
    } else if (key.length === 2) {
      const proto = lowerProto(key[0]);
      if (proto) out.push({ kind: 'nodeport', ip: '', port: Number(key[1]), proto });
    }
  }
  return out;
}
