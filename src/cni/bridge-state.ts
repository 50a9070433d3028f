// What the plugin knows about a node's bridge: its MAC, addresses, and whether the node's
// forwarding sysctls were written. A long-lived caller (the node agent) passes a BridgeCache so
// only the first ADD per bridge asks the kernel; every later ADD goes straight to one batch. The
// cache is verified by use: a batch that fails drops the entry, and the retry asks the kernel.

import { CNI_CODES, CniError } from './spec.js';
import type { Targets } from './netns-target.js';

export interface BridgeAddr {
  readonly family: 'inet' | 'inet6';
  readonly local: string;
  readonly prefixlen: number;
}

export interface BridgeState {
  readonly mac: string;
  readonly up: boolean;
  readonly addrs: readonly BridgeAddr[];
  /** Forwarding sysctls already written by this caller (unknown = false). */
  readonly forwarding: { readonly v4: boolean; readonly v6: boolean };
  /** accept_ra=0 already written for the bridge. */
  readonly raOff: boolean;
}

export interface BridgeCache {
  get(key: string): BridgeState | undefined;
  set(key: string, state: BridgeState): void;
  delete(key: string): void;
}

export function buildBridgeCache(): BridgeCache {
  const m = new Map<string, BridgeState>();
  return { get: (k) => m.get(k), set: (k, s) => void m.set(k, s), delete: (k) => void m.delete(k) };
}

export function bridgeCacheKey(t: Targets, bridge: string): string {
  return `${t.nodeNetnsPath}\0${bridge}`;
}

/** Reads the bridge from the kernel: undefined when absent; an error when it is not a bridge. */
export async function queryBridge(t: Targets, bridge: string): Promise<BridgeState | undefined> {
  let stdout: string;
  try {
    stdout = (await t.ipNode(['-j', '-d', 'addr', 'show', 'dev', bridge])).stdout;
  } catch (e) {
    if (/does not exist|Cannot find device/.test((e as Error).message)) return undefined;
    throw e;
  }
  const link = (JSON.parse(stdout || '[]') as Array<Record<string, any>>)[0];
  if (!link) return undefined;
  if (link.linkinfo?.info_kind !== 'bridge') {
    throw new CniError(CNI_CODES.internal, `${bridge} already exists but is not a bridge`);
  }
  return {
    mac: String(link.address),
    up: Array.isArray(link.flags) && link.flags.includes('UP'),
    addrs: ((link.addr_info ?? []) as BridgeAddr[])
      .filter((a) => a.family === 'inet' || a.family === 'inet6')
      .map((a) => ({ family: a.family, local: a.local, prefixlen: a.prefixlen })),
    forwarding: { v4: false, v6: false },
    raOff: false,
  };
}
