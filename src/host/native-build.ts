// Builds one of kdp's small C programs (native/) with the machine's C compiler, once per source
// version and compile-time constants, into a directory of the data dir. The binary's name
// carries a hash of both, so a changed source or a different data dir never runs a stale build;
// it is compiled to a temporary name and renamed, so concurrent callers never run a half-written
// binary. Executables stay owner-only (0700), as every file in the data dir.

import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDirSync } from '../util/private-files.js';
import { hostSpawner, runProgram, type Spawner } from './spawn.js';

export interface NativeBuild {
  /** The C source file. */
  readonly source: string;
  /** Where the binary goes (made 0700 when missing). */
  readonly binDir: string;
  /** The binary's name before its hash suffix. */
  readonly name: string;
  /** String constants compiled in as `-DNAME="value"` (values are C-escaped here). */
  readonly defines?: Readonly<Record<string, string>>;
  readonly compilers?: readonly string[];
  readonly spawner?: Spawner;
}

export type NativeBuildOutcome =
  | { readonly ok: true; readonly file: string }
  | { readonly ok: false; readonly reason: string };

/** A C string literal for `value`: quotes, backslashes and control bytes escaped. */
export function cString(value: string): string {
  return `"${[...Buffer.from(value, 'utf8')].map((b) => (b === 0x22 || b === 0x5c ? `\\${String.fromCharCode(b)}`
    : b < 0x20 || b >= 0x7f ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b))).join('')}"`;
}

export async function buildNative(b: NativeBuild): Promise<NativeBuildOutcome> {
  let source: Buffer;
  try {
    source = readFileSync(b.source);
  } catch {
    return { ok: false, reason: `${b.source} not found` };
  }
  const defines = Object.entries(b.defines ?? {}).sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => `-D${k}=${cString(v)}`);
  const hash = createHash('sha256').update(source);
  for (const d of defines) hash.update('\0').update(d);
  const target = join(b.binDir, `${b.name}-${hash.digest('hex').slice(0, 12)}`);
  if (existsSync(target)) return { ok: true, file: target };
  ensurePrivateDirSync(b.binDir);
  const tmp = `${target}.${process.pid}.tmp`;
  const errors: string[] = [];
  for (const cc of b.compilers ?? ['cc', 'gcc']) {
    const r = await runProgram(b.spawner ?? hostSpawner, cc, ['-O2', ...defines, '-o', tmp, b.source],
      { timeoutMs: 60_000 });
    if (r.code === 0) {
      chmodSync(tmp, 0o700);
      renameSync(tmp, target);
      return { ok: true, file: target };
    }
    rmSync(tmp, { force: true });
    const why = r.startError ? r.startError.message : r.timedOut ? 'timed out'
      : `exit ${r.code ?? r.signal}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
    errors.push(`${cc}: ${why.slice(0, 200)}`);
  }
  return { ok: false, reason: `no working C compiler (${errors.join('; ')})` };
}
