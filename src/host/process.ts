// Identifying processes safely: a pid alone can be reused, so kdp records pid + start time and
// only ever signals a process whose start time still matches.

import { readFileSync } from 'node:fs';

export interface ProcessRecord {
  readonly pid: number;
  /** Field 22 of /proc/PID/stat: start time in clock ticks since boot. */
  readonly startTicks: string;
  /** Signal its whole process group (it leads it): its helpers go with it. */
  readonly group?: boolean;
}

/** Fields 3… of /proc/PID/stat (state first), or undefined when the process is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces; fields after the closing paren are space-separated.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Start ticks of a live (non-zombie) process, or undefined. */
export function procStartTicks(pid: number): string | undefined {
  const fields = statFields(pid);
  return !fields || fields[0] === 'Z' ? undefined : fields[19];
}

/** Field 5 of /proc/PID/stat: the process group, or undefined when the process is gone. */
export function procGroup(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields ? Number(fields[2]) : undefined;
}

export function recordProcess(pid: number): ProcessRecord {
  return { pid, startTicks: procStartTicks(pid) ?? '' };
}

export function isAlive(rec: ProcessRecord): boolean {
  const t = procStartTicks(rec.pid);
  return t !== undefined && t === rec.startTicks;
}

/** Signals the process if it is still the recorded one; returns whether it was signalled. */
export function signalIfSame(rec: ProcessRecord, signal: NodeJS.Signals): boolean {
  if (!isAlive(rec)) return false;
  try {
    process.kill(rec.group ? -rec.pid : rec.pid, signal);
    return true;
  } catch {
    return false;
  }
}
