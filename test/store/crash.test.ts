import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEmbeddedStore } from '../../src/store/index.js';
import { tempDir } from './backends.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** Runs the writer child until it reported `target` acks, then SIGKILLs it. */
function runAndKill(target: number): Promise<Map<string, { kind: string; rev: number }>> {
  const child = spawn(process.execPath, ['bin/run-ts.js', 'test/store/crash-writer.ts', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const acked = new Map<string, { kind: string; rev: number }>();
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [kind, key, rev] = line.split(' ');
      if (kind !== 'acked' && kind !== 'updated') return;
      acked.set(key!, { kind: kind!, rev: Number(rev) });
      if (acked.size === target) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`writer exited early: code ${code}`));
    });
  });
}

describe('embedded store crash safety', () => {
  it('every write a SIGKILLed process saw acknowledged is present after reopen', async () => {
    const acked = await runAndKill(1500);
    expect(acked.size).toBeGreaterThanOrEqual(1500);
    const s = await buildEmbeddedStore({ dataDir: dir });
    try {
      for (const [key, { kind, rev }] of acked) {
        const kv = await s.get(key);
        expect(kv, key).toBeDefined();
        expect(kv!.modRevision).toBeGreaterThanOrEqual(rev);
        if (kind === 'updated') expect(JSON.parse(kv!.value).updated).toBe(true);
      }
      // Revisions stay dense: one per acknowledged or later write, no gaps after replay.
      const all = (await s.list('/registry/pods/')).items;
      const newest = Math.max(...all.map((i) => i.modRevision));
      expect(s.currentRevision()).toBeGreaterThanOrEqual(newest);
      await s.create('/registry/pods/after/crash', '{}');
    } finally {
      await s.close();
    }
  });
});
