// A container's readiness probe worker, as upstream's prober worker: the first probe runs at
// once and then every periodSeconds; probes before initialDelaySeconds (since the container
// started) are skipped; the result flips only after failureThreshold consecutive failures or
// successThreshold consecutive successes; until the first flip the container is not ready.
// `trigger()` runs a probe now (upstream's manual trigger on a status update: here when the
// workload reports it is listening); one that comes while a probe is in flight runs right after
// it (that probe may have been answered before the workload listened). tcpSocket and httpGet go
// through the node's Prober; grpc is checked as a TCP connect; exec runs its command in the
// container's namespaces through `exec` when the runtime gives one (exit 0 = success), else
// succeeds (the echo workload has no command to run). The same worker serves liveness probes
// with `initial: true` (a container is alive until failureThreshold failures say otherwise).

import type { Container, Probe } from '../api/types.js';
import type { ProbeOutcome, Prober, ProbeRequest } from './prober.js';

export interface ReadinessWorkerOptions {
  readonly probe: Probe;
  readonly container: Container;
  /** The pod's IP (the probe's default host). */
  readonly podIP: () => string | undefined;
  readonly prober: Prober;
  /** Multiplies initialDelaySeconds and periodSeconds (the agent's timeScale). Default 1. */
  readonly timeScale?: number;
  /** Called when the result flips. */
  readonly onChange: (ready: boolean) => void;
  /** Failed probes, as the kubelet's `Readiness probe failed: …` event message. */
  readonly onFailure?: (message: string) => void;
  readonly now?: () => number;
  /** The result before any probe flips it: false for readiness (upstream), true for liveness. */
  readonly initial?: boolean;
  /** Runs an exec probe's command in the container (timeout in ms). */
  readonly exec?: (command: readonly string[], timeoutMs: number) => Promise<ProbeOutcome>;
}

export interface ReadinessWorker {
  readonly ready: boolean;
  trigger(): void;
  stop(): void;
}

/** The probe's request, or a fixed answer; undefined when its port does not resolve. */
export function probeRequest(p: Probe, c: Container, podIP: string):
  ProbeRequest | { fixed: boolean } | undefined {
  const timeoutMs = Math.max(1, p.timeoutSeconds ?? 1) * 1000;
  const port = (v: number | string) => typeof v === 'number' ? v
    : /^\d+$/.test(v) ? Number(v) : c.ports?.find((x) => x.name === v)?.containerPort;
  if (p.httpGet) {
    const n = port(p.httpGet.port);
    return n === undefined ? undefined : {
      kind: 'http', host: p.httpGet.host || podIP, port: n, timeoutMs, path: p.httpGet.path ?? '/',
      scheme: p.httpGet.scheme ?? 'HTTP', headers: p.httpGet.httpHeaders ?? [],
    };
  }
  if (p.tcpSocket) {
    const n = port(p.tcpSocket.port);
    return n === undefined ? undefined
      : { kind: 'tcp', host: p.tcpSocket.host || podIP, port: n, timeoutMs };
  }
  if (p.grpc) return { kind: 'tcp', host: podIP, port: p.grpc.port, timeoutMs };
  return { fixed: true };
}

export function startReadinessWorker(o: ReadinessWorkerOptions): ReadinessWorker {
  const scale = o.timeScale ?? 1;
  const now = o.now ?? Date.now;
  const started = now();
  const delayMs = (o.probe.initialDelaySeconds ?? 0) * 1000 * scale;
  const periodMs = Math.max(1, o.probe.periodSeconds ?? 10) * 1000 * scale;
  const successes = Math.max(1, o.probe.successThreshold ?? 1);
  const failures = Math.max(1, o.probe.failureThreshold ?? 3);
  let ready = o.initial ?? false;
  let last: boolean | undefined;
  let run = 0;
  let inFlight = false;
  let again = false;
  let stopped = false;

  async function once(): Promise<void> {
    if (stopped || inFlight || now() - started < delayMs) return;
    try {
      await probeOnce();
    } finally {
      inFlight = false;
    }
    if (again && !stopped) {
      again = false;
      void once();
    }
  }

  async function probeOnce(): Promise<void> {
    inFlight = true;
    const ip = o.podIP() ?? '';
    const req = probeRequest(o.probe, o.container, ip);
    let ok: boolean;
    let message: string | undefined;
    if (o.probe.exec && o.exec) {
      ({ ok, message } = await o.exec(o.probe.exec.command ?? [], Math.max(1, o.probe.timeoutSeconds ?? 1) * 1000));
    } else if (!req) [ok, message] = [false, 'probe port does not name a container port'];
    else if ('fixed' in req) ok = req.fixed;
    else ({ ok, message } = await o.prober.probe(req));
    if (stopped) return;
    if (!ok) o.onFailure?.(message ?? 'probe failed');
    run = last === ok ? run + 1 : 1;
    last = ok;
    if (run < (ok ? successes : failures) || ready === ok) return;
    ready = ok;
    o.onChange(ok);
  }

  const tick = setInterval(() => void once(), periodMs);
  tick.unref?.();
  void once();
  return {
    get ready() { return ready; },
    trigger() {
      if (inFlight) again = true;
      else void once();
    },
    stop() { stopped = true; clearInterval(tick); },
  };
}
