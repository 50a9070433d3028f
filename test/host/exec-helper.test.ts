import { describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { buildHelperHostExec } from '../../src/host/exec-helper.js';

describe('host exec from a helper process', () => {
  it('runs programs with argument arrays and stdin, many at once, answering each its own', async () => {
    const exec = buildHelperHostExec();
    expect((await exec.run('cat', [], { input: 'a $(b) "c"' })).stdout).toBe('a $(b) "c"');
    const out = await Promise.all(Array.from({ length: 9 }, (_, i) => exec.run('echo', [`n${i}`, ';', 'x'])));
    expect(out.map((o) => o.stdout.trim())).toEqual(Array.from({ length: 9 }, (_, i) => `n${i} ; x`));
  });

  it('writes input given as pieces to stdin in order, directly and from a helper', async () => {
    const pieces = Array.from({ length: 3000 }, (_, i) => `add element ip t s { ${i} }\n`);
    for (const exec of [buildHostExec(), buildHelperHostExec()]) {
      expect((await exec.run('cat', [], { input: pieces })).stdout).toBe(pieces.join(''));
      expect((await exec.run('cat', [], { input: [] })).stdout).toBe('');
    }
  });

  it('fails like the direct exec: KDP_HOST_EXEC naming the command and its stderr', async () => {
    const exec = buildHelperHostExec();
    const err = await exec.run('sh', ['-c', 'echo nope >&2; exit 3']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'KDP_HOST_EXEC' });
    expect((err as Error).message).toMatch(/^sh -c .* failed \(3\): nope$/);
    const missing = await exec.run('kdp-no-such-program', []).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'KDP_HOST_EXEC' });
  });

  it('runs side by side from two helpers when runs overlap, one when they do not', async () => {
    const exec = buildHelperHostExec({ helpers: 2 });
    const parent = async () => (await exec.run('sh', ['-c', 'sleep 0.3; echo $PPID'])).stdout.trim();
    const overlapping = await Promise.all([parent(), parent()]);
    expect(new Set(overlapping).size).toBe(2);
    const one = await parent();
    const two = await parent();
    expect(one).toBe(two);
  });
});
