// Runs `kdp` commands in-process with captured output.

import type { CliIO } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';

export function captureIO(): CliIO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(t: string) { io.stdout += t; },
    err(t: string) { io.stderr += t; },
    env: {},
    isTTY: false,
    interrupted: new Promise<void>(() => {}),
  };
  return io;
}

export async function kdp(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO();
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}
