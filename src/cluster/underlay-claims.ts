// Which underlay addresses the `kdp node` processes joining a netns cluster hold: each claims its
// address in `<data-dir>/nodes/<name>/underlay-ip` while it runs, choosing it under a lock (a
// directory: mkdir is atomic), so nodes started at the same moment — none registered as a Node
// yet — never pick the same address. A node's own earlier claim is its to reuse; the claim goes
// when the node process closes.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFileSync } from '../util/private-files.js';
import { kdpError } from '../errors.js';

const LOCK_STALE_MS = 30_000;

export function claimFile(dataDir: string, node: string): string {
  return join(dataDir, 'nodes', node, 'underlay-ip');
}

/** The lock held while choosing (a directory). */
export function claimLock(dataDir: string): string {
  return join(dataDir, 'nodes', '.underlay-ip.lock');
}

/** Every address another node process of this data dir has claimed. */
function claimedByOthers(dataDir: string, node: string): Set<string> {
  const dir = join(dataDir, 'nodes');
  const taken = new Set<string>();
  if (!existsSync(dir)) return taken;
  for (const other of readdirSync(dir)) {
    const f = claimFile(dataDir, other);
    if (other === node || !existsSync(f)) continue;
    for (const ip of readFileSync(f, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)) taken.add(ip);
  }
  return taken;
}

/**
 * Chooses the node's addresses with `choose` (given the addresses other node processes hold) and
 * claims them, under the data dir's lock. Returns the choice and a release for the claim.
 */
export async function claimUnderlayAddress<T extends { ip: string; ip6?: string }>(
  dataDir: string, node: string, choose: (taken: ReadonlySet<string>) => Promise<T>,
): Promise<{ choice: T; release(): void }> {
  const lock = claimLock(dataDir);
  mkdirSync(join(dataDir, 'nodes', node), { recursive: true });
  const deadline = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // A lock older than any choice takes was left by a process that died holding it.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw kdpError('KDP_UNAVAILABLE', `${lock}: held for ${LOCK_STALE_MS / 1000} s`);
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    const choice = await choose(claimedByOthers(dataDir, node));
    writePrivateFileSync(claimFile(dataDir, node), `${[choice.ip, choice.ip6].filter(Boolean).join('\n')}\n`);
    return { choice, release: () => rmSync(claimFile(dataDir, node), { force: true }) };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
