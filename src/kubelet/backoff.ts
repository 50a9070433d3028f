// The kubelet's container restart back-off, as upstream's flowcontrol.Backoff with the kubelet's
// settings (initial 10 s, doubling, at most 300 s; forgotten when a container exits more than
// 2 × max after the previous exit): the first restart is immediate, each later one waits until
// the current back-off has passed since the exit (CrashLoopBackOff meanwhile).

export const INITIAL_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 300_000;

export interface RestartBackoff {
  /** How long to wait before restarting a container that exited at `finishedAt`; advances the
   *  back-off. */
  next(finishedAt: number): number;
}

export function buildRestartBackoff(scale = 1, now: () => number = Date.now): RestartBackoff {
  const initial = INITIAL_BACKOFF_MS * scale;
  const max = MAX_BACKOFF_MS * scale;
  let backoff = 0;
  let lastUpdate = 0;
  return {
    next(finishedAt) {
      if (backoff > 0 && finishedAt - lastUpdate > 2 * max) backoff = 0;
      const wait = backoff > 0 ? Math.max(0, finishedAt + backoff - now()) : 0;
      backoff = backoff === 0 ? initial : Math.min(2 * backoff, max);
      lastUpdate = finishedAt;
      return wait;
    },
  };
}
