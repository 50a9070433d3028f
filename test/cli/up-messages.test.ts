// What `kdp up` tells the user: hints that work when pasted, and a clear error for a busy port.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readyMessage, type ReadyInfo } from '../../src/cli/commands/up.js';
import { kdp } from '../helpers/cli.js';

const INFO: ReadyInfo = {
  url: 'https://127.0.0.1:6443', kubeconfig: '/d/kubeconfig', mode: 'netns', proxyMode: 'nftables',
  timeScale: 10, serviceCIDRs: ['10.96.0.0/12'],
  nodes: [{ name: 'n1', ip: '172.18.0.2' }] as ReadyInfo['nodes'],
};

const dirs: string[] = [];
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('kdp up ready message', () => {
  it('says npx kdp when no kdp is on PATH, and names the data dir that is not the default', () => {
    const m = readyMessage(INFO, '/d', { detached: false, env: { PATH: '/nonexistent' } });
    expect(m).toContain('kdp cluster ready at https://127.0.0.1:6443 (netns mode, kube-proxy nftables, time scale 10)');
    expect(m).toContain('  npx kdp rules --data-dir /d --node n1');
    expect(m).toContain('  npx kdp trace --data-dir /d n1 10.96.0.1:443');
    expect(m).toContain('Stop with Ctrl-C (or `npx kdp down --data-dir /d`).');
  });

  it('says kdp when one is on PATH, leaves out the default data dir, and -d does not say Ctrl-C', () => {
    const bin = mkdtempSync(join(tmpdir(), 'kdp-path-'));
    dirs.push(bin);
    writeFileSync(join(bin, 'kdp'), '#!/bin/sh\n');
    chmodSync(join(bin, 'kdp'), 0o755);
    const m = readyMessage({ ...INFO, timeScale: 1 }, join(homedir(), '.kdp'),
      { detached: true, env: { PATH: bin } });
    expect(m).toContain('(netns mode, kube-proxy nftables)');
    expect(m).toContain('  kdp rules --node n1');
    expect(m).not.toContain('--data-dir');
    expect(m).not.toContain('Ctrl-C');
    expect(m).toContain('Stop with `kdp down`.');
  });
});

describe('kdp up on a port in use', () => {
  it('exits 2 naming the address and the flag, with no stack trace', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'kdp-busy-'));
    dirs.push(dataDir);
    try {
      const r = await kdp('up', '--virtual', '--nodes', '1', '--port', String(port), '--data-dir', dataDir);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`error [KDP_CONFIG]: API server cannot listen on 127.0.0.1:${port}: ` +
        'the address is already in use');
      expect(r.err).toContain('--port');
      expect(r.err).not.toMatch(/\n\s+at /);
    } finally {
      srv.close();
    }
  }, 60_000);
});
