// The runtime side of CNI (what libcni does for kubelet/containerd): runs a network configuration
// list for one attachment. ADD goes through the plugins in order, each getting the previous
// result as `prevResult`, and the final result is cached under the data dir; a failed ADD is
// undone by a DEL of the whole list. DEL runs in reverse with the cached result (and the cached
// config, so a changed conf dir still cleans up what was made); CHECK runs forward with it. GC
// and STATUS run every plugin (cni.md §1.2, §1.5).
//
// `type: kdp-cni` runs in-process (no process start, bridge state kept across calls) unless
// `execKdpCni` is set; every other type is exec'd from the bin dirs, like any CNI runtime.

import { readFileSync, rmSync } from 'node:fs';
import { ensurePrivateDirSync, writePrivateFileSync } from '../util/private-files.js';
import { join } from 'node:path';
import { buildBridgeCache, type BridgeCache } from '../cni/bridge-state.js';
import {
  buildPluginConfig, forNode, loadNetworkConfigList, parseNetworkConfigList, type NetworkConfigList,
} from '../cni/conf-list.js';
import { execPlugin, findPlugin } from '../cni/exec-plugin.js';
import { buildIpSessionPool } from '../host/ip-session.js';
import { runCniPlugin, type CniOutcome } from '../cni/plugin.js';
import { compareVersions } from '../cni/spec.js';
import { kdpError, KdpError } from '../errors.js';
import type { HostExec } from '../host/exec.js';

export interface CniCallerOptions {
  readonly exec: HostExec;
  /** Directories searched for plugin binaries (`CNI_PATH`). */
  readonly binDirs: readonly string[];
  /** libcni's cacheDir: results go to `<cacheDir>/results/<net>-<id>-<ifname>`. */
  readonly cacheDir: string;
  /** The node's named namespace, where plugins run; undefined = this process's namespace. */
  readonly nodeNetns?: string;
  /** Exec `kdp-cni` like any other plugin instead of calling it in-process. */
  readonly execKdpCni?: boolean;
}

export interface CniAttachment {
  readonly containerID: string;
  /** CNI_NETNS: a path (`/run/netns/NAME`); may be '' for DEL. */
  readonly netns: string;
  readonly ifname: string;
  /** CNI_ARGS pairs. */
  readonly args?: readonly (readonly [string, string])[];
  /** Runtime-supplied capability values (portMappings, bandwidth, ...). */
  readonly capabilityArgs?: Readonly<Record<string, unknown>>;
}

/** A plugin's CNI error, with its code, msg and details as the plugin printed them. */
export class CniPluginError extends KdpError {
  constructor(
    readonly verb: string,
    readonly plugin: string,
    readonly cniCode: number,
    readonly cniMsg: string,
    readonly cniDetails?: string,
  ) {
    super('KDP_HOST_EXEC', `CNI ${verb} of plugin ${plugin} failed: code ${cniCode}: ${cniMsg}` +
      `${cniDetails ? ` (${cniDetails})` : ''}`);
  }
}

export interface CniCaller {
  /** Runs ADD through the list; returns the final result. On failure, DELs the list. */
  add(list: NetworkConfigList, att: CniAttachment): Promise<Record<string, unknown>>;
  /** Runs DEL in reverse with the cached result; removes the cache entry on success. */
  del(list: NetworkConfigList, att: CniAttachment): Promise<void>;
  check(list: NetworkConfigList, att: CniAttachment): Promise<void>;
  /** GC with the attachments still valid; runs every plugin, reports every error. */
  gc(list: NetworkConfigList, valid: readonly { containerID: string; ifname: string }[]): Promise<void>;
  status(list: NetworkConfigList): Promise<void>;
  /** The cached ADD result of an attachment, if any. */
  cachedResult(list: NetworkConfigList, att: CniAttachment): Record<string, unknown> | undefined;
  /** Ends the in-process plugin's helper processes. */
  close(): void;
}

interface CacheEntry {
  kind: 'cniCacheV1';
  containerId: string;
  config: string;
  ifName: string;
  networkName: string;
  netns?: string;
  cniArgs?: (readonly [string, string])[];
  capabilityArgs?: Record<string, unknown>;
  result: Record<string, unknown>;
}

