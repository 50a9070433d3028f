import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureIO } from '../helpers/cli.js';

describe('kdp CLI', () => {
  it('prints the command list for --help and exits 0', async () => {
    const io = captureIO();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stdout).toContain('kdp version');
  });

  it('rejects an unknown command with exit code 2', async () => {
    const io = captureIO();
    expect(await main(['no-such-command'], io)).toBe(2);
    expect(io.stderr).toContain('unknown command: no-such-command');
  });

  it('names the flag in the error for an unknown flag', async () => {
    const io = captureIO();
    expect(await main(['version', '--bogus'], io)).toBe(2);
    expect(io.stderr).toMatch(/KDP_CONFIG.*bogus/);
  });

  it('prints json with -o json', async () => {
    const io = captureIO();
    expect(await main(['version', '-o', 'json'], io)).toBe(0);
    expect(JSON.parse(io.stdout)).toHaveProperty('kdp');
  });
});
