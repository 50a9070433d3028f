// `--repair` reaches the store from every command that opens it, and recovery's log lines reach
// the command's stderr.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';
import { buildEmbeddedStore } from '../../src/store/index.js';
import { frames, lastSegment } from './wal-files.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kdp-repair-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** Runs `kdp <argv>` in-process; a long-running command is asked to stop at once. */
async function kdpUntilStarted(...argv: string[]) {
  const io = { stdout: '', stderr: '', env: {}, isTTY: false,
    interrupted: Promise.resolve(),
    out(t: string) { io.stdout += t; }, err(t: string) { io.stderr += t; } };
  const code = await main(argv, io satisfies CliIO);
  return { code, out: io.stdout, err: io.stderr };
}

/** A data directory whose WAL has a flipped byte in its first record (two writes after it). */
async function damagedDataDir(): Promise<string> {
  const s = await buildEmbeddedStore({ dataDir: dir });
  for (const k of ['a', 'b', 'c']) await s.create(`/registry/configmaps/default/${k}`, '{}');
  await s.close();
  const seg = await lastSegment(dir);
  const bytes = await readFile(seg);
  bytes[(await frames(seg))[0]!.offset + 20] ^= 0x01;
  await writeFile(seg, bytes, { mode: 0o600 });
  return seg;
}

describe('--repair', () => {
  it('is declared by every command that opens the store', async () => {
    for (const cmd of ['up', 'apiserver']) {
      const help = await kdpUntilStarted(cmd, '--help');
      expect(help.out + help.err, cmd).toContain('--repair');
    }
  });

  it('kdp apiserver refuses a damaged WAL, and starts with --repair (logged, kept aside)',
    async () => {
      const seg = await damagedDataDir();
      const common = ['apiserver', '--data-dir', dir, '--port', '0', '--insecure-http'];
      const refused = await kdpUntilStarted(...common);
      expect(refused.code).not.toBe(0);
      expect(refused.err).toContain(`${seg}: corrupt record at offset 0`);
      expect(refused.err).toContain('Run with --repair');
      expect((await readdir(dir)).filter((n) => n.includes('.damaged-'))).toEqual([]);

      const repaired = await kdpUntilStarted(...common, '--repair');
      expect(repaired.err).toContain('kdp: store: wal-');
      expect(repaired.err).toContain('the bad record and 2 complete records (revisions 3-4)');
      expect(repaired.code).toBe(0);
      expect((await readdir(dir)).filter((n) => n.includes('.damaged-'))).toHaveLength(1);

      const again = await kdpUntilStarted(...common); // repaired for good: no flag needed
      expect(again.code).toBe(0);
      expect(again.err).not.toContain('store:');
    });
});
