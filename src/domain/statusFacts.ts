// The facts `ralph status` prints, computed from what the event log says (a StatusSource) and
// the moment asked about. Two sources answer the same questions: the live database
// (control/statusImage.ts's SQL source) and the status image its last writer kept
// (statusImage.ts here), so a status call that finds the store as that writer left it needs
// neither SQLite nor the store; both go through statusFactsFrom, which is why they agree.
import { forecast, type FinishedTask, type Forecast } from './forecast';
import type { Effort } from './model';
import { lastHourCutoff, type LoopPause, type LoopPosition, type StatusFacts } from './views';

/** What agents spent on a day (UTC, from `agent.finished`) and when the day's first of them ended. */
export interface SpendToday {
  readonly spentUsd: number;
  readonly first?: string;
}

/** What the forecast learns from the log: finished tasks' costs, blocked tasks, efforts left. */
export interface ForecastSamples {
  readonly finished: readonly FinishedTask[];
  readonly failed: number;
  readonly remaining: readonly Effort[];
}

/** Status counts as SQLite's GROUP BY ... ORDER BY status gives them. */
export type StatusCounts = readonly (readonly [string, number])[];

/** The questions status asks of the log. */
export interface StatusSource {
  readonly eventsTotal: number;
  /** Promoted patches. */
  readonly commits: number;
  readonly wave: number;
  readonly taskCounts: StatusCounts;
  readonly patchCounts: StatusCounts;
  readonly deferred: number;
  readonly paused: LoopPause | undefined;
  /** Events whose `ts` sorts after `ts` (an ISO instant). */
  eventsAfter(ts: string): number;
  /** Spend of the `agent.finished` events at or after `dayStart` (an ISO instant). */
  spendSince(dayStart: string): SpendToday;
  forecastSamples(): ForecastSamples;
}

/** The first instant of `now`'s UTC day, comparable as a string with stored `ts` values. */
export function dayStartOf(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** The forecast from its samples and today's spend, as of `now`. */
export function forecastFrom(samples: ForecastSamples, today: SpendToday, now: Date, perDayBudgetUsd: () => number): Forecast {
  return forecast({
    ...samples,
    spentTodayUsd: today.spentUsd,
    ...(today.first ? { firstSpendToday: today.first } : {}),
    perDayBudgetUsd: today.spentUsd > 0 ? perDayBudgetUsd() : 0,
    now,
  });
}

/**
 * The status facts of `src` as of `now`, with the loop's position; `readPerDayBudgetUsd` is
 * asked at most once, and only once agents have spent something.
 */
export function statusFactsFrom(
  src: StatusSource,
  pos: Pick<LoopPosition, 'phase' | 'iteration' | 'current_item'>,
  now: Date,
  readPerDayBudgetUsd: () => number,
): StatusFacts {
  let perDay: number | undefined;
  const perDayBudgetUsd = (): number => (perDay ??= readPerDayBudgetUsd());
  const today = src.spendSince(dayStartOf(now));
  const fc = forecastFrom(src.forecastSamples(), today, now, perDayBudgetUsd);
  return {
    phase: pos.phase,
    iteration: pos.iteration,
    commits: src.commits,
    current: pos.current_item,
    wave: src.wave,
    taskCounts: src.taskCounts,
    patchCounts: src.patchCounts,
    eventsTotal: src.eventsTotal,
    eventsLastHour: src.eventsAfter(lastHourCutoff(now)),
    deferred: src.deferred,
    forecast: fc,
    // Once agents have run, the day's spend and what is left of budgets.per_day.
    ...(fc.kind === 'none' && today.spentUsd === 0 ? {} : { spendToday: { spentUsd: today.spentUsd, perDayUsd: perDayBudgetUsd() } }),
    ...(src.paused ? { paused: src.paused } : {}),
  };
}
