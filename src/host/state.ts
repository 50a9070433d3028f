// The host state file: every kernel object and process kdp makes is recorded *before* it is made,
// so `kdp down` can remove it even if kdp crashed half-way. Writes are atomic (temp + rename).

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ProcessRecord } from './process.js';

export interface HostState {
  /** Every namespace kdp created for this cluster starts with this (e.g. `kdp-3f9a`). */
  readonly prefix: string;
  readonly netns: string[];
  readonly processes: ProcessRecord[];
}

export class HostStateFile {
  private state: HostState;

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

  addNetns(name: string): void {
    if (!this.state.netns.includes(name)) this.state.netns.push(name);
    this.flush();
  }

  removeNetns(name: string): void {
    this.state.netns.splice(this.state.netns.indexOf(name) >>> 0, 1);
    this.flush();
  }

  addProcess(rec: ProcessRecord): void {
    this.state.processes.push(rec);
    this.flush();
  }

  removeProcess(pid: number): void {
    const i = this.state.processes.findIndex((p) => p.pid === pid);
    if (i >= 0) this.state.processes.splice(i, 1);
    this.flush();
  }

  private flush(): void {
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.state, null, 1)}\n`);
    renameSync(tmp, this.path);
  }
}

/** Reads a state file without taking ownership (for cleanup). */
export function readHostState(path: string): HostState | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as HostState) : undefined;
}
