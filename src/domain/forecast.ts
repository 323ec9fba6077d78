// The spend forecast: what finishing the current backlog will cost and take, from what the
// tasks finished so far cost and took, and when the day's budget runs out at today's rate.
// Pure: the control plane gathers the samples from the event log (src/control/forecast.ts).
//
// Cost. Each finished task is one sample: the summed cost of every invocation for it
// (retries included, so a task that failed once costs what it really cost). Samples are
// grouped by effort; a remaining task of an effort with samples costs that group's mean, one
// of an effort without samples the overall mean scaled by the effort's weight. Tasks that
// ended blocked spent money without finishing: with a failure rate f, a remaining task costs
// 1/(1-f) times its estimate. The range is an 80 % interval of the sum (normal
// approximation: the tasks' own variances add, and so does the uncertainty of the means they
// are priced from), never below the cheapest task's share.
//
// Time. Throughput, not per-task durations: workers run side by side, so the time to finish
// is the effort-weighted work left divided by the rate at which work finished over the
// observed window (first claim to last finish). The range scales with the cost's relative
// spread.
import type { Effort } from './model';

/** How many finished tasks a forecast needs before it says anything. */
export const FORECAST_MIN_FINISHED = 3;

/** Relative size of an effort, used only where an effort has no samples of its own. */
export const EFFORT_WEIGHT: Readonly<Record<Effort, number>> = { S: 1, M: 2, L: 4, XL: 8 };

/** z for a two-sided 80 % interval. */
const Z80 = 1.2816;

export interface FinishedTask {
  readonly effort: Effort;
  /** Summed over every invocation for the task. */
  readonly costUsd: number;
  /** When its first claim was (ISO). */
  readonly startedAt: string;
  /** When it was done (ISO). */
  readonly finishedAt: string;
}

export interface ForecastInput {
  readonly finished: readonly FinishedTask[];
  /** Tasks that ended blocked (spent, did not finish): the failure rate. */
  readonly failed: number;
  /** The efforts of the tasks still to do (pending, claimed, proposed, deferred). */
  readonly remaining: readonly Effort[];
  /** Spent today (UTC) and since when it was spent (the day's first invocation). */
  readonly spentTodayUsd: number;
  readonly firstSpendToday?: string;
  /** The day's limit; 0 = none. */
  readonly perDayBudgetUsd: number;
  readonly now: Date;
}

export interface Range {
  readonly expected: number;
  readonly low: number;
  readonly high: number;
}

export type Forecast =
  /** Nothing to forecast: no agent has spent anything and nothing is finished. */
  | { readonly kind: 'none' }
  | { readonly kind: 'too_early'; readonly finished: number; readonly needed: number; readonly tasksLeft: number }
  | { readonly kind: 'done'; readonly finished: number }
  | {
      readonly kind: 'estimate';
      readonly tasksLeft: number;
      readonly basedOn: number;
      readonly failureRate: number;
      readonly costUsd: Range;
      readonly hours: Range;
      /** When the day's budget runs out at today's rate; null when it outlasts the day or there is no limit. */
      readonly budgetLastsUntil: string | null;
    };

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const variance = (xs: readonly number[]): number => {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1);
};

