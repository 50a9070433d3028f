import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { buildHelperLauncher, type Workload } from '../../src/host/launcher.js';

const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));
const LAUNCHER = fileURLToPath(new URL('../../src/host/launcher.ts', import.meta.url));

const exited = (w: Workload) => new Promise<[number | null, string | null]>((r) =>
  w.once('exit', (code: number | null, sig: string | null) => r([code, sig])));

describe('workload launcher helper', () => {
  it('starts a process with its env, relays its output and pid, and reports its exit code', async () => {
    const spawned: number[] = [];
    const l = buildHelperLauncher({ onSpawn: (pid) => spawned.push(pid) });
    try {
      const w = l.launch({ file: 'sh', args: ['-c', 'echo "hi $X"; echo err >&2; exit 3'], env: { X: 'there' } });
      let out = '';
      w.on('data', (d: string) => { out += d; });
      const pid = new Promise<number>((r) => w.once('spawn', r));
      expect(await exited(w)).toEqual([3, null]);
      expect(await pid).toBeGreaterThan(0);
      expect(out).toContain('hi there\n');
      expect(out).toContain('err\n');
      expect(spawned).toHaveLength(1); // the helper itself
    } finally {
      await l.close();
    }
  });

  it('kills a running process with the signal asked for', async () => {
    const l = buildHelperLauncher();
    try {
      const w = l.launch({ file: 'sleep', args: ['30'], env: {} });
      await new Promise((r) => w.once('spawn', r));
      const done = exited(w);
      w.kill('SIGTERM');
      expect(await done).toEqual([null, 'SIGTERM']);
      expect(w.signalCode).toBe('SIGTERM');
    } finally {
      await l.close();
    }
  });

  it('reports a program that cannot start as exited', async () => {
    const l = buildHelperLauncher();
    try {
      const w = l.launch({ file: 'kdp-no-such-program', args: [], env: {} });
      const [code] = await exited(w);
      expect(code).not.toBe(0);
    } finally {
      await l.close();
    }
  });

  it('spreads a burst over its helpers in turn, and close ends all of them', async () => {
    const spawned: number[] = [];
    const exitedHelpers: number[] = [];
    const l = buildHelperLauncher({
      helpers: 2, onSpawn: (pid) => spawned.push(pid), onExit: (pid) => exitedHelpers.push(pid),
    });
    const ws = Array.from({ length: 4 }, (_, i) => l.launch({ file: 'sh', args: ['-c', `exit ${i}`], env: {} }));
    expect((await Promise.all(ws.map(exited))).map(([code]) => code)).toEqual([0, 1, 2, 3]);
    expect(new Set(spawned).size).toBe(2);
    await l.close();
    expect(exitedHelpers.sort()).toEqual([...spawned].sort());
  });

  it('close keeps the caller alive until its helper has gone, with nothing else pending', async () => {
    // Once its workloads have exited a helper no longer holds the caller's event loop; close()
    // must hold it again, or a caller with nothing else to do ends in the middle of its cleanup.
    const dir = mkdtempSync(join(tmpdir(), 'kdp-launcher-'));
    try {
      const script = join(dir, 'close.mts');
      writeFileSync(script, [
        `import { buildHelperLauncher } from ${JSON.stringify(LAUNCHER)};`,
        'const l = buildHelperLauncher();',
        "const w = l.launch({ file: 'true', args: [], env: {} });",
        "await new Promise((r) => w.once('exit', r));",
        'await l.close();',
        "console.log('closed');",
      ].join('\n'));
      const { stdout } = await promisify(execFile)(process.execPath, [RUN_TS, script], { timeout: 20_000 });
      expect(stdout.trim()).toBe('closed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
