import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHostExec } from '../../src/host/exec.js';
import { deleteNetns, listNetns } from '../../src/host/netns.js';
import { buildSandboxNetns } from '../../src/host/netns.js';
import { canUseNetns, testNetnsName } from '../helpers/root.js';

describe.runIf(canUseNetns(['ip', 'stdbuf']))('pod sandbox namespaces through ip sessions (root)', () => {
  const exec = buildHostExec();
  const made: string[] = [];
  const spawned: number[] = [];
  const sandboxes = buildSandboxNetns({ onSpawn: (pid) => spawned.push(pid) });
  const fresh = () => {
    const n = testNetnsName();
    made.push(n);
    return n;
  };

  afterAll(async () => {
    sandboxes.close();
    for (const n of made) await deleteNetns(exec, n);
  });

  it('makes namespaces the host lists, ten at once, from at most two ip processes', async () => {
    const names = Array.from({ length: 10 }, fresh);
    await Promise.all(names.map((n) => sandboxes.ensure(n)));
    const listed = await listNetns(exec);
    for (const n of names) expect(listed).toContain(n);
    // A usable namespace of its own: ip can address it and it has only a loopback.
    const links = await exec.run('ip', ['-n', names[0]!, '-o', 'link', 'show']);
    expect(links.stdout.trim().split('\n')).toHaveLength(1);
    expect(spawned.length).toBeLessThanOrEqual(2);
  });

  it('is idempotent, and a namespace made by someone else meanwhile is no error', async () => {
    const n = fresh();
    await exec.run('ip', ['netns', 'add', n]);
    await sandboxes.ensure(n);
    await sandboxes.ensure(n);
    expect(existsSync(`/run/netns/${n}`)).toBe(true);
  });

  it('removes a namespace; removing one that is gone is no error, and the session goes on', async () => {
    const n = fresh();
    await sandboxes.ensure(n);
    await sandboxes.remove(n);
    expect(await listNetns(exec)).not.toContain(n);
    await sandboxes.remove(n);
    const next = fresh();
    await sandboxes.ensure(next);
    expect(existsSync(`/run/netns/${next}`)).toBe(true);
  });

  it('refuses a name that could split a batch line, before running anything', async () => {
    await expect(sandboxes.ensure('kdp-t-x\nnetns add evil')).rejects.toMatchObject({ code: 'KDP_INTERNAL' });
    await expect(sandboxes.remove('../x')).rejects.toMatchObject({ code: 'KDP_INTERNAL' });
    expect(existsSync('/run/netns/evil')).toBe(false);
  });
});
