// The cluster's IP families and ranges, from `kdp up --ip-family / --cluster-cidr /
// --service-cidr` (kind's `ipFamily: ipv4 | ipv6 | dual`, with upstream's `--cluster-cidr` and
// `--service-cluster-ip-range` semantics): one CIDR, or a comma-separated pair of different
// families; the first is the primary family. Defaults are kind's: 10.244.0.0/16 and
// fd00:10:244::/56 (node masks /24 and /64), 10.96.0.0/12 and fd00:10:96::/112.

import { cidrList, familyBits, parseCIDR, type IPFamily } from '../api/net.js';
import { parseServiceCIDRs } from '../api/service-cidr.js';
import { parseClusterCIDRs, type NodeMaskFlags } from '../controllers/nodeipam/cluster-cidrs.js';
import { kdpError } from '../errors.js';

export type IPFamilyChoice = 'ipv4' | 'ipv6' | 'dual';

const IP_FAMILY_CHOICES: readonly IPFamilyChoice[] = ['ipv4', 'ipv6', 'dual'];

export interface NetworkFlags extends NodeMaskFlags {
  readonly ipFamily?: string;
  /** One CIDR or a comma-separated pair. */
  readonly clusterCIDR?: string;
  readonly serviceCIDR?: string;
}

/** Validated ranges; every list is in primary-first order. */
export interface ClusterNetwork {
  readonly ipFamily: IPFamilyChoice;
  /** The pod families, primary first (the order of node IPs, podCIDRs and podIPs). */
  readonly families: readonly IPFamily[];
  readonly clusterCIDRs: readonly string[];
  readonly nodeCIDRMaskSizes: readonly number[];
  readonly serviceCIDRs: readonly string[];
}

const DEFAULT_CLUSTER: Record<IPFamily, string> = {
  IPv4: '10.244.0.0/16', IPv6: 'fd00:10:244::/56',
};
const DEFAULT_SERVICE: Record<IPFamily, string> = {
  IPv4: '10.96.0.0/12', IPv6: 'fd00:10:96::/112',
};

const CHOICE_FAMILIES: Record<IPFamilyChoice, IPFamily[]> = {
  ipv4: ['IPv4'], ipv6: ['IPv6'], dual: ['IPv4', 'IPv6'],
};

const bad = (msg: string): never => {
  throw kdpError('KDP_CONFIG', msg);
};

function familiesOfList(text: string): IPFamily[] {
  return cidrList(text).map((s) => parseCIDR(s)?.family ?? 'IPv4');
}

function choiceOf(families: readonly IPFamily[]): IPFamilyChoice {
  return families.length > 1 ? 'dual' : families[0] === 'IPv6' ? 'ipv6' : 'ipv4';
}

export function resolveClusterNetwork(f: NetworkFlags = {}): ClusterNetwork {
  if (f.ipFamily !== undefined && !IP_FAMILY_CHOICES.includes(f.ipFamily as IPFamilyChoice)) {
    bad(`--ip-family: "${f.ipFamily}" is not one of ${IP_FAMILY_CHOICES.join(', ')}`);
  }
  const given = f.ipFamily as IPFamilyChoice | undefined;
  // The family order: the cluster CIDRs' when given, else --ip-family's (v4 first unless the
  // service CIDR starts with IPv6), else the service CIDRs'.
  const svcOrder = f.serviceCIDR ? familiesOfList(f.serviceCIDR) : undefined;
  const order: IPFamily[] = f.clusterCIDR ? familiesOfList(f.clusterCIDR)
    : given ? [...CHOICE_FAMILIES[given]]
      .sort((a, b) => Number(b === svcOrder?.[0]) - Number(a === svcOrder?.[0]))
      : svcOrder ? [...new Set(svcOrder)] : ['IPv4'];
  const cluster = parseClusterCIDRs(f.clusterCIDR ?? order.map((x) => DEFAULT_CLUSTER[x]), f);
  const ipFamily = choiceOf(cluster.families);
  if (given && given !== ipFamily) {
    bad(`--ip-family ${given}: --cluster-cidr ${cluster.cidrs.join(',')} is ${ipFamily}`);
  }
  const serviceCIDRs = parseServiceCIDRs(
    f.serviceCIDR ?? cluster.families.map((x) => DEFAULT_SERVICE[x]));
  for (const c of serviceCIDRs) {
    const fam = parseCIDR(c)!.family;
    if (!cluster.families.includes(fam)) {
      bad(`--service-cidr: ${c} is ${fam} but the cluster CIDR has no ${fam} range ` +
        '(pods would have no address of that family)');
    }
  }
  return {
    ipFamily, families: cluster.families, clusterCIDRs: cluster.cidrs,
    nodeCIDRMaskSizes: cluster.nodeMasks, serviceCIDRs,
  };
}
