// One CNI invocation, transport-free: environment + stdin in, stdout/stderr/exit code out. The
// executable (`kdp-cni`, main.ts) and the node agent's in-process caller both go through here,
// so they behave identically. Validation order and messages follow skel (cni.md §1.8).

import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HostExec } from '../host/exec.js';
import { cmdAdd, cmdCheck, cmdDel, cmdGc, type BridgeDeps } from './bridge.js';
import type { BridgeCache } from './bridge-state.js';
import type { IpSessionPool } from './ip-session.js';
import { parseCniArgs, parseCniEnv, type CniEnv } from './env.js';
import { buildDiskIpamStore } from './ipam/store-disk.js';
import type { IpamStore } from './ipam/store.js';
import { configVersion, decodeConfig, parseBridgeConf, requireVersionFor, type BridgeConf } from './netconf.js';
import { buildTargets, type NodeNetns } from './netns-target.js';
import { resultForVersion } from './result.js';
import { CNI_CODES, CniError, goJSON, goJSONCompact, PLUGIN_VERSION, SUPPORTED_VERSIONS } from './spec.js';

export interface CniInvocation {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: string;
}

export interface CniOutcome {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export interface PluginDeps {
  readonly exec: HostExec;
  /** The plugin's own namespace (see netns-target.ts). */
  readonly node: NodeNetns;
  /** Overrides the IPAM store (tests); default: host-local's disk store. */
  readonly ipamStore?: (conf: BridgeConf) => IpamStore;
  /** Bridge state kept across calls by a long-lived caller (see bridge-state.ts). */
  readonly bridgeCache?: BridgeCache;
  /** Running `ip -batch` processes in the node namespace (long-lived callers; ip-session.ts). */
  readonly ipSessions?: IpSessionPool;
}

const ABOUT = 'CNI kdp-cni plugin (bridge + host-local) version 1.1.0';

export async function runCniPlugin(inv: CniInvocation, deps: PluginDeps): Promise<CniOutcome> {
  if ((inv.env.CNI_COMMAND ?? '') === '') {
    return { stdout: '', stderr: `${ABOUT}\nCNI protocol versions supported: ${SUPPORTED_VERSIONS.join(', ')}\n`, exitCode: 0 };
  }
  try {
    const stdout = await dispatch(inv, deps);
    return { stdout, stderr: '', exitCode: 0 };
  } catch (e) {
    const err = e instanceof CniError ? e : new CniError(CNI_CODES.internal, (e as Error).message);
    return { stdout: goJSON(err.toJSON()), stderr: '', exitCode: 1 };
  }
}

async function dispatch(inv: CniInvocation, deps: PluginDeps): Promise<string> {
  const env = parseCniEnv(inv.env);
  if (env.command === 'VERSION') {
    return `${goJSONCompact({ cniVersion: PLUGIN_VERSION, supportedVersions: SUPPORTED_VERSIONS })}\n`;
  }
  const raw = decodeConfig(inv.stdin);
  const version = configVersion(raw);
  if (env.command === 'CHECK' || env.command === 'GC' || env.command === 'STATUS') {
    requireVersionFor(env.command, version);
  }
  const conf = parseBridgeConf(raw, version);
  if (env.command === 'STATUS') {
    ensureStoreWritable(join(conf.ipam?.dataDir ?? '/var/lib/cni/networks', conf.name));
    return '';
  }
  const store = deps.ipamStore
    ? deps.ipamStore(conf)
    : buildDiskIpamStore({ dataDir: conf.ipam?.dataDir, network: conf.name });
  const targets = buildTargets(deps.exec, deps.node, env.netns, deps.ipSessions);
  try {
    return await verb(env, conf, version, { targets, ipamStore: store, cache: deps.bridgeCache });
  } finally {
    targets.dispose();
  }
}

async function verb(env: CniEnv, conf: BridgeConf, version: string, bridgeDeps: BridgeDeps): Promise<string> {
  const att = { containerID: env.containerID, ifname: env.ifname, netns: env.netns };
  switch (env.command) {
    case 'ADD': {
      const args = parseCniArgs(env.args, ['IP', 'K8S_POD_NAMESPACE', 'K8S_POD_NAME', 'K8S_POD_INFRA_CONTAINER_ID', 'K8S_POD_UID']);
      const requested = [...(conf.args?.cni?.ips ?? []), ...(args.get('IP') ? [args.get('IP')!] : [])]
        .map((ip) => ip.split('/')[0]!);
      const result = await cmdAdd(conf, att, bridgeDeps, requested);
      return goJSON(resultForVersion(result, version));
    }
    case 'DEL':
      await cmdDel(conf, att, bridgeDeps);
      return '';
    case 'CHECK':
      await cmdCheck(conf, att, bridgeDeps);
      return '';
    case 'GC':
      await cmdGc(conf, bridgeDeps);
      return '';
    default:
      return '';
  }
}

/** STATUS: the plugin can serve ADDs when its IPAM store is writable (else code 50). */
function ensureStoreWritable(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new CniError(CNI_CODES.pluginNotAvailable, `IPAM store ${dir} is not writable: ${(e as Error).message}`);
  }
}
