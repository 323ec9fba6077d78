// Waiting, and only where waiting is right: idle polling when no work is ready (adaptive:
// grows while idle, resets on work) and back-off after rate limits or environment failures.
// The reference sleeps 5-20 s between every phase; we never sleep when work is ready.
// The clock is injectable and every wait is abortable (stop) and wakeable (new work).

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted || ms <= 0) {
        resolve();
        return;
      }
      const done = (): void => {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** A test clock: time moves only when `advance` is called; sleepers wake in time order. */
export class ManualClock implements Clock {
  private t: number;
  private readonly sleepers: { until: number; resolve: () => void }[] = [];

  constructor(start = 0) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const entry = { until: this.t + ms, resolve };
      this.sleepers.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.sleepers.indexOf(entry);
          if (i >= 0) this.sleepers.splice(i, 1);
          resolve();
        },
        { once: true },
      );
    });
  }

  /** Number of pending sleeps, so tests can wait until the code under test is asleep. */
  get pending(): number {
    return this.sleepers.length;
  }

  advance(ms: number): void {
    this.t += ms;
    const due = this.sleepers.filter((s) => s.until <= this.t).sort((a, b) => a.until - b.until);
    for (const s of due) {
      this.sleepers.splice(this.sleepers.indexOf(s), 1);
      s.resolve();
    }
  }
}

export interface IdlePolicy {
  /** First idle wait, ms (the seed's INTERVAL_PRIMARY: 20 s). */
  readonly baseMs: number;
  /** Cap of the idle wait, ms. */
  readonly maxMs: number;
  /** Multiplier per consecutive idle round. */
  readonly factor: number;
}

export const DEFAULT_IDLE: IdlePolicy = { baseMs: 20_000, maxMs: 120_000, factor: 1.5 };

/** The wait before polling again after `idleRounds` consecutive rounds without work. */
export function idleDelayMs(idleRounds: number, p: IdlePolicy = DEFAULT_IDLE): number {
  const n = Math.max(0, idleRounds);
  return Math.min(p.maxMs, Math.round(p.baseMs * Math.pow(p.factor, n)));
}

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 300_000 };

/**
 * Rate-limit / environment back-off: exponential from `baseMs`, honouring a server's
 * Retry-After when it asks for longer; `jitter` in [0,1) spreads parallel agents apart.
 */
export function backoffDelayMs(
  attempt: number,
  retryAfterMs: number | null = null,
  p: BackoffPolicy = DEFAULT_BACKOFF,
  jitter = 0,
): number {
  const exp = Math.min(p.maxMs, p.baseMs * Math.pow(2, Math.max(0, attempt)));
  const withJitter = Math.round(exp * (1 + 0.25 * jitter));
  return Math.min(p.maxMs, Math.max(withJitter, retryAfterMs ?? 0));
}

/**
 * An idle wait that new work cuts short: `wait` resolves with 'woken' when `wake` is called
 * (an inbox command, a task created, a worker finished), 'aborted' on stop, else 'elapsed'.
 * A wake that arrives while nobody waits is remembered, so it is never lost.
 */
export class Waker {
  private pendingWake = false;
  private current: { resolve: (r: WaitResult) => void } | null = null;

  constructor(private readonly clock: Clock = systemClock) {}

  wake(): void {
    if (this.current) {
      const c = this.current;
      this.current = null;
      c.resolve('woken');
    } else {
      this.pendingWake = true;
    }
  }

  async wait(ms: number, signal?: AbortSignal): Promise<WaitResult> {
    if (signal?.aborted) return 'aborted';
    if (this.pendingWake) {
      this.pendingWake = false;
      return 'woken';
    }
    const local = new AbortController();
    const onAbort = (): void => local.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const woken = new Promise<WaitResult>((resolve) => {
      this.current = { resolve };
    });
    const slept = this.clock.sleep(ms, local.signal).then((): WaitResult => (signal?.aborted ? 'aborted' : 'elapsed'));
    const result = await Promise.race([woken, slept]);
    local.abort();
    signal?.removeEventListener('abort', onAbort);
    this.current = null;
    return result;
  }
}

export type WaitResult = 'elapsed' | 'woken' | 'aborted';
