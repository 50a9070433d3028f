// The bridge plugin's verbs (cni.md §2) with kdp's stricter guarantees (§5): ADD is atomic — on
// any failure everything this call made is undone in reverse order; DEL is complete whatever
// state the pod namespace is in; the plugin's own namespace is refused before any side effect.

import { createHash } from 'node:crypto';
import { formatCIDR, parseCIDR } from '../api/net.js';
import {
  coversGateways, planBridge, podBatchText, podSysctls, randomMac, type GwIP,
} from './bridge-plan.js';
import { bridgeCacheKey, queryBridge, type BridgeCache } from './bridge-state.js';
import { buildHostLocalIpam, type HostLocalIpam } from './ipam/host-local.js';
import type { IpamStore } from './ipam/store.js';
import {
  addMasq, byFamily, masqAddText, masqRemoveText, removeMasq, restoreCommand, type MasqIP,
} from './masq.js';
import type { BridgeConf } from './netconf.js';
import { writeSysctlsHere } from '../host/sysctls.js';
import {
  batchError, isSameNetns, netnsExists, type BatchOutcome, type Targets,
} from './netns-target.js';
import { parsePrevResult, type CniResult, type CniRoute } from './result.js';
import { CNI_CODES, CniError } from './spec.js';

export interface AttachmentRef {
  readonly containerID: string;
  readonly ifname: string;
  /** CNI_NETNS path ('' allowed for DEL). */
  readonly netns: string;
}

export interface BridgeDeps {
  readonly targets: Targets;
  readonly ipamStore: IpamStore;
  /** Known bridge state across calls (long-lived callers); absent = ask the kernel each ADD. */
  readonly cache?: BridgeCache;
}

/** Host end of the veth: derived from the attachment, so DEL can find it without the pod. */
export function hostVethName(containerID: string, ifname: string): string {
  return `kdpv${createHash('sha256').update(`${containerID}/${ifname}`).digest('hex').slice(0, 8)}`;
}

export function refuseOwnNetns(t: Targets, podNetns: string): void {
  if (podNetns && isSameNetns(podNetns, t.nodeNetnsPath)) {
    throw new CniError(CNI_CODES.invalidNetns, "plugin's netns and netns from CNI_NETNS should not be the same");
  }
}

function ipamFor(conf: BridgeConf, store: IpamStore): HostLocalIpam | undefined {
  if (!conf.ipam) return undefined;
  if (conf.ipam.type !== 'host-local') {
    throw new CniError(CNI_CODES.unsupportedField, `unsupported field: ipam.type "${conf.ipam.type}" (kdp-cni implements host-local)`);
  }
  try {
    return buildHostLocalIpam(conf.ipam.ranges, store);
  } catch (e) {
    throw new CniError(CNI_CODES.invalidNetworkConfig, (e as Error).message);
  }
}

export async function cmdAdd(conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps, requestedIPs: string[]): Promise<CniResult> {
  const t = deps.targets;
  refuseOwnNetns(t, att.netns);
  if (!netnsExists(att.netns)) {
    throw new CniError(CNI_CODES.internal,
      `failed to open netns "${att.netns}": failed to Statfs "${att.netns}": no such file or directory`);
  }
  const ipam = ipamFor(conf, deps.ipamStore);
  const undo: Array<() => Promise<unknown>> = [];
  try {
    const ips = ipam ? allocate(ipam, att, requestedIPs) : [];
    if (ipam) undo.push(async () => ipam.release(att.containerID, att.ifname));
    const withGw = ips.map((ip) => ({ ...ip, gateway: ip.gateway || (conf.isGateway ? firstHost(ip.address) : '') }));
    const routes = resultRoutes(conf, withGw);
    const wired = await wire(conf, att, deps, withGw, routes, undo);
    return {
      interfaces: [
        { name: conf.bridge, mac: wired.bridgeMac },
        { name: wired.hostVeth, mac: wired.hostMac },
        { name: att.ifname, mac: wired.podMac, sandbox: att.netns },
      ],
      ips: withGw.map((ip) => ({ interface: 2, address: ip.address, ...(ip.gateway ? { gateway: ip.gateway } : {}) })),
      routes,
      dns: (conf.raw.dns as Record<string, unknown> | undefined) ?? {},
    };
  } catch (e) {
    for (const u of undo.reverse()) await u().catch(() => undefined);
    throw e;
  }
}

