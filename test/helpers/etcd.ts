// A throwaway single-member etcd on loopback for tests (Debian's etcd-server), or undefined
// with the reason when the binary is missing (under CI=true that is a failure).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { freePort } from '../../src/util/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ETCD = '/usr/bin/etcd';

export function etcdMissing(): boolean {
  const missing = !existsSync(ETCD);
  if (missing && process.env.CI === 'true') throw new Error(`CI=true but ${ETCD} is missing (apt-get install etcd-server)`);
  return missing;
}

export interface TestEtcd {
  readonly endpoint: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts one; a port taken between picking it and etcd binding it (other tests listen too)
 *  is retried with new ports. */
export async function startEtcd(): Promise<TestEtcd> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdOnce();
    } catch (e) {
      if (attempt >= 5 || !/address already in use/.test((e as Error).message)) throw e;
    }
  }
}

async function startEtcdOnce(): Promise<TestEtcd> {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  const child = spawn(ETCD, ['--name', 't', '--data-dir', join(dir, 'data'),
    '--listen-client-urls', `http://127.0.0.1:${client}`, '--advertise-client-urls', `http://127.0.0.1:${client}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `t=http://127.0.0.1:${peer}`, '--log-level', 'error', '--logger', 'zap'],
  { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => { err = (err + d).slice(-2000); });
  const endpoint = `http://127.0.0.1:${client}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await fetch(`${endpoint}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`etcd did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    endpoint, child,
    async stop() {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
