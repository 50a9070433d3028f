// Gate for tests that need root and network namespaces. Elsewhere they skip with the reason;
// under CI=true (CI runs as root) a missing capability is a failure, never a skip.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where skips are noted for the run's one summary line (test/setup/global.ts reads it). */
export const SKIPS_FILE = 'kdp-skips.log';

function noteSkip(why: string): void {
  const file = /\/(test\/[^:)]+\.test\.ts)/.exec(new Error().stack ?? '')?.[1] ?? 'a test';
  try { appendFileSync(join(tmpdir(), SKIPS_FILE), `${file}\t${why}\n`); } catch { /* best effort */ }
}

function missing(tools: readonly string[]): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  for (const t of tools) {
    try {
      execFileSync('sh', ['-c', 'command -v "$1"', 'sh', t], { stdio: 'ignore' });
    } catch {
      return `needs ${t} installed`;
    }
  }
  return undefined;
}

/** Returns true when the test may run; false (skip) with a console note; throws under CI. */
export function canUseNetns(tools: readonly string[] = ['ip']): boolean {
  const why = missing(tools);
  if (why === undefined) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but the test cannot run: ${why}`);
  console.warn(`skipping netns test: ${why}`);
  noteSkip(why);
  return false;
}

/** A fresh, unique test namespace name (`kdp-t-xxxxxx`), never the host's. */
export function testNetnsName(): string {
  return `kdp-t-${randomBytes(3).toString('hex')}`;
}
