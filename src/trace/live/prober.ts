// Real packets from inside a network namespace: a long-lived `bin/kdp-probe.js` per namespace
// (started through `ip netns exec`, JSON lines over stdin/stdout) that listens and sends probes.
// Long-lived because a Node start costs ~0.1 s and a fidelity run sends thousands of probes.

import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { kdpError } from '../../errors.js';
import { hostSpawner, type HostChild, type Spawner } from '../../host/spawn.js';
import { parseReplyLine } from './reply.js';

export interface ProbeSpec {
  protocol: 'tcp' | 'udp' | 'icmp';
  /** Source address to bind (any address the namespace may send from); kernel's choice if unset. */
  source?: string;
  destination: string;
  port?: number;
  /** Source port; an ephemeral one if unset. */
  sport?: number;
  /** Default 1000. */
  timeoutMs?: number;
}

/** What came back. `reply` fields are parsed from the responder's line (see reply.ts). */
export interface ProbeOutcome {
  outcome: 'reply' | 'refused' | 'unreachable' | 'timeout';
  /** The name the answering responder was started with (`pod=` of its line). */
  responder?: string;
  /** `ip:port` (`[v6]:port`) the server socket saw as its local address, when it reports it. */
  servedBy?: string;
  /** `ip:port` (`[v6]:port`) the server saw as the peer: the source after any NAT. */
  seenSource?: string;
  rttMs: number;
  error?: string;
}

/** A port to answer on; `address` binds one address instead of the wildcard (additive field:
 *  UDP can report its served address only when bound to it). */
export interface ListenPort {
  port: number;
  protocol: 'tcp' | 'udp';
  address?: string;
}

export interface Prober {
  probe(spec: ProbeSpec): Promise<ProbeOutcome>;
  listen(ports: ReadonlyArray<ListenPort>): Promise<void>;
  close(): Promise<void>;
}

export interface ProberOptions {
  /** The responder name its replies carry (default: the namespace name). */
  name?: string;
  spawner?: Spawner;
}

const SCRIPT = fileURLToPath(new URL('../../../bin/kdp-probe.js', import.meta.url));

/** Starts the prober in `netns` ('' = the caller's own namespace); resolves once it is ready. */
export function startProber(netns: string, opts: ProberOptions = {}): Promise<Prober> {
  const name = opts.name ?? (netns || 'local');
  const args = [SCRIPT, '--name', name];
  const spawner = opts.spawner ?? hostSpawner;
  const child = netns
    ? spawner.spawn('ip', ['netns', 'exec', netns, process.execPath, ...args])
    : spawner.spawn(process.execPath, args);
  return connectProber(child, `prober ${name}${netns ? ` in netns ${netns}` : ''}`);
}

type Pending = (msg: Record<string, unknown>) => void;

function connectProber(child: HostChild, what: string): Promise<Prober> {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let stderr = '';
  let exited: Error | undefined;
  child.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
  child.stdin!.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      exited = kdpError('KDP_HOST_EXEC', `${what} ${why}: ${stderr.trim()}`);
      for (const p of pending.values()) p({ error: exited.message });
      pending.clear();
      reject(exited);
    };
    child.on('error', (e) => fail(`could not start (${e.message})`));
    child.on('exit', (code, sig) => fail(`exited (${code ?? sig})`));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      let msg: Record<string, unknown>;
      try { msg = JSON.parse(l) as Record<string, unknown>; } catch { return; }
      if (msg.ready) return resolve(prober);
      const p = pending.get(Number(msg.id));
      pending.delete(Number(msg.id));
      p?.(msg);
    });
    const request = (req: Record<string, unknown>) =>
      new Promise<Record<string, unknown>>((res, rej) => {
        if (exited) return rej(exited);
        const id = nextId++;
        pending.set(id, (m) => (m.error && !m.outcome ? rej(requestError(what, m)) : res(m)));
        child.stdin!.write(`${JSON.stringify({ id, ...req })}\n`);
      });
    const prober: Prober = {
      async probe(spec) {
        return toOutcome(await request({ op: 'probe', ...spec }));
      },
      async listen(ports) {
        await request({ op: 'listen', ports });
      },
      close() {
        return new Promise((res) => {
          if (child.exitCode !== null || child.signalCode !== null) return res();
          child.once('exit', () => res());
          child.stdin!.end();
          setTimeout(() => child.kill('SIGKILL'), 2000).unref();
        });
      },
    };
  });
}

function requestError(what: string, m: Record<string, unknown>): Error {
  return kdpError('KDP_HOST_EXEC', `${what}: ${String(m.error)}`);
}

/** The wire answer as a ProbeOutcome (`error` outcomes of the script count as unreachable). */
export function toOutcome(m: Record<string, unknown>): ProbeOutcome {
  const raw = String(m.outcome);
  const outcome = (['reply', 'refused', 'unreachable', 'timeout'].includes(raw)
    ? raw : 'unreachable') as ProbeOutcome['outcome'];
  const o: ProbeOutcome = { outcome, rttMs: Number(m.rttMs ?? 0) };
  if (typeof m.error === 'string') o.error = m.error;
  if (typeof m.line === 'string') Object.assign(o, parseReplyLine(m.line));
  return o;
}
