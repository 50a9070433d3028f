// Crash-safe teardown: stop recorded processes, kill anything still running inside our
// namespaces (`ip netns pids`), then delete the recorded namespaces and sweep for any other
// namespace carrying this cluster's prefix. Idempotent; touches nothing without the prefix.

import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostExec } from './exec.js';
import { deleteNetns, listNetns } from './netns.js';
import { isAlive, recordProcess, signalIfSame, type ProcessRecord } from './process.js';
import { readHostState } from './state.js';

export interface CleanupReport {
  readonly netnsDeleted: string[];
  readonly processesStopped: number;
  /** Pids still alive after SIGKILL (and 2 s): said by `kdp down`, never hidden. */
  readonly survivors: number[];
}

export async function cleanupHost(exec: HostExec, stateFile: string, prefix: string, graceMs = 2000): Promise<CleanupReport> {
  const state = readHostState(stateFile);
  const present = await listNetns(exec);
  const ours = present.filter((n) => n === prefix || n.startsWith(`${prefix}-`) || state?.netns.includes(n));
  const procs: ProcessRecord[] = [...(state?.processes ?? [])];
  for (const ns of ours) {
    const { stdout } = await exec.run('ip', ['netns', 'pids', ns]).catch(() => ({ stdout: '' }));
    for (const pid of stdout.split('\n').map(Number).filter((p) => p > 0)) procs.push(recordProcess(pid));
  }
  const { stopped, survivors } = await stopProcesses(procs, graceMs);
  for (const ns of ours) await deleteNetns(exec, ns);
  rmSync(stateFile, { force: true });
  return { netnsDeleted: ours, processesStopped: stopped, survivors };
}

/** SIGTERM, `graceMs` to end, then SIGKILL; each only while it is still the recorded process. */
export async function stopProcesses(procs: readonly ProcessRecord[], graceMs: number):
  Promise<{ stopped: number; survivors: number[] }> {
  const signalled = procs.filter((p) => signalIfSame(p, 'SIGTERM'));
  const wait = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && signalled.some(isAlive)) await sleep(50);
  };
  await wait(graceMs);
  for (const p of signalled) signalIfSame(p, 'SIGKILL');
  await wait(2000);
  return { stopped: signalled.length, survivors: signalled.filter(isAlive).map((p) => p.pid) };
}
