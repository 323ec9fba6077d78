// Coalesces bursts: however many items are pushed, `flush` runs at most once per interval.
// The first push after a quiet interval flushes on the next tick (so one event still shows
// at once); pushes within the interval wait for its end and go out together.

/** The timer functions the batcher uses; tests pass a fake clock. */
export interface BatcherClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface UpdateBatcher<T> {
  push(item: T): void;
  /** Flushes what is pending now, outside the schedule (e.g. on panel reveal). */
  flushNow(): void;
  /** Drops what is pending and stops the timer. */
  dispose(): void;
  readonly pending: number;
}

const systemClock: BatcherClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export function createUpdateBatcher<T>(
  flush: (items: T[]) => void,
  intervalMs: number,
  clock: BatcherClock = systemClock,
): UpdateBatcher<T> {
  let items: T[] = [];
  let timer: unknown = undefined;
  let lastFlush = Number.NEGATIVE_INFINITY;
  let disposed = false;

  const run = (): void => {
    timer = undefined;
    if (items.length === 0 || disposed) return;
    const batch = items;
    items = [];
    lastFlush = clock.now();
    flush(batch);
  };

  return {
    push(item: T): void {
      if (disposed) return;
      items.push(item);
      if (timer !== undefined) return;
      const wait = Math.max(0, lastFlush + intervalMs - clock.now());
      timer = clock.setTimeout(run, wait);
    },
    flushNow(): void {
      if (timer !== undefined) clock.clearTimeout(timer);
      run();
    },
    dispose(): void {
      disposed = true;
      items = [];
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
    get pending(): number {
      return items.length;
    },
  };
}
