// Preflight checks for netns mode, as kubeadm's: is this root, does the kernel have what the data
// plane needs, and is every program netns mode runs installed — each with the Debian/Ubuntu
// package that provides it. `kdp doctor` prints them; `kdp up` runs them before it creates
// anything. Pure over a small view of the machine (PreflightHost) so tests can fake one.

import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { release } from 'node:os';
import { gunzipSync } from 'node:zlib';

export type CheckLevel = 'required' | 'optional';

export interface PreflightCheck {
  readonly name: string;
  readonly level: CheckLevel;
  /** undefined: could not be determined (not held against the machine). */
  readonly ok: boolean | undefined;
  readonly detail: string;
  /** The Debian/Ubuntu package that fixes it, when one does. */
  readonly pkg?: string;
}

export interface PreflightHost {
  readonly isRoot: boolean;
  /** The path of an executable on PATH, or undefined. */
  which(program: string): string | undefined;
  /** Kernel feature `name` (a module) is loaded, built in, or loadable; undefined: unknown. */
  kernelHas(module: string): boolean | undefined;
}

/** Programs netns mode runs, what for, the package, and whether kdp up needs them. */
const PROGRAMS: ReadonlyArray<{ prog: string; pkg: string; use: string; level: CheckLevel }> = [
  { prog: 'ip', pkg: 'iproute2', use: 'namespaces, veths, bridges, routes', level: 'required' },
  { prog: 'nsenter', pkg: 'util-linux', use: 'runs workloads and tools in namespaces', level: 'required' },
  { prog: 'sysctl', pkg: 'procps', use: 'forwarding and kube-proxy sysctls', level: 'required' },
  { prog: 'nft', pkg: 'nftables', use: 'nftables mode and the tracer\'s kernel view', level: 'required' },
  { prog: 'iptables-restore', pkg: 'iptables', use: 'iptables mode (nft backend)', level: 'required' },
  { prog: 'iptables-save', pkg: 'iptables', use: 'iptables mode read-back and drift checks', level: 'required' },
  { prog: 'ip6tables-restore', pkg: 'iptables', use: 'IPv6 and dual-stack clusters', level: 'required' },
  { prog: 'conntrack', pkg: 'conntrack', use: 'clearing stale UDP flows as kube-proxy does', level: 'required' },
  { prog: 'ipset', pkg: 'ipset', use: 'ipvs-mode rule sets', level: 'optional' },
  { prog: 'tcpdump', pkg: 'tcpdump', use: '`kdp trace --live` captures', level: 'optional' },
  { prog: 'xtables-monitor', pkg: 'iptables', use: '`kdp trace --live` kernel traces (iptables mode)', level: 'optional' },
  { prog: 'cc', pkg: 'gcc', use: 'the native kdp/echo workload and kdp-cni plugin (else the JS ones: more memory per pod, ~100 ms per exec\'d CNI call)', level: 'optional' },
];

const MODULES: ReadonlyArray<{ mod: string; use: string; level: CheckLevel }> = [
  { mod: 'nf_tables', use: 'netfilter rules (iptables-nft and nftables)', level: 'required' },
  { mod: 'veth', use: 'pod and node links', level: 'required' },
  { mod: 'bridge', use: 'the pod bridge and the underlay', level: 'required' },
  { mod: 'nf_conntrack', use: 'NAT and Service load balancing', level: 'required' },
  { mod: 'br_netfilter', use: 'Service traffic between pods of one node', level: 'optional' },
];

/** The kernel config symbol of each module (for kernels built without loadable modules). */
const CONFIG: Record<string, string> = {
  nf_tables: 'CONFIG_NF_TABLES', veth: 'CONFIG_VETH', bridge: 'CONFIG_BRIDGE',
  nf_conntrack: 'CONFIG_NF_CONNTRACK', br_netfilter: 'CONFIG_BRIDGE_NETFILTER',
};

export function preflightChecks(h: PreflightHost): PreflightCheck[] {
  const out: PreflightCheck[] = [{
    name: 'root', level: 'required', ok: h.isRoot,
    detail: h.isRoot ? 'running as root' : 'netns mode creates network namespaces: run as root (sudo)',
  }];
  for (const m of MODULES) {
    const has = h.kernelHas(m.mod);
    out.push({ name: `kernel ${m.mod}`, level: m.level, ok: has,
      detail: has === undefined ? `could not tell whether the kernel has ${m.mod} (${m.use})`
        : has ? m.use : `the kernel has no ${m.mod} module (${m.use})` });
  }
  for (const p of PROGRAMS) {
    const path = h.which(p.prog);
    out.push({ name: p.prog, level: p.level, ok: path !== undefined, pkg: p.pkg,
      detail: path ? `${path} (${p.use})` : `not found on PATH (${p.use})` });
  }
  return out;
}

/** The required checks that failed. */
export function preflightFailures(checks: readonly PreflightCheck[]): PreflightCheck[] {
  return checks.filter((c) => c.level === 'required' && c.ok === false);
}

/** `apt-get install -y …` for the packages that fix `checks`, or undefined when none would. */
export function installHint(checks: readonly PreflightCheck[]): string | undefined {
  const pkgs = [...new Set(checks.map((c) => c.pkg).filter((p): p is string => !!p))];
  return pkgs.length ? `apt-get install -y ${pkgs.join(' ')}` : undefined;
}

/** This machine, with PATH from `env`. */
export function localPreflightHost(env: NodeJS.ProcessEnv = process.env): PreflightHost {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  const read = (p: string) => { try { return readFileSync(p, 'utf8'); } catch { return undefined; } };
  const loaded = read('/proc/modules');
  const builtin = read(`/lib/modules/${release()}/modules.builtin`);
  const dep = read(`/lib/modules/${release()}/modules.dep`);
  let config: string | undefined;
  try { config = gunzipSync(readFileSync('/proc/config.gz')).toString('utf8'); } catch { /* none */ }
  return {
    isRoot: process.getuid?.() === 0,
    which(program) {
      for (const d of dirs) {
        const p = join(d, program);
        try { accessSync(p, constants.X_OK); return p; } catch { /* next */ }
      }
      return undefined;
    },
    kernelHas(mod) {
      const file = new RegExp(`(^|/)${mod}\\.ko(\\.[a-z]+)?(:|$)`, 'm');
      if (loaded !== undefined && new RegExp(`^${mod} `, 'm').test(loaded)) return true;
      if (builtin !== undefined && file.test(builtin)) return true;
      if (dep !== undefined && file.test(dep)) return true;
      // /sys/module lists built-in modules with parameters and every loaded one.
      try { accessSync(`/sys/module/${mod}`); return true; } catch { /* next */ }
      const sym = CONFIG[mod];
      if (config !== undefined && sym) return new RegExp(`^${sym}=[ym]$`, 'm').test(config);
      return loaded === undefined && builtin === undefined && dep === undefined ? undefined : false;
    },
  };
}

/** One line per check: `ok`, `MISSING`, `missing (optional)` or `unknown`. */
export function renderChecks(checks: readonly PreflightCheck[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks.map((c) => {
    const state = c.ok === undefined ? 'unknown' : c.ok ? 'ok' : c.level === 'required' ? 'MISSING' : 'missing (optional)';
    const pkg = c.ok === false && c.pkg ? ` — package ${c.pkg}` : '';
    return `${c.name.padEnd(width)}  ${state.padEnd(18)} ${c.detail}${pkg}`;
  }).join('\n') + '\n';
}
