// Adaptive idle polling, rate-limit back-off, abortable and wakeable waits on a test clock.
import assert from 'node:assert/strict';
import { backoffDelayMs, idleDelayMs, ManualClock, Waker } from '../../../src/loop/sleep';

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

describe('loop/sleep', () => {
  it('given consecutive idle rounds, then the idle wait grows to its cap', () => {
    const p = { baseMs: 1000, maxMs: 4000, factor: 2 };
    assert.deepEqual(
      [0, 1, 2, 3, 9].map((n) => idleDelayMs(n, p)),
      [1000, 2000, 4000, 4000, 4000],
    );
  });

  it('given a rate limit, then exponential back-off that honours a longer Retry-After', () => {
    const p = { baseMs: 1000, maxMs: 60_000 };
    assert.equal(backoffDelayMs(0, null, p), 1000);
    assert.equal(backoffDelayMs(3, null, p), 8000);
    assert.equal(backoffDelayMs(1, 30_000, p), 30_000);
    assert.equal(backoffDelayMs(20, null, p), 60_000);
  });

  it('given a waiting loop, when work arrives, then the wait ends at once as woken', async () => {
    const clock = new ManualClock();
    const w = new Waker(clock);
    const p = w.wait(60_000);
    await until(() => clock.pending === 1);
    w.wake();
    assert.equal(await p, 'woken');
    assert.equal(clock.pending, 0);
  });

  it('given a wake before the wait, then it is not lost', async () => {
    const w = new Waker(new ManualClock());
    w.wake();
    assert.equal(await w.wait(60_000), 'woken');
  });

  it('given a stop, then the wait ends as aborted; given time passing, elapsed', async () => {
    const clock = new ManualClock();
    const w = new Waker(clock);
    const ac = new AbortController();
    const p = w.wait(60_000, ac.signal);
    await until(() => clock.pending === 1);
    ac.abort();
    assert.equal(await p, 'aborted');
    const q = w.wait(1000);
    await until(() => clock.pending === 1);
    clock.advance(999);
    assert.equal(clock.pending, 1);
    clock.advance(1);
    assert.equal(await q, 'elapsed');
  });
});
