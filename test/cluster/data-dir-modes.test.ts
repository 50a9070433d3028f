// A data directory holds Secret values (WAL, snapshots), keys and tokens: it is 0700 and every
// file kdp writes in it 0600 whatever the umask, and an older, wider one is tightened at start.
import { spawnSync } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/apiserver/start.js';
import { writeClusterInfo, type ClusterInfo } from '../../src/cluster/cluster-file.js';
import { writePidFile } from '../../src/cluster/daemon.js';
import { dataDirPaths, ensureDataDir } from '../../src/cluster/data-dir.js';
import { HostStateFile } from '../../src/host/state.js';
import { buildEmbeddedStore } from '../../src/store/index.js';
import { canUseNetns } from '../helpers/root.js';

let base: string;
let savedUmask: number;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'kdp-modes-'));
  savedUmask = process.umask();
});
afterEach(async () => {
  process.umask(savedUmask);
  await rm(base, { recursive: true, force: true });
});

/** `relative path -> mode` of everything under `root` (root itself as '.'). */
async function modes(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (p: string, rel: string) => {
    const st = await stat(p);
    out[rel] = (st.mode & 0o777).toString(8);
    if (!st.isDirectory()) return;
    for (const n of await readdir(p)) await walk(join(p, n), rel === '.' ? n : `${rel}/${n}`);
  };
  await walk(root, '.');
  return out;
}

function wider(m: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== '600' && v !== '700'));
}

describe.each([0o000, 0o022])('under umask %o', (umask) => {
  it('every file kdp writes in a new data directory is 0600, every directory 0700',
    async () => {
      process.umask(umask);
      const paths = dataDirPaths(join(base, 'data'));
      const log: string[] = [];
      await ensureDataDir(paths.root, (l) => log.push(l));
      const api = await startApiServer({ dataDir: paths.root, port: 0,
        store: { log: (l) => log.push(l) } });
      try {
        await api.store.create('/registry/secrets/default/s', '{"data":{"k":"c2VjcmV0"}}');
        writePidFile(paths.pidFile);
        writeClusterInfo(paths, { url: api.url } as unknown as ClusterInfo);
        const host = new HostStateFile(paths.hostState, 'kdp-test');
        await host.addNetns('kdp-test-n1');
      } finally {
        await api.close();
      }
      // A store with a snapshot (and the kept-aside copy of a torn tail) in its own directory.
      const storeDir = join(paths.root, 'extra-store');
      const s = await buildEmbeddedStore({ dataDir: storeDir, snapshotEvery: 2,
        log: (l) => log.push(l) });
      for (let i = 0; i < 5; i++) await s.create(`/k/${i}`, 'v');
      await s.close();

      const m = await modes(paths.root);
      expect(Object.keys(m)).toEqual(expect.arrayContaining([
        'pki', 'pki/ca.key', 'host-state.json', 'kdp.pid', 'cluster.json',
        'wal-0000000000000001.log',
      ]));
      expect(Object.keys(m).some((k) => /^extra-store\/snap-.*\.snap$/.test(k))).toBe(true);
      expect(wider(m)).toEqual({});
      expect(m['.']).toBe('700');
      expect(log).toEqual([]); // nothing had to be tightened
    });

  it('the store LOCK file and a kept-aside damaged segment are 0600', async () => {
    process.umask(umask);
    const dir = join(base, 'store');
    const s = await buildEmbeddedStore({ dataDir: dir, log: () => {} });
    await s.create('/k/a', 'v');
    expect((await modes(dir)).LOCK).toBe('600');
    await s.close();
    // Cut into the last frame: a torn final write, kept aside before the cut.
    const seg = join(dir, 'wal-0000000000000001.log');
    const { truncate } = await import('node:fs/promises');
    await truncate(seg, (await stat(seg)).size - 20);
    await (await buildEmbeddedStore({ dataDir: dir, log: () => {} })).close();
    const m = await modes(dir);
    expect(Object.keys(m).filter((k) => k.includes('.damaged-'))).toHaveLength(1);
    expect(wider(m)).toEqual({});
  });
});

describe('an existing data directory with wider modes', () => {
  it('is tightened at start, and a log line says so (once)', async () => {
    process.umask(0o022);
    const root = join(base, 'old');
    await mkdir(join(root, 'pki'), { recursive: true, mode: 0o755 });
    await mkdir(join(root, 'nodes', 'n1', 'rules'), { recursive: true, mode: 0o755 });
    await chmod(root, 0o755);
    await writeFile(join(root, 'pki', 'ca.key'), 'key', { mode: 0o644 });
    await writeFile(join(root, 'host-state.json'), '{}', { mode: 0o666 });
    await writeFile(join(root, 'nodes', 'n1', 'rules', '000001-ipv4.json'), '{}', { mode: 0o644 });
    await writeFile(join(root, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    const log: string[] = [];
    await ensureDataDir(root, (l) => log.push(l));
    expect(log).toHaveLength(1);
    expect(log[0]).toContain(`data dir ${root}: removed group/other access from 9 file(s)`);
    expect(await modes(root)).toEqual({
      '.': '700', pki: '700', 'pki/ca.key': '600', 'host-state.json': '600', nodes: '700',
      'nodes/n1': '700', 'nodes/n1/rules': '700', 'nodes/n1/rules/000001-ipv4.json': '600',
      tool: '700', // an executable stays executable, for its owner only
    });
    await ensureDataDir(root, (l) => log.push(l));
    expect(log).toHaveLength(1);
  });

  it('the store tightens its own files when opened alone, and logs it', async () => {
    process.umask(0o022);
    const dir = join(base, 'store');
    const s = await buildEmbeddedStore({ dataDir: dir, log: () => {} });
    await s.create('/k/a', 'v');
    await s.close();
    await chmod(dir, 0o755);
    await chmod(join(dir, 'wal-0000000000000001.log'), 0o644);
    const log: string[] = [];
    const r = await buildEmbeddedStore({ dataDir: dir, log: (l) => log.push(l) });
    await r.close();
    expect(log).toEqual([`store: ${dir}: removed group/other access from 2 store file(s) ` +
      'and directories (data directories are 0700, their files 0600)']);
    expect(wider(await modes(dir))).toEqual({});
  });

  it('a file of another user is reported, not fatal (the start goes on)', async (ctx) => {
    if (!canUseNetns([])) return ctx.skip(); // root, to make another user's file (CI: must run)
    const nobody = 65534;
    const root = join(base, 'shared');
    await mkdir(root, { mode: 0o755 });
    await chmod(base, 0o755); // let the other user reach it
    await writeFile(join(root, 'root-owned.json'), '{}', { mode: 0o644 });
    await chown(root, nobody, nobody);
    const probe = ['bin/run-ts.js', 'test/cluster/data-dir-probe.ts', root];
    const r = spawnSync(process.execPath, probe, { uid: nobody, gid: nobody, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      `data dir ${root}: removed group/other access from 1 file(s) and directories (.); ` +
        'it holds secrets',
      `data dir ${root}: WARNING: 1 file(s) and directories belong to another user and stay ` +
        'readable by others (root-owned.json); chown or remove them',
      'ok', '',
    ]);
    expect((await modes(root))['root-owned.json']).toBe('644');
  });
});
