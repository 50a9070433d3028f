// Pod sandbox namespaces made and removed through long-lived `ip -batch` sessions in kdp's own
// namespace (cni/ip-session.ts), not a process per pod: `netns add NAME` is a line written to a
// running ip (a few ms of kernel work), where `ip netns add` as its own process costs a process
// start (~30-40 ms of CPU on a busy host) — with 50 pods at once, the first stage of pod startup.
// Sessions run in kdp's mount namespace (no `-n`), so the bind mounts under /run/netns are the
// host's, exactly as with `ip netns add`. The loopback is not brought up here: that is part of
// the pod's network setup (cni-caller.ts), as containerd does with its loopback step.

import { existsSync } from 'node:fs';
import { buildIpSessionPool, type IpSessionOptions } from '../cni/ip-session.js';
import { kdpError } from '../errors.js';

export interface SandboxNetns {
  /** Creates the named namespace; one that exists already is left as it is. */
  ensure(name: string): Promise<void>;
  /** Removes it; one that is already gone is not an error. */
  remove(name: string): Promise<void>;
  /** Ends the sessions (they also end by themselves when kdp dies: their stdin closes). */
  close(): void;
}

/** Names go into batch lines: only what `ip netns` names can be, and nothing that splits a line. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/** `warm`: start the sessions now, not with the first pod (a spawn blocks kdp's loop). */
export function buildSandboxNetns(
  o: Pick<IpSessionOptions, 'onSpawn' | 'onExit' | 'size' | 'warm'> = {},
): SandboxNetns {
  const pool = buildIpSessionPool(undefined, {
    size: o.size ?? 2, warm: o.warm, onSpawn: o.onSpawn, onExit: o.onExit,
  });
  const check = (name: string) => {
    if (!NAME.test(name)) {
      throw kdpError('KDP_INTERNAL', `invalid network namespace name ${JSON.stringify(name)}`);
    }
  };
  return {
    async ensure(name) {
      check(name);
      if (existsSync(`/run/netns/${name}`)) return;
      const out = await pool.run([`netns add ${name}`]);
      // A concurrent caller may have made it meanwhile: that is success, as with ensureNetns.
      if (!out.ok && !(/File exists/.test(out.stderr) && existsSync(`/run/netns/${name}`))) {
        throw kdpError('KDP_HOST_EXEC', `ip netns add ${name} failed: ${out.stderr.trim()}`);
      }
    },
    async remove(name) {
      check(name);
      const out = await pool.run([`netns delete ${name}`]);
      if (!out.ok && !/No such file|not found|Invalid/.test(out.stderr)) {
        throw kdpError('KDP_HOST_EXEC', `ip netns delete ${name} failed: ${out.stderr.trim()}`);
      }
    },
    close: () => pool.close(),
  };
}
