import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('takes `rules compile --config` as the KubeProxyConfiguration, as kube-proxy --config', async () => {
    const dir = 'rules/01-clusterip/';
    const io = captureIO();
    const argv = ['rules', 'compile', '-f', `${dir}objects.yaml`, '--config', `${dir}config.yaml`,
      '--node-name', 'node-a', '--node-ip', '172.18.0.2', '--canonical'];
    expect(await main(argv, io)).toBe(0);
    expect(io.stdout).toBe(readFileSync(`${dir}iptables.golden`, 'utf8'));
  });

  it('reads flags from --config on other commands, naming an unknown key', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'kdp-cfg-'));
    try {
      writeFileSync(join(tmp, 'c.yaml'), 'output: json\n');
      const io = captureIO();
      expect(await main(['version', '--config', join(tmp, 'c.yaml')], io)).toBe(0);
      expect(JSON.parse(io.stdout)).toHaveProperty('kdp');
      writeFileSync(join(tmp, 'c.yaml'), 'kind: KubeProxyConfiguration\n');
      const bad = captureIO();
      expect(await main(['version', '--config', join(tmp, 'c.yaml')], bad)).toBe(2);
      expect(bad.stderr).toContain('config file: unknown key "kind"');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('help of a command that gives a common flag its own meaning', () => {
  it('kdp rules compile --help lists --config once, as the KubeProxyConfiguration', async () => {
    const io = captureIO();
    expect(await main(['rules', 'compile', '--help'], io)).toBe(0);
    const lines = io.stdout.split('\n');
    const at = lines.flatMap((l, i) => (/^\s+--config VALUE$/.test(l) ? [i] : []));
    expect(at).toHaveLength(1);
    expect(lines[at[0]! + 1]).toContain('KubeProxyConfiguration');
  });
});
