// `kdp down` after a crash of a simulated-hosts lab with a joined node: the lab's `kdp up` is
// SIGKILLed, its `kdp node join` process (in the real host's namespace, leading its own process
// group with a helper, both deaf to SIGTERM) keeps running. `kdp down` must stop that group (by
// the node's record, cluster/node-agent-records.ts), the processes inside the lab's namespaces,
// delete the host, router and node namespaces (the node's kdp-vxlan-1 VTEP with them) and drop
// the underlay-address claim and the record from a kept data dir.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostPrefixFor } from '../../src/cluster/data-plane-netns.js';
import { dataDirPaths } from '../../src/cluster/data-dir.js';
import { recordNodeAgent } from '../../src/cluster/node-agent-records.js';
import { cleanupHost } from '../../src/host/cleanup.js';
import { buildHostExec } from '../../src/host/exec.js';
import { ensureNetns, listNetns } from '../../src/host/netns.js';
import { procStartTicks } from '../../src/host/process.js';
import { VTEP_LINK } from '../../src/host/vxlan.js';
import { kdp } from '../helpers/cli.js';
import { waitFor } from '../helpers/cluster.js';
import { canUseNetns } from '../helpers/root.js';

const exec = buildHostExec();
const alive = (pid: number) => procStartTicks(pid) !== undefined;
const childrenOf = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)
  .filter(Boolean).map(Number);

describe.runIf(canUseNetns(['ip', 'sh', 'sleep']))('kdp down after a crash, with a joined node', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kdp-down-join-'));
  const paths = dataDirPaths(dir);
  const prefix = hostPrefixFor(paths);
  const started: ChildProcess[] = [];
  const pids: number[] = [];

  afterAll(async () => {
    for (const pid of pids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    for (const c of started) c.kill('SIGKILL');
    await cleanupHost(exec, paths.hostState, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops the joined node\'s process group and every lab namespace, drops claims and records', async () => {
    const lab = ['underlay', 'underlay-h2', 'router', 'w2'].map((n) => `${prefix}-${n}`);
    for (const ns of lab) await ensureNetns(exec, ns);
    await exec.run('ip', ['-n', `${prefix}-w2`, 'link', 'add', VTEP_LINK, 'type', 'vxlan', 'id', '1', 'dstport', '8472', 'nolearning']);
    // A process inside simulated host h2 (the namespace sweep's).
    const inHost = spawn('ip', ['netns', 'exec', `${prefix}-underlay-h2`, 'sleep', '600'], { stdio: 'ignore' });
    started.push(inHost);
    // The lab's `kdp up` stand-in starts the joined node's process — its own group leader (a
    // shell's job), with a helper, both ignoring SIGTERM — then dies by SIGKILL.
    const up = spawn('sh', ['-c', 'setsid sh -c \'trap "" TERM; sleep 600 & echo $$; wait\' & wait'],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    started.push(up);
    const agent = await new Promise<number>((resolve) => up.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    pids.push(agent);
    const helper = await waitFor(() => childrenOf(agent)[0], 5_000, 'the node process\'s helper');
    pids.push(helper);
    recordNodeAgent(dir, 'w2', agent);
    mkdirSync(join(dir, 'nodes', 'w2'), { recursive: true });
    writeFileSync(join(dir, 'nodes', 'w2', 'underlay-ip'), '172.19.0.2\n');
    up.kill('SIGKILL');
    await new Promise((r) => up.once('exit', r));
    expect(alive(agent) && alive(helper)).toBe(true);

    const down = await kdp('down', '--keep-data', '--data-dir', dir);
    expect(down.err).toContain(`stopped node processes w2 (pid ${agent})`);
    expect(down.code).toBe(0);
    expect(alive(agent)).toBe(false);
    expect(alive(helper)).toBe(false);
    await waitFor(() => inHost.exitCode !== null || inHost.signalCode !== null || undefined, 5_000, 'the in-host process ended');
    expect((await listNetns(exec)).filter((n) => n.startsWith(`${prefix}-`))).toEqual([]);
    // The VTEP went with its namespace; none was ever in the real host's.
    expect(() => execFileSync('ip', ['link', 'show', VTEP_LINK], { stdio: 'ignore' })).toThrow();
    expect(existsSync(join(dir, 'nodes', 'w2', 'underlay-ip'))).toBe(false);
    expect(existsSync(join(dir, 'nodes', 'w2', 'agent.pid'))).toBe(false);
    expect(existsSync(dir)).toBe(true);
  }, 60_000);
});
