// The back-off of a failed evolve_goals, and the assess rule that honours it.
import assert from 'node:assert/strict';
import { EvolveRetry, evolveRetryDelayMs } from '../../../src/loop/evolveRetry';
import { DEFAULT_INTERVALS, initialPrimaryState, periodicOverride, type AssessFacts } from '../../../src/domain/primaryMachine';
import { ManualClock } from '../../../src/loop/sleep';

const facts: AssessFacts = {
  deferredCount: 0,
  deferredWaitedLong: false,
  backlogEmpty: true,
  specsChanged: true,
  hasUiTests: false,
  hasIntegrationTests: false,
};

describe('loop/evolveRetry', () => {
  it('given failures in a row, then the delay doubles from the base up to the cap', () => {
    const policy = { baseMs: 30_000, maxMs: 30 * 60_000 };
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => evolveRetryDelayMs(n, policy)),
      [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000],
    );
  });

  it('given a failure, then held until the delay has passed; a success lifts the hold', () => {
    const clock = new ManualClock(1_000);
    const r = new EvolveRetry(clock, { baseMs: 100, maxMs: 1000 });
    assert.equal(r.held, false);
    assert.equal(r.failed(2), 200);
    assert.equal(r.held, true);
    clock.advance(199);
    assert.equal(r.held, true);
    clock.advance(1);
    assert.equal(r.held, false);
    r.failed(1);
    r.succeeded();
    assert.equal(r.held, false);
  });

  it('given an empty backlog with changed specs, then evolve_goals is due unless a failure holds it; the interval trigger is held too', () => {
    const c = initialPrimaryState().counters;
    assert.equal(periodicOverride(c, facts)?.phase, 'evolve_goals');
    assert.equal(periodicOverride(c, { ...facts, evolveHeld: true }), null);
    const later = { ...c, commitsTotal: DEFAULT_INTERVALS.evolveEvery };
    const busy = { ...facts, backlogEmpty: false, specsChanged: false };
    assert.equal(periodicOverride(later, busy)?.phase, 'evolve_goals');
    assert.notEqual(periodicOverride(later, { ...busy, evolveHeld: true })?.phase, 'evolve_goals');
  });
});
