// A bounded-frequency runner, as upstream's async.BoundedFrequencyRunner: `run()` asks for a
// sync as soon as allowed; runs are at least `minIntervalMs` apart on average (a token bucket
// of `burst` tokens refilled one per minInterval), at most `maxIntervalMs` apart (a periodic
// run), never overlapping; `retryAfter(ms)` schedules a retry after a failure. The clock is
// injected so tests drive time by hand.

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface RunnerOptions {
  readonly minIntervalMs: number;
  readonly maxIntervalMs: number;
  /** Runs allowed back to back before minInterval applies (upstream kube-proxy: 2). */
  readonly burst?: number;
  readonly clock?: Clock;
}

export class BoundedFrequencyRunner {
  private readonly clock: Clock;
  private readonly burst: number;
  private tokens: number;
  private lastRefill: number;
  private timer: unknown = undefined;
  private timerAt = Infinity;
  private running = false;
  private wanted = false;
  private started = false;
  /** After stop(): nothing runs again, whatever asks (a stopped kube-proxy must not sync). */
  private stopped = false;
  private lastRun: number;

  constructor(private readonly fn: () => void | Promise<void>,
    private readonly opts: RunnerOptions) {
    this.clock = opts.clock ?? systemClock;
    this.burst = Math.max(1, opts.burst ?? 1);
    this.tokens = this.burst;
    this.lastRefill = this.clock.now();
    this.lastRun = this.clock.now();
  }

  /** Starts the periodic (maxInterval) runs. */
  start(): void {
    this.started = true;
    this.arm(this.lastRun + this.opts.maxIntervalMs);
  }

  /** Final: no run, retry or periodic run fires after it (one in flight finishes). */
  stop(): void {
    this.started = false;
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  /** Requests a run as soon as the rate limit allows. */
  run(): void {
    this.wanted = true;
    this.arm(this.nextAllowed());
  }

  /** Schedules a run no later than `ms` from now (after a failed sync). */
  retryAfter(ms: number): void {
    this.arm(this.clock.now() + ms);
  }

  private refill(now: number): void {
    const min = this.opts.minIntervalMs;
    if (min <= 0) { this.tokens = this.burst; this.lastRefill = now; return; }
    const gained = Math.floor((now - this.lastRefill) / min);
    if (gained > 0) {
      this.tokens = Math.min(this.burst, this.tokens + gained);
      this.lastRefill = this.tokens === this.burst ? now : this.lastRefill + gained * min;
    }
  }

  private nextAllowed(): number {
    const now = this.clock.now();
    this.refill(now);
    if (this.tokens >= 1) return now;
    return this.lastRefill + this.opts.minIntervalMs;
  }

  private arm(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, at - this.clock.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.stopped) return;
    if (this.running) { this.wanted = true; return; }
    const now = this.clock.now();
    this.refill(now);
    if (this.tokens < 1) { this.arm(this.nextAllowed()); return; }
    this.tokens -= 1;
    this.wanted = false;
    this.running = true;
    this.lastRun = now;
    const done = () => {
      this.running = false;
      if (this.wanted) this.arm(this.nextAllowed());
      if (this.started) this.arm(this.lastRun + this.opts.maxIntervalMs);
    };
    try {
      const r = this.fn();
      if (r && typeof (r as Promise<void>).then === 'function') {
        (r as Promise<void>).then(done, done);
      } else done();
    } catch (e) {
      done();
      throw e;
    }
  }
}