export function buildCniCaller(o: CniCallerOptions): CniCaller {
  const bridgeCache: BridgeCache = buildBridgeCache();
  const ipSessions = o.nodeNetns && !o.execKdpCni ? buildIpSessionPool(o.nodeNetns, { warm: true }) : undefined;
  const cachePath = (net: string, att: CniAttachment) =>
    join(o.cacheDir, 'results', `${net}-${att.containerID}-${att.ifname}`);

  function readCache(net: string, att: CniAttachment): CacheEntry | undefined {
    try {
      return JSON.parse(readFileSync(cachePath(net, att), 'utf8')) as CacheEntry;
    } catch {
      return undefined;
    }
  }

  function writeCache(list: NetworkConfigList, att: CniAttachment, result: Record<string, unknown>): void {
    ensurePrivateDirSync(join(o.cacheDir, 'results'));
    const entry: CacheEntry = {
      kind: 'cniCacheV1', containerId: att.containerID, ifName: att.ifname, networkName: list.name,
      config: Buffer.from(JSON.stringify(listDoc(list))).toString('base64'),
      ...(att.netns ? { netns: att.netns } : {}),
      ...(att.args?.length ? { cniArgs: [...att.args] } : {}),
      ...(att.capabilityArgs ? { capabilityArgs: { ...att.capabilityArgs } } : {}),
      result,
    };
    writePrivateFileSync(cachePath(list.name, att), JSON.stringify(entry));
  }

  async function invoke(
    verb: string, list: NetworkConfigList, plugin: Record<string, unknown>, att: CniAttachment | undefined,
    stdinConf: Record<string, unknown>,
  ): Promise<string> {
    const env: Record<string, string> = { CNI_COMMAND: verb, CNI_PATH: o.binDirs.join(':') };
    if (att) {
      Object.assign(env, { CNI_CONTAINERID: att.containerID, CNI_NETNS: att.netns, CNI_IFNAME: att.ifname });
      if (att.args?.length) env.CNI_ARGS = att.args.map(([k, v]) => `${k}=${v}`).join(';');
    }
    const type = String(plugin.type);
    const stdin = JSON.stringify(stdinConf);
    let out: CniOutcome;
    if (type === 'kdp-cni' && !o.execKdpCni) {
      const deps = { exec: o.exec, node: { name: o.nodeNetns }, bridgeCache, ipSessions };
      out = await runCniPlugin({ env, stdin }, deps);
    } else {
      const command = findPlugin(type, o.binDirs);
      if (!command) {
        throw new CniPluginError(verb, type, 999, `failed to find plugin "${type}" in path [${o.binDirs.join(' ')}]`);
      }
      out = await execPlugin({ command, env, stdin, netns: o.nodeNetns });
    }
    if (out.exitCode !== 0) throw pluginError(verb, type, out);
    return out.stdout;
  }

  async function delWith(list: NetworkConfigList, att: CniAttachment, prevResult: unknown): Promise<void> {
    const v04 = compareVersions(list.cniVersion, '0.4.0') >= 0;
    for (const p of [...list.plugins].reverse()) {
      const conf = buildPluginConfig(list, p, {
        prevResult: v04 ? prevResult : undefined, capabilityArgs: att.capabilityArgs,
      });
      await invoke('DEL', list, p, att, conf);
    }
  }

  return {
    async add(list, att) {
      let prev: Record<string, unknown> | undefined;
      try {
        for (const p of list.plugins) {
          const conf = buildPluginConfig(list, p, { prevResult: prev, capabilityArgs: att.capabilityArgs });
          const stdout = await invoke('ADD', list, p, att, conf);
          prev = stdout.trim() ? (JSON.parse(stdout) as Record<string, unknown>) : prev;
        }
      } catch (e) {
        await delWith(list, att, undefined).catch(() => undefined);
        throw e;
      }
      const result = prev ?? { cniVersion: list.cniVersion };
      writeCache(list, att, result);
      return result;
    },
    async del(list, att) {
      const cached = readCache(list.name, att);
      const effective = cached ? cachedList(cached, list) : list;
      const withCaps = { ...att, capabilityArgs: att.capabilityArgs ?? cached?.capabilityArgs };
      await delWith(effective, withCaps, cached?.result);
      rmSync(cachePath(list.name, att), { force: true });
    },
    async check(list, att) {
      if (compareVersions(list.cniVersion, '0.4.0') < 0) {
        throw new CniPluginError('CHECK', list.name, 1,
          'configuration version does not support the CHECK command');
      }
      if (list.disableCheck) return;
      const cached = readCache(list.name, att);
      if (!cached) throw new CniPluginError('CHECK', list.name, 999, 'failed to get network cached result');
      for (const p of list.plugins) {
        const caps = att.capabilityArgs ?? cached.capabilityArgs;
        const conf = buildPluginConfig(list, p, { prevResult: cached.result, capabilityArgs: caps });
        await invoke('CHECK', list, p, att, conf);
      }
    },
    async gc(list, valid) {
      if (compareVersions(list.cniVersion, '1.1.0') < 0 || list.disableGC) return;
      const attachments = valid.map((a) => ({ containerID: a.containerID, ifname: a.ifname }));
      const errors: string[] = [];
      for (const p of list.plugins) {
        const conf = {
          ...buildPluginConfig(list, p),
          'cni.dev/valid-attachments': attachments, 'cni.dev/attachments': attachments,
        };
        await invoke('GC', list, p, undefined, conf).catch((e: Error) => errors.push(e.message));
      }
      if (errors.length) throw new CniPluginError('GC', list.name, 999, errors.join('; '));
    },
    async status(list) {
      if (compareVersions(list.cniVersion, '1.1.0') < 0) return;
      for (const p of list.plugins) await invoke('STATUS', list, p, undefined, buildPluginConfig(list, p));
    },
    cachedResult: (list, att) => readCache(list.name, att)?.result,
    close: () => ipSessions?.close(),
  };
}

