// Flags several commands share. A module of its own so that a command that only needs
// `--data-dir` does not load `kdp up`'s whole cluster with it (kdp starts in ~0.2 s).

import { readFileSync } from 'node:fs';
import { kdpError } from '../errors.js';
import { goDurationMs } from '../util/go-duration.js';
import type { NodeMaskFlags } from '../controllers/nodeipam/cluster-cidrs.js';

export const DATA_DIR_FLAG = { name: 'data-dir', type: 'string', help: 'cluster data directory (default $KDP_DATA_DIR or ~/.kdp)' } as const;

/** On every command that opens the embedded store (src/store/README.md, "Damaged WAL bytes"). */
export const REPAIR_FLAG = { name: 'repair', type: 'boolean', default: false,
  help: 'start even if the store\'s WAL is damaged: drop everything from the first bad record (kept aside as *.damaged-<time>)' } as const;

/** kube-controller-manager's node mask flags (also `kdp controller-manager`'s). */
export const NODE_MASK_FLAGS = [
  { name: 'node-cidr-mask-size', type: 'number',
    help: 'single stack: each node\'s podCIDR size (default /24 IPv4, /64 IPv6)' },
  { name: 'node-cidr-mask-size-ipv4', type: 'number', help: 'dual stack: IPv4 podCIDR size (default 24)' },
  { name: 'node-cidr-mask-size-ipv6', type: 'number', help: 'dual stack: IPv6 podCIDR size (default 64)' },
] as const;

export function nodeMaskFlags(flags: Record<string, unknown>): NodeMaskFlags {
  return {
    nodeCIDRMaskSize: flags['node-cidr-mask-size'] as number | undefined,
    nodeCIDRMaskSizeIPv4: flags['node-cidr-mask-size-ipv4'] as number | undefined,
    nodeCIDRMaskSizeIPv6: flags['node-cidr-mask-size-ipv6'] as number | undefined,
  };
}

/** kube-apiserver's etcd flags: objects in an etcd v3 cluster instead of the embedded store. */
export const ETCD_FLAGS = [
  { name: 'etcd-servers', type: 'string', help: 'etcd client URLs, comma-separated (objects go there instead of the embedded store)' },
  { name: 'etcd-cafile', type: 'string', help: 'CA of the etcd servers (TLS)' },
  { name: 'etcd-certfile', type: 'string', help: 'client certificate for etcd' },
  { name: 'etcd-keyfile', type: 'string', help: 'client key for etcd' },
  { name: 'etcd-prefix', type: 'string', help: 'prefix before kdp\'s /registry keys in etcd (default none)' },
  { name: 'etcd-compaction-interval', type: 'string', default: '5m', help: 'compact etcd history older than this (Go duration; 0: never), as kube-apiserver' },
] as const;

/** The etcd store's options from ETCD_FLAGS, or undefined without --etcd-servers. */
export function etcdOptions(flags: Record<string, unknown>): {
  endpoints: string[]; prefix?: string; tls?: { ca: Buffer; cert?: Buffer; key?: Buffer }; compactionIntervalMs: number;
} | undefined {
  const servers = flags['etcd-servers'] as string | undefined;
  if (!servers) return undefined;
  const endpoints = servers.split(',').map((s) => s.trim()).filter(Boolean);
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/]+$/.test(e)) throw kdpError('KDP_CONFIG', `--etcd-servers: ${JSON.stringify(e)} is not http(s)://host:port`);
  }
  const read = (flag: string) => {
    const path = flags[flag] as string | undefined;
    if (!path) return undefined;
    try { return readFileSync(path); } catch (e) {
      throw kdpError('KDP_CONFIG', `--${flag}: cannot read ${path}: ${(e as Error).message}`);
    }
  };
  const ca = read('etcd-cafile');
  const cert = read('etcd-certfile');
  const key = read('etcd-keyfile');
  if ((cert && !key) || (key && !cert)) throw kdpError('KDP_CONFIG', '--etcd-certfile and --etcd-keyfile go together');
  if (endpoints.some((e) => e.startsWith('https:')) && !ca) throw kdpError('KDP_CONFIG', '--etcd-cafile is required for https etcd servers');
  const interval = String(flags['etcd-compaction-interval'] ?? '5m');
  const compactionIntervalMs = goDurationMs(interval);
  if (compactionIntervalMs === undefined) {
    throw kdpError('KDP_CONFIG', `--etcd-compaction-interval: ${JSON.stringify(interval)} is not a duration (5m, 1h30m, 0)`);
  }
  return { endpoints, prefix: flags['etcd-prefix'] as string | undefined, ...(ca ? { tls: { ca, cert, key } } : {}),
    compactionIntervalMs };
}
