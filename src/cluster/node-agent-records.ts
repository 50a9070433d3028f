// Which `kdp node` / `kdp node join` processes run on a data dir, so `kdp down` can stop them
// also after a crash (a SIGKILLed `kdp up` leaves its joined nodes' processes running; one in
// the real host's namespace is no `ip netns pids` of any cluster namespace). Each such process
// records itself in `<data-dir>/nodes/<name>/agent.pid` (pid and start time, host/process.ts)
// from the moment it starts until it closes. `kdp down` stops every recorded process that is
// still the one recorded — its whole process group when it leads one (a `kdp node` started from
// a shell: its helpers go with it), else the process alone (never the group of whoever spawned
// it) — then removes the records and the underlay-address claims (underlay-claims.ts) they leave.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isAlive, procGroup, recordProcess, type ProcessRecord } from '../host/process.js';
import { PRIVATE_DIR_MODE, writePrivateFileSync } from '../util/private-files.js';
import { claimFile, claimLock } from './underlay-claims.js';

const RECORD = 'agent.pid';

function recordFile(dataDir: string, node: string): string {
  return join(dataDir, 'nodes', node, RECORD);
}

/** Records this process as node `node`'s agent; returns the release (the record goes, if still ours). */
export function recordNodeAgent(dataDir: string, node: string, pid = process.pid): () => void {
  const file = recordFile(dataDir, node);
  const rec = recordProcess(pid);
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  writePrivateFileSync(file, `${rec.pid} ${rec.startTicks}\n`);
  return () => {
    const now = readRecord(file);
    if (now && now.pid === rec.pid && now.startTicks === rec.startTicks) rmSync(file, { force: true });
  };
}

function readRecord(file: string): ProcessRecord | undefined {
  try {
    const [pid, startTicks] = readFileSync(file, 'utf8').trim().split(/\s+/);
    return Number(pid) > 0 && startTicks ? { pid: Number(pid), startTicks } : undefined;
  } catch {
    return undefined;
  }
}

/** A recorded node process still running, with what to signal: its group when it leads one. */
export interface NodeAgentProcess extends ProcessRecord {
  readonly node: string;
  /** Whether it leads its process group (signalled as the group). */
  readonly group: boolean;
}

/** The node directories of a data dir (`nodes/<name>/`). */
export function nodeDirs(dataDir: string): string[] {
  const dir = join(dataDir, 'nodes');
  return existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()
    && !e.name.startsWith('.')).map((e) => e.name) : [];
}

/** The recorded node processes of a data dir that still run (start time matching). */
export function liveNodeAgents(dataDir: string): NodeAgentProcess[] {
  const out: NodeAgentProcess[] = [];
  for (const node of nodeDirs(dataDir)) {
    const rec = readRecord(recordFile(dataDir, node));
    if (!rec || rec.pid === process.pid || !isAlive(rec)) continue;
    out.push({ ...rec, node, group: procGroup(rec.pid) === rec.pid });
  }
  return out;
}

/** Removes every node record and underlay claim of a data dir (its processes are gone). */
export function removeNodeAgentRecords(dataDir: string): void {
  for (const node of nodeDirs(dataDir)) {
    rmSync(recordFile(dataDir, node), { force: true });
    rmSync(claimFile(dataDir, node), { force: true });
  }
  rmSync(claimLock(dataDir), { recursive: true, force: true });
}
