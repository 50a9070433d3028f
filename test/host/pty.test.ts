// ptyProcess: argv on a real terminal, size and resizes, input, exit codes; no shell involved.

import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ptyProcess } from '../../src/host/pty.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm' };

/** Collects output until `pattern` appears (or the stream ends). */
function until(out: Readable, pattern: RegExp): Promise<string> {
  let text = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; got ${JSON.stringify(text)}`)), 10_000);
    const check = () => { if (pattern.test(text)) { clearTimeout(t); out.off('data', on); resolve(text); } };
    const on = (d: Buffer) => { text += d; check(); };
    out.on('data', on);
    out.once('end', () => { clearTimeout(t); resolve(text); });
  });
}

describe('ptyProcess', () => {
  it('runs argv on a terminal of the asked size and reports the exit code', async () => {
    const p = await ptyProcess(['sh', '-c', 'stty size; test -t 0 && test -t 1 && echo tty; exit 3'], false, env,
      { cols: 120, rows: 33 });
    const text = await until(p.stdout, /tty/);
    expect(text).toContain('33 120');
    expect(await p.exited).toBe(3);
  });

  it('with awaitSizeMs the program starts at the first size the client sends, however late within it', async () => {
    const p = await ptyProcess(['sh', '-c', 'stty size'], false, env, { awaitSizeMs: 3000 });
    await new Promise((r) => setTimeout(r, 200)); // the client's size arrives after the start
    p.resize(90, 27);
    expect(await until(p.stdout, /\d+ \d+/)).toContain('27 90');
    expect(await p.exited).toBe(0);
    // No size within the wait: the default 80x24.
    const q = await ptyProcess(['sh', '-c', 'stty size'], false, env, { awaitSizeMs: 100 });
    expect(await until(q.stdout, /\d+ \d+/)).toContain('24 80');
  });

  it('types stdin into the terminal and resizes it while running', async () => {
    const p = await ptyProcess(['sh', '-c', 'read a; stty size; read b; echo "b=$b"'], true, env);
    p.resize(100, 40);
    p.stdin!.write('x\n');
    expect(await until(p.stdout, /40 100/)).toContain('40 100');
    p.stdin!.write('hello\n');
    // The terminal echoes the typed line and the program prints it.
    expect(await until(p.stdout, /b=hello/)).toContain('b=hello');
    expect(await p.exited).toBe(0);
  });

  it('passes argv as given (no shell) and maps signals and missing programs', async () => {
    const literal = await ptyProcess(['echo', '$(id) ; `id` | x'], false, env);
    expect(await until(literal.stdout, /\| x/)).toContain('$(id) ; `id` | x');
    expect(await literal.exited).toBe(0);

    const killed = await ptyProcess(['sh', '-c', 'kill -TERM $$'], false, env);
    expect(await killed.exited).toBe(143);

    const missing = await ptyProcess(['kdp-no-such-program'], false, env);
    expect(await until(missing.stdout, /kdp-no-such-program/)).toMatch(/exec: "kdp-no-such-program"/);
    expect(await missing.exited).toBe(127);
  });

  it('close() ends the program on the terminal', async () => {
    const p = await ptyProcess(['sleep', '30'], true, env);
    const t0 = Date.now();
    p.close();
    expect(await p.exited).toBe(137);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