interface Wired { hostVeth: string; hostMac: string; podMac: string; bridgeMac: string }

/**
 * The kernel side of ADD in one node batch when the pod namespace has a name (and the node too):
 * bridge (if not known), veth with its peer created straight in the pod, port settings, then the
 * pod's sysctls and addresses through `netns exec`, the node's sysctls and the masquerade rules.
 * Without names the same steps run as separate processes. Registers its own undo steps.
 */
async function wire(
  conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps, ips: readonly GwIP[], routes: readonly CniRoute[],
  undo: Array<() => Promise<unknown>>, retries = 3,
): Promise<Wired> {
  const t = deps.targets;
  const key = bridgeCacheKey(t, conf.bridge);
  let known = deps.cache?.get(key);
  if (known && !coversGateways(conf, known, ips)) known = undefined;
  known ??= await queryBridge(t, conf.bridge);
  const plan = planBridge(conf, known, ips);
  const veth = { host: hostVethName(att.containerID, att.ifname), hostMac: randomMac(), podMac: randomMac() };
  const mtu = conf.mtu ? ` mtu ${conf.mtu}` : '';
  // Each batch line with what it does, for the error message of the line ip reports as failed.
  const lines: Array<[string, Step]> = plan.lines.map((l) => [l, 'bridge']);
  const add = (step: Step, ...ls: string[]) => ls.forEach((l) => lines.push([l, step]));
  if (t.nodeName && plan.sysctls.length) {
    add('bridge', `netns exec ${t.nodeName} sysctl -q -e -w ${plan.sysctls.join(' ')}`);
  }
  if (t.podName) {
    add('veth', `link add ${veth.host} address ${veth.hostMac}${mtu} type veth ` +
      `peer name ${att.ifname} address ${veth.podMac}${mtu} netns ${t.podName}`);
  } else {
    await createVethFromPod(t, att, veth, mtu);
  }
  undo.push(() => t.ipNode(['link', 'del', veth.host]));
  add('port', `link set dev ${veth.host} master ${conf.bridge} up`);
  if (conf.hairpinMode) add('port', `link set dev ${veth.host} type bridge_slave hairpin on`);
  const podText = podBatchText(att.ifname, ips, routes);
  if (t.podName) {
    add('pod', `netns exec ${t.podName} sysctl -q -e -w ${podSysctls(att.ifname).join(' ')}`,
      `netns exec ${t.podName} ip -batch ${t.tempFile(podText)}`);
  }
  const masqIPs: MasqIP[] = conf.ipMasq ? ips.map((ip) => ({
    address: ip.address.split('/')[0]!, subnet: subnetOf(ip.address), v6: ip.address.includes(':'),
  })) : [];
  if (masqIPs.length) undo.push(() => removeMasq(t, conf.name, att.containerID));
  for (const fam of t.nodeName ? byFamily(masqIPs) : []) {
    const file = t.tempFile(masqAddText(conf.name, att.containerID, fam));
    add('masq', `netns exec ${t.nodeName} ${restoreCommand(fam[0]!.v6)} -w 5 --noflush ${file}`);
  }
  const out = await t.nodeBatch(lines.map(([l]) => l));
  if (!out.ok) {
    deps.cache?.delete(key);
    const step = lines[(out.failedLines[0] ?? 0) - 1]?.[1];
    // A concurrent ADD created the bridge or its address first: nothing of ours ran; go again.
    if (step === 'bridge' && retries > 0 && /File exists/.test(out.stderr)) {
      return wire(conf, att, deps, ips, routes, undo, retries - 1);
    }
    throw await batchFailed(t, att, out, step);
  }
  if (!t.nodeName) writeSysctlsHere(plan.sysctls);
  if (!t.podName) {
    await t.pod('sysctl', ['-q', '-e', '-w', ...podSysctls(att.ifname)]);
    await t.ipPod(['-batch', '-'], podText);
  }
  if (!t.nodeName) await addMasq(t, conf.name, att.containerID, masqIPs);
  deps.cache?.set(key, plan.state);
  return { hostVeth: veth.host, hostMac: veth.hostMac, podMac: veth.podMac, bridgeMac: plan.state.mac };
}

type Step = 'bridge' | 'veth' | 'port' | 'pod' | 'masq';