/** The forecast for `input` (see the header for the method). */
export function forecast(input: ForecastInput): Forecast {
  const { finished, remaining } = input;
  if (finished.length === 0 && input.spentTodayUsd === 0 && input.failed === 0) return { kind: 'none' };
  if (remaining.length === 0) return { kind: 'done', finished: finished.length };
  if (finished.length < FORECAST_MIN_FINISHED) {
    return { kind: 'too_early', finished: finished.length, needed: FORECAST_MIN_FINISHED, tasksLeft: remaining.length };
  }

  // Cost per remaining task, by effort, and the variance of that estimate's task.
  const byEffort = new Map<Effort, number[]>();
  for (const t of finished) byEffort.set(t.effort, [...(byEffort.get(t.effort) ?? []), t.costUsd]);
  const perUnit = finished.map((t) => t.costUsd / EFFORT_WEIGHT[t.effort]);
  const unitMean = mean(perUnit);
  const unitVar = variance(perUnit);
  const failureRate = input.failed / (finished.length + input.failed);
  const inflate = 1 / (1 - Math.min(failureRate, 0.9));
  // Per effort: m remaining tasks priced from n samples of variance v add m·v (the tasks'
  // own spread) and m²·v/n (the uncertainty of the mean they share).
  const counts = new Map<Effort, number>();
  for (const e of remaining) counts.set(e, (counts.get(e) ?? 0) + 1);
  let expected = 0;
  let varSum = 0;
  for (const [e, m] of counts) {
    const own = byEffort.get(e);
    const w = EFFORT_WEIGHT[e];
    if (own !== undefined && own.length >= 2) {
      const v = variance(own);
      expected += m * mean(own) * inflate;
      varSum += (m * v + (m * m * v) / own.length) * inflate ** 2;
    } else {
      const m1 = own !== undefined && own.length === 1 ? (own[0] as number) : unitMean * w;
      const v = unitVar * w * w;
      expected += m * m1 * inflate;
      varSum += (m * v + (m * m * v) / Math.max(own?.length ?? perUnit.length, 1)) * inflate ** 2;
    }
  }
  const spread = Z80 * Math.sqrt(varSum);
  const floor = Math.min(...finished.map((t) => t.costUsd)) * remaining.length;
  const costUsd: Range = { expected, low: Math.max(floor, expected - spread), high: expected + spread };

  // Time: effort-weighted work left over the observed rate of finished work.
  const start = Math.min(...finished.map((t) => Date.parse(t.startedAt)));
  const end = Math.max(...finished.map((t) => Date.parse(t.finishedAt)));
  const doneUnits = finished.reduce((a, t) => a + EFFORT_WEIGHT[t.effort], 0);
  const leftUnits = remaining.reduce((a, e) => a + EFFORT_WEIGHT[e], 0) * inflate;
  const hoursPerUnit = Math.max(end - start, 1) / 3_600_000 / doneUnits;
  const hoursExpected = leftUnits * hoursPerUnit;
  const rel = expected > 0 ? spread / expected : 0;
  const hours: Range = { expected: hoursExpected, low: hoursExpected * Math.max(0.1, 1 - rel), high: hoursExpected * (1 + rel) };

  return {
    kind: 'estimate',
    tasksLeft: remaining.length,
    basedOn: finished.length,
    failureRate,
    costUsd,
    hours,
    budgetLastsUntil: budgetExhaustion(input),
  };
}

/** When the day's budget runs out at the rate spent since the day's first invocation, or null. */
export function budgetExhaustion(
  input: Pick<ForecastInput, 'spentTodayUsd' | 'firstSpendToday' | 'perDayBudgetUsd' | 'now'>,
): string | null {
  if (input.perDayBudgetUsd <= 0 || input.firstSpendToday === undefined || input.spentTodayUsd <= 0) return null;
  const now = input.now.getTime();
  const elapsed = now - Date.parse(input.firstSpendToday);
  if (!(elapsed > 0)) return null;
  const left = input.perDayBudgetUsd - input.spentTodayUsd;
  const at = left <= 0 ? now : now + (left / input.spentTodayUsd) * elapsed;
  const midnight = Date.UTC(input.now.getUTCFullYear(), input.now.getUTCMonth(), input.now.getUTCDate() + 1);
  return at >= midnight ? null : new Date(at).toISOString();
}

const usd = (n: number): string => `$${n.toFixed(2)}`;
const hrs = (h: number): string => (h < 1 ? `${Math.max(1, Math.round(h * 60))} min` : `${h.toFixed(1)} h`);

/** One line for `ralph status` and the monitor; undefined when there is nothing to say. */
export function renderForecast(f: Forecast): string | undefined {
  switch (f.kind) {
    case 'none':
      return undefined;
    case 'done':
      return `Forecast: nothing left to do (${f.finished} task(s) finished)`;
    case 'too_early':
      return `Forecast: ${f.tasksLeft} task(s) left; a forecast needs ${f.needed} finished tasks (${f.finished} so far)`;
    case 'estimate': {
      const budget =
        f.budgetLastsUntil === null
          ? "the day's budget lasts the day"
          : `the day's budget lasts until ${f.budgetLastsUntil.slice(11, 16)} UTC`;
      return (
        `Forecast: ${f.tasksLeft} task(s) left: about ${usd(f.costUsd.expected)} (${usd(f.costUsd.low)}–${usd(f.costUsd.high)}) ` +
        `and ${hrs(f.hours.expected)} at the rate so far; ${budget}`
      );
    }
  }
}
