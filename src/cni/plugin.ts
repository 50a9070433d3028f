// One CNI invocation, transport-free: environment + stdin in, stdout/stderr/exit code out. The
// executable (`kdp-cni`, main.ts) and the node agent's in-process caller both go through here,
// so they behave identically. Validation order and messages follow skel (cni.md §1.8).

import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { HostExec } from '../host/exec.js';
import { cmdAdd, cmdCheck, cmdDel, cmdGc, type BridgeDeps } from './bridge.js';
import type { BridgeCache } from './bridge-state.js';
import type { IpSessionPool } from '../host/ip-session.js';
import { parseCniArgs, parseCniEnv, type CniCommand, type CniEnv } from './env.js';
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
  /** Running `ip -batch` processes in the node namespace (long-lived callers; host/ip-session.ts). */
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

/** What a verb's handler gets: the parsed environment and config, and the plugin's deps. */
export interface VerbContext {
  readonly env: CniEnv;
  readonly conf: BridgeConf;
  readonly version: string;
  readonly deps: PluginDeps;
}

/** One verb of the plugin, as skel.PluginMain takes its CNIFuncs (VERSION is skel's own). */
export interface VerbHandler {
  /** CHECK, GC and STATUS exist only from a config version on (requireVersionFor). */
  readonly since?: 'CHECK' | 'GC' | 'STATUS';
  run(c: VerbContext): Promise<string>;
}

/** Runs `fn` against the node's namespaces and the network's IPAM store, then lets them go. */
async function withBridge(c: VerbContext, fn: (b: BridgeDeps) => Promise<string>): Promise<string> {
  const store = c.deps.ipamStore
    ? c.deps.ipamStore(c.conf)
    : buildDiskIpamStore({ dataDir: c.conf.ipam?.dataDir, network: c.conf.name });
  const targets = buildTargets(c.deps.exec, c.deps.node, c.env.netns, c.deps.ipSessions);
  try {
    return await fn({ targets, ipamStore: store, cache: c.deps.bridgeCache });
  } finally {
    targets.dispose();
  }
}

const attachment = (env: CniEnv) => ({ containerID: env.containerID, ifname: env.ifname, netns: env.netns });

/** The dispatch table: adding a verb is one entry here (and its REQUIRED env in env.ts). */
export const CNI_VERBS: Readonly<Record<Exclude<CniCommand, 'VERSION'>, VerbHandler>> = {
  ADD: {
    run: (c) => withBridge(c, async (b) => {
      const args = parseCniArgs(c.env.args, ['IP', 'K8S_POD_NAMESPACE', 'K8S_POD_NAME', 'K8S_POD_INFRA_CONTAINER_ID', 'K8S_POD_UID']);
      const requested = [...(c.conf.args?.cni?.ips ?? []), ...(args.get('IP') ? [args.get('IP')!] : [])]
        .map((ip) => ip.split('/')[0]!);
      return goJSON(resultForVersion(await cmdAdd(c.conf, attachment(c.env), b, requested), c.version));
    }),
  },
  DEL: { run: (c) => withBridge(c, async (b) => { await cmdDel(c.conf, attachment(c.env), b); return ''; }) },
  CHECK: { since: 'CHECK', run: (c) => withBridge(c, async (b) => { await cmdCheck(c.conf, attachment(c.env), b); return ''; }) },
  GC: { since: 'GC', run: (c) => withBridge(c, async (b) => { await cmdGc(c.conf, b); return ''; }) },
  STATUS: {
    since: 'STATUS',
    async run(c) {
      ensureStoreWritable(join(c.conf.ipam?.dataDir ?? '/var/lib/cni/networks', c.conf.name));
      return '';
    },
  },
};

async function dispatch(inv: CniInvocation, deps: PluginDeps): Promise<string> {
  const env = parseCniEnv(inv.env);
  if (env.command === 'VERSION') {
    return `${goJSONCompact({ cniVersion: PLUGIN_VERSION, supportedVersions: SUPPORTED_VERSIONS })}\n`;
  }
  const handler = CNI_VERBS[env.command];
  const raw = decodeConfig(inv.stdin);
  const version = configVersion(raw);
  if (handler.since) requireVersionFor(handler.since, version);
  return handler.run({ env, conf: parseBridgeConf(raw, version), version, deps });
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