const STEP_ERRORS: Record<Step, string> = {
  bridge: 'failed to set up the bridge',
  veth: 'failed to create veth',
  port: 'failed to attach the veth to the bridge',
  pod: 'failed to configure the container interface',
  masq: 'failed to set up IP masquerading',
};

/** Without a pod namespace name: the veth is made from inside the pod (nsenter). */
async function createVethFromPod(
  t: Targets, att: AttachmentRef, v: { host: string; hostMac: string; podMac: string }, mtu: string,
): Promise<void> {
  const mtuArgs = mtu.trim().split(' ').filter(Boolean);
  try {
    await t.ipPod(['link', 'add', att.ifname, 'address', v.podMac, ...mtuArgs, 'type', 'veth',
      'peer', 'name', v.host, 'address', v.hostMac, ...mtuArgs, 'netns', t.nodeNetnsArg]);
  } catch (e) {
    if (/File exists/.test((e as Error).message) && await podHasLink(t, att.ifname)) throw vethExists(att.ifname);
    throw new CniError(CNI_CODES.internal, `${STEP_ERRORS.veth}: ${(e as Error).message}`);
  }
}

const vethExists = (ifname: string) =>
  new CniError(CNI_CODES.internal, `container veth name provided (${ifname}) already exists`);

async function podHasLink(t: Targets, ifname: string): Promise<boolean> {
  return t.ipPod(['link', 'show', 'dev', ifname]).then(() => true, () => false);
}

async function batchFailed(t: Targets, att: AttachmentRef, out: BatchOutcome, step: Step | undefined) {
  if (step === 'veth' && /File exists/.test(out.stderr) && await podHasLink(t, att.ifname)) {
    return vethExists(att.ifname);
  }
  return new CniError(CNI_CODES.internal, `${STEP_ERRORS[step ?? 'bridge']}: ${batchError(out)}`);
}

function allocate(ipam: HostLocalIpam, att: AttachmentRef, requested: string[]) {
  try {
    return ipam.allocate(att.containerID, att.ifname, requested);
  } catch (e) {
    throw new CniError(CNI_CODES.internal, (e as Error).message);
  }
}

function firstHost(cidr: string): string {
  const c = parseCIDR(subnetOf(cidr))!;
  return formatCIDR({ family: c.family, base: c.base + 1n, prefix: c.prefix }).split('/')[0]!;
}

function subnetOf(address: string): string {
  const [ip, len] = address.split('/');
  const c = parseCIDR(`${ip}/${len}`);
  if (!c) throw new CniError(CNI_CODES.internal, `invalid CIDR address: ${address}`);
  const bits = c.family === 'IPv4' ? 32 : 128;
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - c.prefix)) - 1n);
  return formatCIDR({ family: c.family, base: c.base & mask, prefix: c.prefix });
}

function resultRoutes(conf: BridgeConf, ips: readonly { address: string; gateway: string }[]): CniRoute[] {
  const routes: CniRoute[] = [...(conf.ipam?.routes ?? [])];
  if (conf.isDefaultGateway) {
    for (const ip of ips) {
      const dst = ip.address.includes(':') ? '::/0' : '0.0.0.0/0';
      if (!routes.some((r) => r.dst === dst)) routes.push({ dst, gw: ip.gateway });
    }
  }
  return routes;
}

/**
 * Best effort and idempotent: succeeds when things are already gone (spec DEL). One node batch
 * in the common case: deleting the host veth takes its pod peer with it, and the masquerade
 * rules go by their exact inverse; either falls back to the slow path when it finds nothing.
 */
export async function cmdDel(conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps): Promise<void> {
  const t = deps.targets;
  refuseOwnNetns(t, att.netns);
  const ipam = ipamFor(conf, deps.ipamStore);
  const held = ipam?.get(att.containerID, att.ifname) ?? [];
  const prevIPs = conf.prevResult ? parsePrevResult(conf.prevResult).ips.map((i) => i.address.split('/')[0]!) : [];
  const masqIPs = !conf.ipMasq ? []
    : (held.length ? held : prevIPs).map((a) => ({ address: a, v6: a.includes(':') }));
  const lines = [`link del ${hostVethName(att.containerID, att.ifname)}`];
  const fams = t.nodeName ? byFamily(masqIPs) : [];
  for (const fam of fams) {
    lines.push(`netns exec ${t.nodeName} ${restoreCommand(fam[0]!.v6)} -w 5 --noflush ` +
      t.tempFile(masqRemoveText(conf.name, att.containerID, fam)));
  }
  const out = await t.nodeBatch(lines, { force: true });
  if (out.failedLines.includes(1) && att.netns && netnsExists(att.netns)) await delPodVeth(t, att.ifname);
  const masqDone = fams.length > 0 && out.failedLines.every((l) => l === 1);
  if (conf.ipMasq && !masqDone) await removeMasq(t, conf.name, att.containerID);
  ipam?.release(att.containerID, att.ifname);
}

