// The spend forecast on synthetic histories with known rates: the cost range holds the true
// cost of the rest as often as an 80 % interval should, the time follows the observed
// throughput, blocked tasks raise the estimate, and the day's budget runs out when the rate says.
import assert from 'node:assert/strict';
import { budgetExhaustion, forecast, renderForecast, type FinishedTask, type ForecastInput } from '../../../src/domain/forecast';
import type { Effort } from '../../../src/domain/model';
import { seededRandom } from '../../kit/random';

/** True cost per task: mean by effort, uniform ±50 %. */
const MEAN: Record<Effort, number> = { S: 0.1, M: 0.25, L: 0.6, XL: 1.2 };
const EFFORTS: Effort[] = ['S', 'S', 'M', 'M', 'M', 'L', 'XL'];
const cost = (r: () => number, e: Effort): number => MEAN[e] * (0.5 + r());
const T0 = Date.parse('2026-12-01T08:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();

function history(r: () => number, n: number, minutesPerTask: number): FinishedTask[] {
  return Array.from({ length: n }, (_, i) => {
    const effort = EFFORTS[Math.floor(r() * EFFORTS.length)] as Effort;
    return {
      effort,
      costUsd: cost(r, effort),
      startedAt: iso(T0 + i * minutesPerTask * 60_000),
      finishedAt: iso(T0 + (i + 1) * minutesPerTask * 60_000),
    };
  });
}

const base = (over: Partial<ForecastInput>): ForecastInput => ({
  finished: [],
  failed: 0,
  remaining: [],
  spentTodayUsd: 0,
  perDayBudgetUsd: 50,
  now: new Date(T0 + 6 * 3_600_000),
  ...over,
});

describe('domain/forecast', () => {
  it('given nothing spent and nothing finished, then there is nothing to say', () => {
    const f = forecast(base({ remaining: ['S', 'M'] }));
    assert.deepEqual(f, { kind: 'none' });
    assert.equal(renderForecast(f), undefined);
  });

  it('given fewer finished tasks than it needs, then it says so and how many it has', () => {
    const r = seededRandom(1);
    const f = forecast(base({ finished: history(r, 2, 10), remaining: ['S', 'M', 'L'], spentTodayUsd: 0.4 }));
    assert.deepEqual(f, { kind: 'too_early', finished: 2, needed: 3, tasksLeft: 3 });
    assert.equal(renderForecast(f), 'Forecast: 3 task(s) left; a forecast needs 3 finished tasks (2 so far)');
  });

  it('given an empty backlog, then nothing is left to do', () => {
    const f = forecast(base({ finished: history(seededRandom(2), 5, 10), spentTodayUsd: 1 }));
    assert.deepEqual(f, { kind: 'done', finished: 5 });
  });

  it('given histories with known rates, then the 80 % range holds the true cost of the rest about 80 % of the time', () => {
    let inside = 0;
    let errSum = 0;
    const runs = 200;
    for (let seed = 1; seed <= runs; seed++) {
      const r = seededRandom(seed);
      const finished = history(r, 30, 12);
      const remaining = Array.from({ length: 20 }, () => EFFORTS[Math.floor(r() * EFFORTS.length)] as Effort);
      const truth = remaining.reduce((a, e) => a + cost(r, e), 0);
      const f = forecast(base({ finished, remaining, spentTodayUsd: 5 }));
      assert.equal(f.kind, 'estimate');
      if (f.kind !== 'estimate') return;
      assert.ok(f.costUsd.low <= f.costUsd.expected && f.costUsd.expected <= f.costUsd.high);
      if (truth >= f.costUsd.low && truth <= f.costUsd.high) inside++;
      errSum += Math.abs(f.costUsd.expected - truth) / truth;
    }
    // An 80 % interval of a sum estimated from 30 samples: between 65 % and 95 % of the truths.
    assert.ok(inside / runs >= 0.65 && inside / runs <= 0.95, `${inside} of ${runs} inside`);
    assert.ok(errSum / runs < 0.15, `mean relative error ${(errSum / runs).toFixed(3)}`);
  });

  it('given tasks finishing at a known rate, then the time left follows the throughput, not the sum of durations', () => {
    // Six S tasks, one every 30 minutes (3 h), four S tasks left: 2 h.
    const finished: FinishedTask[] = Array.from({ length: 6 }, (_, i) => ({
      effort: 'S',
      costUsd: 0.1,
      startedAt: iso(T0 + i * 1_800_000),
      finishedAt: iso(T0 + (i + 1) * 1_800_000),
    }));
    const f = forecast(base({ finished, remaining: ['S', 'S', 'S', 'S'], spentTodayUsd: 0.6 }));
    assert.equal(f.kind, 'estimate');
    if (f.kind !== 'estimate') return;
    assert.ok(Math.abs(f.hours.expected - 2) < 1e-9, `${f.hours.expected}`);
    assert.ok(Math.abs(f.costUsd.expected - 0.4) < 1e-9);
    // Identical samples: no spread, and the range is the point.
    assert.equal(f.costUsd.low, f.costUsd.high);
  });

  it('given an effort with no samples, then it is priced from the others by its weight', () => {
    const finished: FinishedTask[] = Array.from({ length: 4 }, (_, i) => ({
      effort: 'S',
      costUsd: 0.1,
      startedAt: iso(T0 + i * 60_000),
      finishedAt: iso(T0 + (i + 1) * 60_000),
    }));
    const f = forecast(base({ finished, remaining: ['L'], spentTodayUsd: 0.4 }));
    assert.equal(f.kind, 'estimate');
    if (f.kind === 'estimate') assert.ok(Math.abs(f.costUsd.expected - 0.4) < 1e-9, `${f.costUsd.expected}`);
  });

  it('given blocked tasks, then the estimate rises by the failure rate', () => {
    const finished = history(seededRandom(7), 9, 10);
    const remaining: Effort[] = ['M', 'M', 'S'];
    const clean = forecast(base({ finished, remaining, spentTodayUsd: 2 }));
    const failing = forecast(base({ finished, remaining, failed: 3, spentTodayUsd: 2 }));
    assert.ok(clean.kind === 'estimate' && failing.kind === 'estimate');
    if (clean.kind !== 'estimate' || failing.kind !== 'estimate') return;
    assert.equal(failing.failureRate, 0.25);
    assert.ok(Math.abs(failing.costUsd.expected - clean.costUsd.expected / 0.75) < 1e-9);
    assert.ok(Math.abs(failing.hours.expected - clean.hours.expected / 0.75) < 1e-9);
  });

  it("given today's spend rate, then the day's budget runs out when the rate says, or lasts the day", () => {
    const now = new Date('2026-12-01T12:00:00.000Z');
    // $25 of $50 in 4 h: the other $25 in 4 more.
    assert.equal(
      budgetExhaustion({ spentTodayUsd: 25, firstSpendToday: '2026-12-01T08:00:00.000Z', perDayBudgetUsd: 50, now }),
      '2026-12-01T16:00:00.000Z',
    );
    // $5 in 4 h: $45 more would take 36 h, past midnight.
    assert.equal(budgetExhaustion({ spentTodayUsd: 5, firstSpendToday: '2026-12-01T08:00:00.000Z', perDayBudgetUsd: 50, now }), null);
    // Already over: now.
    assert.equal(
      budgetExhaustion({ spentTodayUsd: 60, firstSpendToday: '2026-12-01T08:00:00.000Z', perDayBudgetUsd: 50, now }),
      now.toISOString(),
    );
    assert.equal(budgetExhaustion({ spentTodayUsd: 25, firstSpendToday: '2026-12-01T08:00:00.000Z', perDayBudgetUsd: 0, now }), null);
  });

  it('given an estimate, then one line says the cost with its range, the time and the budget', () => {
    const finished: FinishedTask[] = Array.from({ length: 3 }, (_, i) => ({
      effort: 'M',
      costUsd: [0.2, 0.3, 0.4][i] as number,
      startedAt: iso(T0 + i * 3_600_000),
      finishedAt: iso(T0 + (i + 1) * 3_600_000),
    }));
    const f = forecast(
      base({
        finished,
        remaining: Array.from({ length: 23 }, (): Effort => 'M'),
        spentTodayUsd: 25,
        firstSpendToday: iso(T0),
        now: new Date(T0 + 4 * 3_600_000),
      }),
    );
    assert.match(
      renderForecast(f) ?? '',
      /^Forecast: 23 task\(s\) left: about \$6\.90 \(\$\d+\.\d\d–\$\d+\.\d\d\) and 23\.0 h at the rate so far; the day's budget lasts until 16:00 UTC$/,
    );
  });
});
