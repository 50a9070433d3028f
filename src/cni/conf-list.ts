// Network configuration lists as a CNI runtime reads them (cni.md §1.2; libcni conf.go): a
// `.conflist` with `plugins: [...]`, or a single-plugin `.conf`/`.json` wrapped into a list. A
// conf dir is read as kubelet and containerd do: the first file by name wins.

import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { kdpError } from '../errors.js';
import { compareVersions, SUPPORTED_VERSIONS } from './spec.js';

export interface NetworkConfigList {
  readonly cniVersion: string;
  readonly name: string;
  readonly disableCheck: boolean;
  readonly disableGC: boolean;
  readonly plugins: readonly Record<string, unknown>[];
  /** Where it came from: a file path, or `inline`. */
  readonly source: string;
}

const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const EXTENSIONS = ['.conflist', '.conf', '.json'];

/** The first config file of `dir` by name, parsed; undefined when the dir holds none. */
export function loadNetworkConfigList(dir: string): NetworkConfigList | undefined {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => EXTENSIONS.includes(extname(f))).sort();
  } catch (e) {
    throw kdpError('KDP_CONFIG', `cannot read CNI conf dir ${dir}: ${(e as Error).message}`);
  }
  const first = files[0];
  if (!first) return undefined;
  const path = join(dir, first);
  return parseNetworkConfigList(readFileSync(path, 'utf8'), path);
}

/** Parses a list (`plugins` present) or a single plugin config (wrapped, as libcni does). */
export function parseNetworkConfigList(text: string, source: string): NetworkConfigList {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw kdpError('KDP_CONFIG', `${source}: invalid JSON: ${(e as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw kdpError('KDP_CONFIG', `${source}: not a JSON object`);
  }
  const isList = Array.isArray(doc.plugins);
  const plugins = (isList ? doc.plugins : [doc]) as Record<string, unknown>[];
  const name = doc.name;
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw kdpError('KDP_CONFIG', `${source}: missing or invalid network name ${JSON.stringify(name)}`);
  }
  if (plugins.length === 0) throw kdpError('KDP_CONFIG', `${source}: "plugins" is empty`);
  plugins.forEach((p, i) => {
    if (typeof p !== 'object' || p === null || typeof p.type !== 'string' || p.type === '') {
      throw kdpError('KDP_CONFIG', `${source}: plugins[${i}] has no "type"`);
    }
  });
  return {
    cniVersion: chooseVersion(doc, source),
    name,
    disableCheck: isList && doc.disableCheck === true,
    disableGC: isList && doc.disableGC === true,
    plugins,
    source,
  };
}

/** The highest of `cniVersion` ∪ `cniVersions` that kdp implements (libcni's rule). */
function chooseVersion(doc: Record<string, unknown>, source: string): string {
  const all = [doc.cniVersion, ...(Array.isArray(doc.cniVersions) ? doc.cniVersions : [])]
    .filter((v): v is string => typeof v === 'string' && v !== '');
  const usable = all.filter((v) => (SUPPORTED_VERSIONS as readonly string[]).includes(v));
  if (all.length === 0) return '0.1.0';
  if (usable.length === 0) {
    throw kdpError('KDP_CONFIG', `${source}: no supported cniVersion in ${JSON.stringify(all)}`);
  }
  return usable.sort(compareVersions).at(-1)!;
}

/**
 * The config one plugin receives on stdin (libcni buildOneConfig): the list's `cniVersion` and
 * `name`, `runtimeConfig` for the capabilities it declares and the runtime supplies, and the
 * previous result; `capabilities` itself is not sent.
 */
export function buildPluginConfig(
  list: NetworkConfigList,
  plugin: Record<string, unknown>,
  opts: { prevResult?: unknown; capabilityArgs?: Readonly<Record<string, unknown>> } = {},
): Record<string, unknown> {
  const { capabilities, ...rest } = plugin;
  const out: Record<string, unknown> = { ...rest, cniVersion: list.cniVersion, name: list.name };
  const caps = (capabilities ?? {}) as Record<string, unknown>;
  const runtimeConfig: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts.capabilityArgs ?? {})) if (caps[k] === true) runtimeConfig[k] = v;
  if (Object.keys(runtimeConfig).length > 0) out.runtimeConfig = runtimeConfig;
  if (opts.prevResult !== undefined) out.prevResult = opts.prevResult;
  return out;
}

/**
 * Makes a user's list fit this node: host-local subnets `usePodCidr` / `usePodCidrIPv6` (Calico's
 * convention) become the node's pod CIDRs, and a host-local without `dataDir` keeps its state
 * under the node's data dir (so nodes do not share /var/lib/cni and `kdp down` removes it).
 */
export function forNode(
  list: NetworkConfigList, podCIDRs: readonly string[], ipamDir: string,
): NetworkConfigList {
  const v4 = podCIDRs.find((c) => !c.includes(':'));
  const v6 = podCIDRs.find((c) => c.includes(':'));
  const subst = (s: unknown) => {
    const want = s === 'usePodCidr' ? v4 : s === 'usePodCidrIPv6' ? v6 : s;
    if (want === undefined) {
      throw kdpError('KDP_CONFIG', `${list.source}: ${String(s)}: the node has no such pod CIDR`);
    }
    return want;
  };
  const plugins = list.plugins.map((p) => {
    const ipam = p.ipam as Record<string, unknown> | undefined;
    if (!ipam || ipam.type !== 'host-local') return p;
    const ranges = Array.isArray(ipam.ranges)
      ? (ipam.ranges as Record<string, unknown>[][])
        .map((set) => set.map((r) => ({ ...r, subnet: subst(r.subnet) })))
      : undefined;
    return {
      ...p,
      ipam: {
        ...ipam, dataDir: ipam.dataDir ?? ipamDir,
        ...(ranges ? { ranges } : {}), ...(ipam.subnet !== undefined ? { subnet: subst(ipam.subnet) } : {}),
      },
    };
  });
  return { ...list, plugins };
}
