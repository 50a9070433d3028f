// The proxy modes. A mode is one entry here that brings everything kdp does with its rule
// tables: the compiler (its proxier), the checks and fake of its dump format, the commands that
// put it in a kernel, the tracer's filter, the diff's parser and reducer, and the few settings
// kube-proxy's configuration and start-up take from the mode. Code outside a mode's folder
// (`src/proxy/<mode>/mode.ts` builds the entry) asks this registry and never switches on a
// mode's name, so a fourth mode is its folder plus one line in BUILT_IN (and the ProxyMode
// union). test/proxy/mode-registry.test.ts registers a toy mode and checks that the appliers,
// the tracer and the diff take it up, and greps the tree for switches on mode names.

import { kdpError } from '../errors.js';
import type { FamilySection } from '../diff/families.js';
import type { FactTable, LoadedTable, ProbeTarget } from '../diff/types.js';
import type { HostExec } from '../host/exec.js';
import { emptyInputError, type CheckOptions } from '../ruleset/check.js';
import type { NodeFilter } from '../trace/topology.js';
import type { Artifact, Proxier, ProxierConfig, RuleOrigin, SyncResult } from './backend.js';
import type { IPFamily } from './types.js';
import { iptablesMode } from './iptables/mode.js';
import { nftablesMode } from './nftables/mode.js';
import { ipvsMode } from './ipvs/mode.js';

/** The built-in modes' names (the registry may hold more, registered by tests). */
export type ProxyMode = 'iptables' | 'nftables' | 'ipvs';

/** What each `src/proxy/<mode>/proxier.ts` exports (loaded on first use). */
export interface BackendModule {
  buildProxier(config: ProxierConfig): Proxier;
  /** Canonical form of one artifact (upstream's test sort); identity when absent. */
  canonicalize?(artifact: Artifact): string;
}

/** One family's rules held in memory: the fake of virtual mode, failing as the kernel would. */
export interface MemoryTable {
  /** Applies one sync's artifacts; throws and keeps the previous rules when one is refused. */
  apply(result: SyncResult): void;
  /** What the table holds, in the mode's dump format. */
  dump(): string;
}

/** The commands that put a mode's rules into a node's kernel (netns mode). */
export interface KernelRules {
  /** What the kernel holds, in the mode's dump format ('' when there is nothing yet). */
  dump(exec: HostExec, netns: string, family: IPFamily): Promise<string>;
  /** Applies one artifact (text or chunks) atomically. */
  apply(exec: HostExec, netns: string, family: IPFamily, input: string | readonly string[]): Promise<void>;
  /** After a full sync's artifacts (iptables: upstream's jumps from the built-in chains). */
  afterFullSync?(exec: HostExec, netns: string, family: IPFamily): Promise<void>;
  /** Re-applies `want` (a dump of the memory table) atomically, leaving others' rules alone. */
  restore(exec: HostExec, netns: string, family: IPFamily, want: string): Promise<void>;
  /** How `have` (a kernel dump) differs from `want` (what was compiled); [] when equal. */
  drift(want: string, have: string): string[];
  /** Replaces what a fresh namespace holds with a whole dump (the live lab's node). */
  load(exec: HostExec, netns: string, family: IPFamily, text: string): Promise<void>;
  /** Removes this mode's rules left by an earlier kube-proxy (upstream CleanupLeftovers);
   *  returns what failed ("already gone" is no failure). */
  cleanupLeftovers(exec: HostExec, netns: string): Promise<string[]>;
  /** The kernel's packet-trace facility that shows this mode's rules (`kdp trace --live`). */
  readonly liveTrace: 'xtables' | 'nft';
}

/** The diff's view of a mode's dumps. */
export interface DiffSupport {
  /** Claims a dump from its whole text; checked for every mode before `claimsLine`. */
  claimsText?(text: string): boolean;
  /** Claims a dump from its first meaningful line. */
  claimsLine?(line: string): boolean;
  /** Parses a table: fills `facts`, returns its normalised lines. */
  parse(table: LoadedTable, facts: FactTable): readonly string[];
  /** Drops what two dumps share before parsing (reduce.ts); undefined: not applicable. */
  reducePair?(a: string, b: string): [string, string] | undefined;
  /** Probe targets read straight from the text; undefined: use the facts'. */
  quickTargets?(text: string): ProbeTarget[] | undefined;
  /** The dump cut into one section per IP family. */
  sections(text: string): FamilySection[];
  /** Unmarked sections take their family from their addresses (nftables tables say it). */
  readonly familyFromAddresses: boolean;
  /** A failure in a cut section is re-raised by parsing the whole text (to name its line). */
  readonly reparseWhole: boolean;
  /** An empty table (the side a family is missing from). */
  readonly emptyText: string;
}

