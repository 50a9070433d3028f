import { describe, expect, it } from 'vitest';
import { buildHelperLauncher, type Workload } from '../../src/kubelet/launcher.js';

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
});
