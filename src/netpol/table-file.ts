// The node's last applied `inet kdp-netpol` table, kept beside kube-proxy's rule history in the
// data dir (`nodes/<node>/rules/netpol.nft`), so `kdp rules --node N --netpol` shows it in both
// modes without entering the node's namespace. Written atomically after each successful apply.
// The last NETPOL_HISTORY tables are also kept, numbered (`netpol-history/000042.nft`), so
// `kdp diff --netpol --node N @41 @latest` can say what a policy change opened or closed.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { kdpError } from '../errors.js';
import { PRIVATE_DIR_MODE, writePrivateFileSync } from '../util/private-files.js';

export const NETPOL_TABLE_FILE = 'netpol.nft';
export const NETPOL_HISTORY_DIR = 'netpol-history';
export const NETPOL_HISTORY = 20;

function historyOf(rulesDir: string): number[] {
  const dir = join(rulesDir, NETPOL_HISTORY_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => /^\d{6}\.nft$/.test(f)).map((f) => Number(f.slice(0, 6)))
    .sort((a, b) => a - b);
}

const historyFile = (rulesDir: string, seq: number): string =>
  join(rulesDir, NETPOL_HISTORY_DIR, `${String(seq).padStart(6, '0')}.nft`);

export function writeNetpolTable(rulesDir: string, text: string): void {
  mkdirSync(join(rulesDir, NETPOL_HISTORY_DIR), { recursive: true, mode: PRIVATE_DIR_MODE });
  const kept = historyOf(rulesDir);
  const seq = (kept[kept.length - 1] ?? 0) + 1;
  writePrivateFileSync(historyFile(rulesDir, seq), text, { atomic: true });
  for (const old of kept.slice(0, Math.max(0, kept.length + 1 - NETPOL_HISTORY))) {
    rmSync(historyFile(rulesDir, old), { force: true });
  }
  writePrivateFileSync(join(rulesDir, NETPOL_TABLE_FILE), text, { atomic: true });
}

/** The text last applied on the node, or undefined when its controller never applied one. */
export function readNetpolTable(rulesDir: string): string | undefined {
  const f = join(rulesDir, NETPOL_TABLE_FILE);
  return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
}

/** A kept table by `@N`, `@latest` or `@latest~K` (K applies before the latest). */
export function readNetpolSnapshot(rulesDir: string, ref: string): { seq: number; text: string } {
  const kept = historyOf(rulesDir);
  if (kept.length === 0) throw kdpError('KDP_NOT_FOUND', `no NetworkPolicy tables kept in ${rulesDir}`);
  const m = /^@(?:(\d+)|latest(?:~(\d+))?)$/.exec(ref);
  if (!m) throw kdpError('KDP_CONFIG', `NetworkPolicy table "${ref}": write @N, @latest or @latest~K`);
  const seq = m[1] !== undefined ? Number(m[1]) : kept[kept.length - 1 - Number(m[2] ?? 0)];
  if (seq === undefined || !kept.includes(seq)) {
    throw kdpError('KDP_NOT_FOUND', `NetworkPolicy table ${ref} is not kept (have @${kept[0]}..@${kept[kept.length - 1]})`);
  }
  return { seq, text: readFileSync(historyFile(rulesDir, seq), 'utf8') };
}