/** The list as JSON (what the cache stores as `config`). */
function listDoc(list: NetworkConfigList): Record<string, unknown> {
  return {
    cniVersion: list.cniVersion, name: list.name, plugins: list.plugins,
    ...(list.disableCheck ? { disableCheck: true } : {}), ...(list.disableGC ? { disableGC: true } : {}),
  };
}

function cachedList(entry: CacheEntry, fallback: NetworkConfigList): NetworkConfigList {
  try {
    return parseNetworkConfigList(Buffer.from(entry.config, 'base64').toString('utf8'), 'cache');
  } catch {
    return fallback;
  }
}

/** libcni's reading of a failure: the error object on stdout, else stderr (raw_exec.go). */
function pluginError(verb: string, plugin: string, out: CniOutcome): CniPluginError {
  try {
    const e = JSON.parse(out.stdout) as { code?: number; msg?: string; details?: string };
    if (typeof e.code === 'number') return new CniPluginError(verb, plugin, e.code, e.msg ?? '', e.details);
  } catch { /* not JSON: fall through */ }
  const why = out.stderr.trim()
    ? `netplugin failed: ${JSON.stringify(out.stderr.trim())}: exit status ${out.exitCode}`
    : `netplugin failed with no error message: exit status ${out.exitCode}`;
  return new CniPluginError(verb, plugin, 999, why);
}

// ---- The node's pod network: what the netns runtime calls for each pod sandbox.

export interface PodNetworkOptions {
  readonly exec: HostExec;
  /** The node's named namespace (plugins run there). */
  readonly nodeNetns: string;
  /** The node's data dir for IPAM; also the default host-local `dataDir` and the result cache. */
  readonly ipamDir: string;
  /** Bridge of the built-in config. Default `cni0`. */
  readonly podBridge?: string;
  /** Read the network from this conf dir (first file by name) instead of the built-in config. */
  readonly confDir?: string;
  /** CNI_PATH. Default `/usr/lib/cni` (kdp's own `kdp-cni` is always found). */
  readonly binDirs?: readonly string[];
  readonly execKdpCni?: boolean;
  /** The built-in config's pod MTU (the VXLAN backend's: the underlay's less 50); default the
   *  plugin's (the bridge's). */
  readonly mtu?: number;
}

export interface PodNetworkTarget {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** The pod's named network namespace. */
  readonly netns: string;
  /** The node's pod CIDRs (v4 first, as the Node lists them). */
  readonly podCIDRs: readonly string[];
}

