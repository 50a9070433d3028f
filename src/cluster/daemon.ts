// Running `kdp up` in the background (`-d`) and stopping it again (`kdp down`). The pid file
// records pid + start time, so a stale file after a reboot or a reused pid never makes us signal
// a process that is not ours.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { openPrivateSync, writePrivateFileSync } from '../util/private-files.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { procStartTicks, type ProcessRecord } from '../host/process.js';

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
    const child = spawn(process.execPath, [...nodeFlags, script, ...args], {
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

/** SIGTERM, wait up to `graceMs`, then SIGKILL. Resolves true if a process was stopped. */
export async function stopPid(pidFile: string, graceMs = 10_000): Promise<boolean> {
  const pid = livePid(pidFile);
  if (pid === undefined) {
    rmSync(pidFile, { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && livePid(pidFile) !== undefined) await sleep(100);
  if (livePid(pidFile) !== undefined) process.kill(pid, 'SIGKILL');
  while (livePid(pidFile) !== undefined) await sleep(50);
  rmSync(pidFile, { force: true });
  return true;
}
