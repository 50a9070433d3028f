// `kdp netns` / `kdp sh` refuse clearly where there are no namespaces, and need a target.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeClusterInfo } from '../../src/cluster/cluster-file.js';
import { writePidFile } from '../../src/cluster/daemon.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { kdp } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'kdp-netns-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kdp netns and kdp sh', () => {
  it('say a virtual cluster has no namespaces (exit 2), and ask for a target', async () => {
    const paths = dataDirPaths(dir);
    writeClusterInfo(paths, {
      url: 'https://127.0.0.1:1', pid: process.pid, mode: 'virtual', proxyMode: 'iptables',
      nodes: [{ name: 'n1', ip: '172.18.0.2' }], kubeconfig: join(dir, 'kubeconfig'),
      startedAt: new Date().toISOString(), timeScale: 1,
    });
    writePidFile(paths.pidFile);
    for (const cmd of ['netns', 'sh']) {
      const r = await kdp(cmd, '--data-dir', dir, 'n1');
      expect(r.code).toBe(2);
      expect(r.err).toContain('runs in virtual mode: it has no network namespaces (`sudo kdp up` makes them)');
    }
    const none = await kdp('netns', '--data-dir', dir);
    expect(none.code).toBe(2);
    expect(none.err).toContain('name a pod or a node');
  });
});
