// Gathers the spend forecast's samples from the event log: what each done task cost (the
// `agent.finished` events naming it) and when it ran, the blocked tasks, the efforts still to
// do, and today's spend. The method is src/domain/forecast.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SqlReader } from '../store/types';
import type { FinishedTask, Forecast } from '../domain/forecast';
import { isEffort, type Effort } from '../domain/model';
import { dayStartOf, forecastFrom, type ForecastSamples, type SpendToday } from '../domain/statusFacts';

const OPEN_STATUSES = ['pending', 'claimed', 'proposed', 'deferred'];
/** The day's limit when the config says nothing (the config's own default). */
const DEFAULT_PER_DAY_USD = 50;

/** What the forecast reads, beside the store. */
export interface ForecastOptions {
  readonly now: Date;
  /** The day's budget in USD, 0 = none; asked only when the forecast needs it. */
  readonly perDayBudgetUsd: () => number;
}

const effortOf = (s: string | null): Effort => (s !== null && isEffort(s) ? s : 'M');

/** Today's spend as of `now`. */
export function readSpendToday(db: SqlReader, now: Date): SpendToday {
  return readSpendSince(db, dayStartOf(now));
}

/** The spend of the `agent.finished` events at or after `dayStart`, and the first of them. */
export function readSpendSince(db: SqlReader, dayStart: string): SpendToday {
  const r = db.get<{ spent: number | null; first: string | null }>(
    `SELECT SUM(json_extract(payload, '$.cost_usd')) AS spent, MIN(ts) AS first FROM events WHERE event_type = 'agent.finished' AND ts >= ?`,
    [dayStart],
  );
  return { spentUsd: r?.spent ?? 0, ...(r?.first ? { first: r.first } : {}) };
}

/** The forecast for the project in `db` as of `opts.now` (`today` when the caller read it already). */
export function readForecast(db: SqlReader, opts: ForecastOptions, today: SpendToday = readSpendToday(db, opts.now)): Forecast {
  return forecastFrom(readForecastSamples(db), today, opts.now, opts.perDayBudgetUsd);
}

/** What the forecast learns from the log, whatever the moment: finished tasks' costs, blocked tasks, efforts left. */
export function readForecastSamples(db: SqlReader): ForecastSamples {
  const costs = new Map<string, number>();
  for (const r of db.all<{ task_id: string | null; cost: number | null }>(
    `SELECT json_extract(payload, '$.task_id') AS task_id, SUM(json_extract(payload, '$.cost_usd')) AS cost
       FROM events WHERE event_type = 'agent.finished' GROUP BY task_id`,
  )) {
    if (r.task_id !== null) costs.set(r.task_id, r.cost ?? 0);
  }
  // Each task's own few events through the entity index: the unary `+` keeps SQLite (no
  // statistics here) from walking every claim of the log by the event type index per task.
  // Only tasks an invocation was recorded for count (below), so only theirs are looked up:
  // a log of many done tasks and few or no invocations (imported, marked by hand) pays
  // nothing per task. The `+` on task_id keeps the plan, and so the order, of the scan.
  const done =
    costs.size === 0
      ? []
      : db.all<{ task_id: string; effort: string | null; started: string | null; finished: string | null }>(
          `SELECT t.task_id, t.effort,
            (SELECT MIN(ts) FROM events e WHERE e.entity_type = 'task' AND e.entity_id = t.task_id AND +e.event_type = 'task.claimed') AS started,
            (SELECT MAX(ts) FROM events e WHERE e.entity_type = 'task' AND e.entity_id = t.task_id AND +e.event_type = 'task.done') AS finished
       FROM task_view t WHERE t.status = 'done'
        AND +t.task_id IN (SELECT json_extract(payload, '$.task_id') FROM events WHERE event_type = 'agent.finished')`,
        );
  const finished: FinishedTask[] = [];
  for (const t of done) {
    // A task done without a recorded invocation (marked by hand, imported) says nothing about cost.
    const cost = costs.get(t.task_id);
    if (cost === undefined || t.finished === null) continue;
    finished.push({ effort: effortOf(t.effort), costUsd: cost, startedAt: t.started ?? t.finished, finishedAt: t.finished });
  }
  const failed = db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM task_view WHERE status = 'blocked'`)?.n ?? 0;
  // Counted per effort in SQL: one row per open task through sql.js cost the monitor's
  // snapshot more than the rest of the forecast.
  const remaining = db
    .all<{ effort: string | null; n: number }>(
      `SELECT effort, COUNT(*) AS n FROM task_view WHERE status IN (${OPEN_STATUSES.map(() => '?').join(', ')}) GROUP BY effort ORDER BY MIN(rowid)`,
      OPEN_STATUSES,
    )
    .flatMap((r) => Array.from({ length: r.n }, () => effortOf(r.effort)));
  return { finished, failed, remaining };
}

/**
 * `budgets.per_day` from ralph.config.json without loading the config schema (status stays
 * cheap): a number or the seed's "$2.50" form; the default when absent or unreadable, since a
 * broken config is reported by the commands that use it.
 */
export function perDayBudgetOf(projectDir: string): number {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(projectDir, 'ralph.config.json'), 'utf8')) as { budgets?: { per_day?: unknown } };
    const v = json.budgets?.per_day;
    const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v.replace(/^\$/, '')) : NaN;
    return Number.isFinite(n) && n >= 0 ? n : DEFAULT_PER_DAY_USD;
  } catch {
    return DEFAULT_PER_DAY_USD;
  }
}
