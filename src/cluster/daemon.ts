// Running `kdp up` in the background (`-d`) and stopping it again (`kdp down`). The pid file
// records pid + start time, so a stale file after a reboot or a reused pid never makes us signal
// a process that is not ours.

import { closeSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { openPrivateSync, writePrivateFileSync } from '../util/private-files.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostSpawner } from '../host/spawn.js';
import {
  isAlive, procStartTicks, recordProcess, signalIfSame, type ProcessRecord,
} from '../host/process.js';

export function writePidFile(path: string, pid = process.pid): void {
  const rec: ProcessRecord = { pid, startTicks: procStartTicks(pid) ?? '' };
  writePrivateFileSync(path, `${JSON.stringify(rec)}\n`);
}

/** The pid recorded in `path` if that exact process is still alive; otherwise undefined. */
export function livePid(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  let rec: ProcessRecord;
  try {
    rec = JSON.parse(readFileSync(path, 'utf8')) as ProcessRecord;
  } catch {
    return undefined;
  }
  const ticks = procStartTicks(rec.pid);
  return ticks !== undefined && ticks === rec.startTicks ? rec.pid : undefined;
}

/**
 * Starts `node <nodeFlags> <script> <args>` detached, output appended to `logFile`; returns its
 * pid.
 */
export function spawnDetached(script: string, args: readonly string[], logFile: string,
  nodeFlags: readonly string[] = []): number {
  const fd = openPrivateSync(logFile, 'a');
  try {
    const child = hostSpawner.spawn(process.execPath, [...nodeFlags, script, ...args], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, KDP_DETACHED: '1' },
    });
    child.unref();
    if (child.pid === undefined) throw new Error('spawn failed');
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/**
 * SIGTERM, wait up to `graceMs`, then SIGKILL, and wait for the end of the process itself (not
 * of its pid file: a stopping kdp removes that early). `stopped`: a process was running;
 * `survivor`: its pid when even SIGKILL did not end it within 5 s (it is then said, not hidden).
 */
export async function stopPid(pidFile: string, graceMs = 10_000):
  Promise<{ stopped: boolean; survivor?: number }> {
  const pid = livePid(pidFile);
  if (pid === undefined) {
    rmSync(pidFile, { force: true });
    return { stopped: false };
  }
  const rec = recordProcess(pid);
  signalIfSame(rec, 'SIGTERM');
  const until = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && isAlive(rec)) await sleep(50);
  };
  await until(graceMs);
  if (isAlive(rec)) {
    signalIfSame(rec, 'SIGKILL');
    await until(5000);
  }
  rmSync(pidFile, { force: true });
  return isAlive(rec) ? { stopped: true, survivor: pid } : { stopped: true };
}
