import { strict as assert } from 'node:assert';
import { createUpdateBatcher } from '../../../src/monitor/batcher';
import type { BatcherClock } from '../../../src/monitor/batcher';

/** A manual clock: timers fire only when the test advances time. */
function fakeClock(): BatcherClock & { advance(ms: number): void; timers: number } {
  let now = 1_000_000;
  let next = 1;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = next++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = end;
    },
    get timers() {
      return timers.size;
    },
  };
}

describe('createUpdateBatcher', () => {
  it('given a quiet batcher, when one item is pushed, then it flushes on the next tick', () => {
    const clock = fakeClock();
    const flushed: number[][] = [];
    const b = createUpdateBatcher<number>((xs) => flushed.push(xs), 250, clock);
    b.push(1);
    assert.deepEqual(flushed, []);
    clock.advance(0);
    assert.deepEqual(flushed, [[1]]);
  });

  it('given a burst of 1000 events over one second, then at most one flush per interval, nothing lost', () => {
    const clock = fakeClock();
    const flushed: { at: number; xs: number[] }[] = [];
    const b = createUpdateBatcher<number>((xs) => flushed.push({ at: clock.now(), xs }), 250, clock);
    for (let i = 0; i < 1000; i++) {
      b.push(i);
      clock.advance(1);
    }
    clock.advance(1000);
    assert.ok(flushed.length <= 6, `flushes: ${flushed.length}`);
    for (let i = 1; i < flushed.length; i++) {
      assert.ok((flushed[i]?.at ?? 0) - (flushed[i - 1]?.at ?? 0) >= 250, 'two flushes within one interval');
    }
    assert.deepEqual(
      flushed.flatMap((f) => f.xs),
      Array.from({ length: 1000 }, (_, i) => i),
    );
    assert.equal(b.pending, 0);
    assert.equal(clock.timers, 0);
  });

  it('when flushNow is called, then pending items go out at once and the timer is cleared', () => {
    const clock = fakeClock();
    const flushed: string[][] = [];
    const b = createUpdateBatcher<string>((xs) => flushed.push(xs), 250, clock);
    b.push('a');
    clock.advance(0);
    b.push('b');
    b.push('c');
    b.flushNow();
    assert.deepEqual(flushed, [['a'], ['b', 'c']]);
    assert.equal(clock.timers, 0);
  });

  it('when disposed, then pending items are dropped and later pushes ignored', () => {
    const clock = fakeClock();
    const flushed: string[][] = [];
    const b = createUpdateBatcher<string>((xs) => flushed.push(xs), 250, clock);
    b.push('a');
    b.dispose();
    b.push('b');
    clock.advance(1000);
    assert.deepEqual(flushed, []);
    assert.equal(clock.timers, 0);
  });
});
