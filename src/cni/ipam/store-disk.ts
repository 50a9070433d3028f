// host-local's on-disk store, file for file: `<dataDir>/<network>/<ip>` holds
// `<containerID>\r\n<ifname>` (no newline), `last_reserved_ip.<rangeSetIndex>` the last reserved
// IP, and an empty `lock` file. host-local serialises with flock(2) on `lock`; Node has no flock,
// so kdp takes an exclusive `lock.owner` file (O_EXCL, holding the pid) next to it and breaks it
// when its owner is dead or it is older than `staleLockMs`. Scans skip both files.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseIP } from '../../api/net.js';
import { kdpError } from '../../errors.js';
import type { IpamStore } from './store.js';

export interface DiskStoreOptions {
  readonly dataDir?: string;
  readonly network: string;
  readonly staleLockMs?: number;
  /** How long `lock()` waits before failing. Default 10 s. */
  readonly lockTimeoutMs?: number;
}

const LAST_PREFIX = 'last_reserved_ip.';

export function buildDiskIpamStore(opts: DiskStoreOptions): IpamStore {
  const dir = path.join(opts.dataDir ?? '/var/lib/cni/networks', opts.network);
  const lockFile = path.join(dir, 'lock');
  const owner = path.join(dir, 'lock.owner');
  const stale = opts.staleLockMs ?? 30_000;
  const timeout = opts.lockTimeoutMs ?? 10_000;
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  let held = 0;

  function tryTake(): boolean {
    try {
      const fd = fs.openSync(owner, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      breakIfStale();
      return false;
    }
  }

  function breakIfStale(): void {
    try {
      const st = fs.statSync(owner);
      const pid = Number(fs.readFileSync(owner, 'utf8'));
      if (Date.now() - st.mtimeMs > stale || !isAlive(pid)) fs.rmSync(owner, { force: true });
    } catch { /* raced with the owner's unlock */ }
  }

  function entries(): Array<{ ip: string; id: string; ifname: string }> {
    const out: Array<{ ip: string; id: string; ifname: string }> = [];
    for (const name of fs.readdirSync(dir)) {
      if (name === 'lock' || name === 'lock.owner' || name.startsWith(LAST_PREFIX)) continue;
      if (!parseIP(name)) continue;
      let text: string;
      try { text = fs.readFileSync(path.join(dir, name), 'utf8'); } catch { continue; }
      const [id, ifname] = text.trim().split('\r\n');
      out.push({ ip: name, id: (id ?? '').trim(), ifname: ifname ?? '' });
    }
    return out;
  }

  // Old-format files hold just the id; they match any ifname, as host-local does.
  const matches = (e: { id: string; ifname: string }, id: string, ifname: string) =>
    e.id === id.trim() && (e.ifname === '' || e.ifname === ifname);

  return {
    lock() {
      if (held++ > 0) return;
      // Upstream's go-filemutex creates it 0750; empty, but kdp's data-dir files are all 0600.
      if (!fs.existsSync(lockFile)) fs.writeFileSync(lockFile, '', { mode: 0o600 });
      const deadline = Date.now() + timeout;
      while (!tryTake()) {
        if (Date.now() > deadline) {
          held = 0;
          throw kdpError('KDP_TIMEOUT', `timed out waiting for IPAM lock ${lockFile}`);
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    },
    unlock() {
      if (held === 0 || --held > 0) return;
      fs.rmSync(owner, { force: true });
    },
    reserve(id, ifname, ip, rangeId) {
      let fd: number;
      try {
        fd = fs.openSync(path.join(dir, ip), 'wx', 0o600);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw e;
      }
      try { fs.writeSync(fd, `${id.trim()}\r\n${ifname}`); } finally { fs.closeSync(fd); }
      fs.writeFileSync(path.join(dir, LAST_PREFIX + rangeId), ip, { mode: 0o600 });
      return true;
    },
    lastReservedIP(rangeId) {
      try {
        const s = fs.readFileSync(path.join(dir, LAST_PREFIX + rangeId), 'utf8').trim();
        return parseIP(s) ? s : undefined;
      } catch {
        return undefined;
      }
    },
    releaseByID(id, ifname) {
      const out: string[] = [];
      for (const e of entries()) {
        if (!matches(e, id, ifname)) continue;
        fs.rmSync(path.join(dir, e.ip), { force: true });
        out.push(e.ip);
      }
      return out;
    },
    getByID: (id, ifname) => entries().filter((e) => matches(e, id, ifname)).map((e) => e.ip),
    list: entries,
  };
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try { process.kill(pid, 0); return true; } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