/**
 * The pod end when the host end is gone. Only a veth goes: an interface of that name that
 * kdp-cni cannot have made (ADD refused it as already existing) survives the runtime's DEL.
 */
async function delPodVeth(t: Targets, ifname: string): Promise<void> {
  const { stdout } = await t.ipPod(['-j', '-d', 'link', 'show', 'dev', ifname]).catch(() => ({ stdout: '' }));
  const link = (JSON.parse(stdout || '[]') as Array<Record<string, any>>)[0];
  if (link?.linkinfo?.info_kind === 'veth') await t.ipPod(['link', 'del', ifname]).catch(() => undefined);
}

export async function cmdCheck(conf: BridgeConf, att: AttachmentRef, deps: BridgeDeps): Promise<void> {
  const t = deps.targets;
  refuseOwnNetns(t, att.netns);
  const ipam = ipamFor(conf, deps.ipamStore);
  if (ipam && ipam.get(att.containerID, att.ifname).length === 0) {
    throw new CniError(CNI_CODES.internal, `host-local: Failed to find address added by container ${att.containerID}`);
  }
  if (!conf.prevResult) throw new CniError(CNI_CODES.internal, 'Required prevResult missing');
  const prev = parsePrevResult(conf.prevResult);
  const ctr = prev.interfaces.find((i) => i.sandbox !== undefined && i.sandbox !== '');
  if (!ctr || ctr.sandbox !== att.netns) {
    throw new CniError(CNI_CODES.internal, `Sandbox in prevResult does not match CNI_NETNS ${att.netns}`);
  }
  // One process for both questions: ip -j -batch prints one JSON array per line.
  const query = `addr show dev ${att.ifname}\nroute show table all\n`;
  const { stdout } = await t.ipPod(['-j', '-batch', '-'], query).catch(() => ({ stdout: '' }));
  const [links, routes] = stdout.split('\n').filter(Boolean)
    .map((l) => JSON.parse(l) as Array<Record<string, any>>);
  const link = links?.[0];
  if (!link) throw new CniError(CNI_CODES.internal, `Failed to find container interface ${att.ifname}`);
  if (ctr.mac && link.address !== ctr.mac) {
    throw new CniError(CNI_CODES.internal, `Interface ${att.ifname} Mac ${ctr.mac} doesn't match container Mac: ${link.address}`);
  }
  const addrs = (link.addr_info ?? []).map((a: any) => `${a.local}/${a.prefixlen}`);
  for (const ip of prev.ips) {
    if (!addrs.includes(ip.address)) throw new CniError(CNI_CODES.internal, `Failed to match addr ${ip.address} on interface ${att.ifname}`);
  }
  const have = (routes ?? []) as Array<{ dst: string }>;
  for (const r of prev.routes) {
    const dst = r.dst === '0.0.0.0/0' || r.dst === '::/0' ? 'default' : r.dst;
    if (!have.some((h) => h.dst === dst)) {
      throw new CniError(CNI_CODES.internal, `Expected Route {Dst:${r.dst}} not found in routing table`);
    }
  }
}

/** Releases reservations and rules of attachments not in the valid list; continues past errors. */
export async function cmdGc(conf: BridgeConf, deps: BridgeDeps): Promise<void> {
  const valid = new Set((conf.validAttachments ?? []).map((a) => `${a.containerID}\0${a.ifname}`));
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const r of deps.ipamStore.list()) {
    const key = `${r.id}\0${r.ifname}`;
    if (valid.has(key) || seen.has(key)) continue;
    seen.add(key);
    try {
      await cmdDel(conf, { containerID: r.id, ifname: r.ifname, netns: '' }, deps);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  if (errors.length) throw new CniError(CNI_CODES.internal, `GC: ${errors.join('; ')}`);
}
