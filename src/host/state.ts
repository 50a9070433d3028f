// The host state file: every kernel object and process kdp makes is recorded so `kdp down` can
// remove it even if kdp crashed half-way. Contract: a namespace is on disk *before* it is made
// (callers await `addNetns` before creating it); a process is on disk right after it is started
// (its namespace is on disk already, and cleanup also kills what runs in recorded namespaces).
// Writes are atomic (temp + rename) and coalesced: the changes made while a write is in flight go
// out together in the next one, so 50 pods starting at once cost a few writes, not 150, and the
// writes run on libuv's pool, not on the event loop.

import { existsSync, readFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { writePrivateFile } from '../util/private-files.js';
import type { ProcessRecord } from './process.js';

export interface HostState {
  /** Every namespace kdp created for this cluster starts with this (e.g. `kdp-3f9a`). */
  readonly prefix: string;
  readonly netns: string[];
  readonly processes: ProcessRecord[];
}

export class HostStateFile {
  private state: HostState;
  /** The write that will carry the changes made since the last write started. */
  private queued?: Promise<void>;
  /** The tail of the write chain (never rejects). */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    prefix: string,
  ) {
    this.state = existsSync(path)
      ? (JSON.parse(readFileSync(path, 'utf8')) as HostState)
      : { prefix, netns: [], processes: [] };
  }

  get current(): HostState {
    return this.state;
  }

  /** Resolves once the namespace is on disk: await it before creating the namespace. */
  addNetns(name: string): Promise<void> {
    if (!this.state.netns.includes(name)) this.state.netns.push(name);
    return this.flush();
  }

  removeNetns(name: string): Promise<void> {
    const i = this.state.netns.indexOf(name);
    if (i >= 0) this.state.netns.splice(i, 1);
    return this.flush();
  }

  addProcess(rec: ProcessRecord): Promise<void> {
    this.state.processes.push(rec);
    return this.flush();
  }

  removeProcess(pid: number): Promise<void> {
    const i = this.state.processes.findIndex((p) => p.pid === pid);
    if (i >= 0) this.state.processes.splice(i, 1);
    return this.flush();
  }

  /** Resolves when every change made so far is on disk. */
  settled(): Promise<void> {
    return this.queued ?? this.chain;
  }

  /** Returns the write that will include the current state (one write for a burst of changes). */
  private flush(): Promise<void> {
    if (this.queued) return this.queued;
    const p = this.chain.then(() => {
      this.queued = undefined;
      return this.write();
    });
    this.queued = p;
    this.chain = p.catch(() => undefined);
    // Callers that do not await (process records) must not crash the process on a failed write;
    // those that await still see the error.
    p.catch(() => undefined);
    return p;
  }

  private async write(): Promise<void> {
    const text = `${JSON.stringify(this.state, null, 1)}\n`; // snapshot before the first await
    const tmp = `${this.path}.tmp`;
    await writePrivateFile(tmp, text);
    await rename(tmp, this.path);
  }
}

/** Reads a state file without taking ownership (for cleanup). */
export function readHostState(path: string): HostState | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as HostState) : undefined;
}