export interface PodNetwork {
  /** The pod's whole network: its loopback up, then ADD through the list; the final result. */
  attach(pod: PodNetworkTarget): Promise<Record<string, unknown>>;
  detach(pod: PodNetworkTarget): Promise<void>;
  close(): void;
}

export const DEFAULT_CNI_BIN_DIRS = ['/usr/lib/cni'] as const;

export function buildPodNetwork(o: PodNetworkOptions): PodNetwork {
  const caller = buildCniCaller({
    exec: o.exec, binDirs: o.binDirs ?? DEFAULT_CNI_BIN_DIRS, cacheDir: join(o.ipamDir, '.cni-cache'),
    nodeNetns: o.nodeNetns, execKdpCni: o.execKdpCni,
  });
  const listFor = (pod: PodNetworkTarget): NetworkConfigList => {
    if (!o.confDir) return builtinList(o, pod.podCIDRs);
    const list = loadNetworkConfigList(o.confDir);
    if (!list) {
      throw kdpError('KDP_CONFIG', `no CNI network config (*.conflist, *.conf, *.json) in ${o.confDir}`);
    }
    return forNode(list, pod.podCIDRs, o.ipamDir);
  };
  // Until one ADD of this node has succeeded, ADDs go one at a time: the first makes the node's
  // bridge (and kdp-cni learns it, bridge-state.ts); at once, every pod of a burst would ask the
  // kernel for it, race to create it and retry. Later ADDs run side by side.
  let warmed = false;
  let first: Promise<unknown> | undefined;
  async function firstAlone<T>(add: () => Promise<T>): Promise<T> {
    while (!warmed && first) await first.catch(() => undefined);
    if (warmed) return add();
    const p = add();
    first = p;
    p.then(() => { warmed = true; }, () => { if (first === p) first = undefined; });
    return p;
  }
  const attachment = (pod: PodNetworkTarget): CniAttachment => ({
    containerID: pod.uid, netns: `/run/netns/${pod.netns}`, ifname: 'eth0',
    args: [['IgnoreUnknown', '1'], ['K8S_POD_NAMESPACE', pod.namespace], ['K8S_POD_NAME', pod.name],
      ['K8S_POD_INFRA_CONTAINER_ID', pod.uid], ['K8S_POD_UID', pod.uid]],
  });
  return {
    async attach(pod) {
      const list = listFor(pod);
      // The pod's loopback, as containerd's setup does before the network: kdp-cni brings it up
      // in its own pod-side batch (bridge-plan.ts), which saves a process per pod; any other
      // list gets it here.
      if (!list.plugins.some((p) => p.type === 'kdp-cni')) {
        await o.exec.run('ip', ['-n', pod.netns, 'link', 'set', 'lo', 'up']);
      }
      return firstAlone(() => caller.add(list, attachment(pod)));
    },
    // DEL runs the config cached at ADD; the current one only matters when there is no cache.
    detach: (pod) => {
      let list: NetworkConfigList;
      try {
        list = listFor(pod);
      } catch {
        list = builtinList(o, pod.podCIDRs);
      }
      return caller.del(list, attachment(pod));
    },
    close: () => caller.close(),
  };
}

/** kdp's own network: kdp-cni bridge, isGateway, no ipMasq, host-local with one range set per
 *  podCIDR (dual stack: both, in the Node's order) and a default route per family. */
function builtinList(o: PodNetworkOptions, podCIDRs: readonly string[]): NetworkConfigList {
  const routes = [...new Set(podCIDRs.map((c) => (c.includes(':') ? '::/0' : '0.0.0.0/0')))];
  return {
    cniVersion: '1.0.0', name: 'kdp', disableCheck: false, disableGC: false, source: 'inline',
    plugins: [{
      type: 'kdp-cni', bridge: o.podBridge ?? 'cni0', isGateway: true, ipMasq: false, hairpinMode: true,
      ...(o.mtu ? { mtu: o.mtu } : {}),
      ipam: {
        type: 'host-local', dataDir: o.ipamDir, routes: routes.map((dst) => ({ dst })),
        ranges: podCIDRs.map((subnet) => [{ subnet }]),
      },
    }],
  };
}