export interface ProxyModeEntry {
  readonly name: ProxyMode;
  /** The compiler, loaded on first use (`kdp trace` and `kdp diff` never load it). */
  loadBackend(): Promise<BackendModule>;
  /** KubeProxyConfiguration: the section of the mode's own settings (syncPeriod, ...) and the
   *  one its masquerade settings come from (ipvs mode takes iptables'). */
  readonly configSection: string;
  readonly masqueradeSection: string;
  /** nodePortAddresses when the configuration gives none (upstream platformApplyDefaults). */
  readonly defaultNodePortAddresses: readonly string[];
  /** Serves localhost NodePorts by route_localnet=1 (iptables, with localhostNodePorts). */
  readonly routeLocalnet: boolean;
  /** kube-proxy's failed-sync counter of the mode. */
  readonly syncFailureMetric: { readonly name: string; readonly help: string };
  /** `kdp rules compile` prints canonical (sorted) output unless asked otherwise. */
  readonly canonicalByDefault: boolean;
  /** A fresh in-memory table of one family. */
  memoryTable(): MemoryTable;
  /** Checks a whole dump as the kernel's tools would (KDP_PARSE naming the line). */
  check(text: string): void;
  /** A dump holding no table at all (a truncated file). */
  isEmpty(text: string): boolean;
  /** The tracer's filter for a dump. */
  traceFilter(rules: string, origins?: ReadonlyMap<string, RuleOrigin>): NodeFilter;
  /** Whether a node's IPv4 dump serves localhost NodePorts (route_localnet on). */
  servesLocalhostNodePorts?(ipv4Dump: string): boolean;
  readonly diff: DiffSupport;
  /** Absent: the kernel data plane cannot run this mode (ipvs: kdp loads no IP_VS module). */
  readonly kernel?: KernelRules;
  /** Why `kernel` is absent, for the error. */
  readonly noKernelReason?: string;
}

export const DEFAULT_PROXY_MODE: ProxyMode = 'iptables';

// Built on first use: the entries' modules import parts of the tracer and the diff that may
// themselves import this registry.
const BUILT_IN = (): readonly ProxyModeEntry[] => [iptablesMode, nftablesMode, ipvsMode];
let entries: Map<string, ProxyModeEntry> | undefined;

function all(): Map<string, ProxyModeEntry> {
  entries ??= new Map(BUILT_IN().map((e) => [e.name, e]));
  return entries;
}

/** Every mode's name, built-ins first, in registration order. */
export function proxyModeNames(): ProxyMode[] {
  return [...all().keys()] as ProxyMode[];
}

export function isProxyMode(name: unknown): name is ProxyMode {
  return typeof name === 'string' && all().has(name);
}

/** The entry of a mode; an unknown name is KDP_CONFIG naming the known ones. */
export function proxyMode(name: string): ProxyModeEntry {
  const e = all().get(name);
  if (!e) {
    throw kdpError('KDP_CONFIG', `proxy mode "${name}" is not one of ${proxyModeNames().join(', ')}`);
  }
  return e;
}

/** Adds a mode (tests register toy modes); returns a function that removes it again. */
export function registerProxyMode(entry: ProxyModeEntry): () => void {
  if (all().has(entry.name)) throw kdpError('KDP_CONFIG', `proxy mode ${entry.name} is registered already`);
  all().set(entry.name, entry);
  return () => { all().delete(entry.name); };
}

/**
 * Checks a whole dump of a mode before it is traced or compared, as the kernel's tools would
 * before applying it; an input with no table at all is refused unless `allowEmpty`.
 */
export function checkRuleText(mode: string, text: string, opts: CheckOptions = {}): void {
  const e = proxyMode(mode);
  if (!opts.allowEmpty && e.isEmpty(text)) throw emptyInputError();
  e.check(text);
}

/** The modes the kernel data plane can apply (netns mode). */
export function kernelModeNames(): ProxyMode[] {
  return proxyModeNames().filter((n) => proxyMode(n).kernel !== undefined);
}

/** The kernel commands of a mode; KDP_CONFIG for a mode netns mode cannot apply. */
export function kernelRulesOf(mode: string): KernelRules {
  const e = proxyMode(mode);
  if (e.kernel) return e.kernel;
  throw kdpError('KDP_CONFIG', `--mode ${mode}: netns mode cannot apply ${mode}` +
    `${e.noKernelReason ? ` (${e.noKernelReason})` : ''}; use --mode ${kernelModeNames().join(' or ')}, ` +
    `or --virtual to compile ${mode} rules only`);
}
