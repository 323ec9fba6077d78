// What `ralph status` reads of the database, as a StatusSource (domain/statusFacts.ts), and
// the status image the store's writer keeps of it as it closes (domain/statusImage.ts), so
// that the next status call finds its answers without opening the store.
import { STATUS_IMAGE_VERSION, type StatusImage } from '../domain/statusImage';
import { dayStartOf, type StatusSource } from '../domain/statusFacts';
import { lastHourCutoff, type LoopPause } from '../domain/views';
import { safetyFacts } from './safetyStatus';
import type { SqlReader } from '../store/types';
import { readForecastSamples, readSpendSince } from './forecast';
import { buildOfThisProcess, dropStatusImage, storeFilesIdentity, writeStatusImage } from './statusImageFile';
import { countBy, promotedSince } from './views';

/** An image holds at most this many timestamps of the last hour; a busier log keeps none. */
export const MAX_RECENT = 20_000;

/** The status questions asked of the live database. */
export function sqlStatusSource(db: SqlReader): StatusSource {
  return {
    eventsTotal: db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n ?? 0,
    commits: promotedSince(db, undefined),
    wave: waveOf(db),
    taskCounts: countBy(db, 'task_view'),
    patchCounts: countBy(db, 'patch_view'),
    deferred: db.get<{ n: number }>("SELECT COUNT(*) AS n FROM task_view WHERE status = 'deferred'")?.n ?? 0,
    paused: pausedOf(db),
    // Compare like with like: stored ts are ISO 8601 UTC with milliseconds (see store/schema.ts).
    eventsAfter: (ts) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE ts > ?', [ts])?.n ?? 0,
    spendSince: (dayStart) => readSpendSince(db, dayStart),
    forecastSamples: () => readForecastSamples(db),
  };
}

/**
 * currentWave() of the task view, asked of SQLite: status reads counts, not the tasks
 * themselves (reading every row is most of its time on a large backlog).
 */
function waveOf(db: SqlReader): number {
  const r = db.get<{ open: number | null; top: number | null }>(
    "SELECT MIN(CASE WHEN status NOT IN ('done', 'dropped') THEN wave END) AS open, MAX(wave) AS top FROM task_view",
  );
  return r?.open ?? r?.top ?? 0;
}

/** The loop's pause, when its last lifecycle event is one (a stopped or running loop is not paused). */
function pausedOf(db: SqlReader): LoopPause | undefined {
  const last = db.get<{ event_type: string; ts: string; payload: string }>(
    "SELECT event_type, ts, payload FROM events WHERE event_type IN ('loop.started', 'loop.paused', 'loop.resumed', 'loop.stopped') ORDER BY event_id DESC LIMIT 1",
  );
  if (last?.event_type !== 'loop.paused') return undefined;
  let p: Record<string, unknown> = {};
  try {
    p = JSON.parse(last.payload) as Record<string, unknown>;
  } catch {
    // a payload the store wrote is JSON; an unreadable one still says the loop is paused
  }
  const agents = Array.isArray(p['agents']) ? p['agents'].filter((a): a is string => typeof a === 'string') : undefined;
  return {
    reason: typeof p['reason'] === 'string' ? p['reason'] : 'paused',
    since: last.ts,
    ...(typeof p['failure_class'] === 'string' ? { failureClass: p['failure_class'] } : {}),
    ...(agents ? { agents } : {}),
  };
}

/**
 * The image of `db` taken at `now`, for files that are as `files` says; undefined when the
 * last hour holds more than MAX_RECENT events (status then opens the store).
 */
export function statusImageOf(db: SqlReader, now: Date, files: StatusImage['files']): StatusImage | undefined {
  const recentAfter = lastHourCutoff(now);
  const recent = db.all<{ ts: string }>('SELECT ts FROM events WHERE ts > ? LIMIT ?', [recentAfter, MAX_RECENT + 1]).map((r) => r.ts);
  if (recent.length > MAX_RECENT) return undefined;
  const src = sqlStatusSource(db);
  const spendDay = dayStartOf(now);
  return {
    version: STATUS_IMAGE_VERSION,
    build: buildOfThisProcess(),
    files,
    eventsTotal: src.eventsTotal,
    commits: src.commits,
    wave: src.wave,
    taskCounts: src.taskCounts,
    patchCounts: src.patchCounts,
    deferred: src.deferred,
    paused: src.paused ?? null,
    recentAfter,
    recent,
    spendDay,
    spend: src.spendSince(spendDay),
    maxTs: db.get<{ ts: string | null }>('SELECT MAX(ts) AS ts FROM events')?.ts ?? null,
    forecast: src.forecastSamples(),
    safety: safetyFacts(db),
  };
}

/**
 * Keeps the status image of the store in `ralphDir` (the writer, as it closes: everything is
 * written and the lock still held, so the files are the ones the image describes). Never
 * fails the close: without an image, status opens the store.
 */
export function keepStatusImage(ralphDir: string, db: SqlReader, now: Date): void {
  try {
    const image = statusImageOf(db, now, storeFilesIdentity(ralphDir));
    if (image === undefined) dropStatusImage(ralphDir);
    else writeStatusImage(ralphDir, image);
  } catch {
    try {
      dropStatusImage(ralphDir);
    } catch {
      // a stale image is refused by its file identities anyway
    }
  }
}

/** What a writer of a project's store passes to openStore so that it keeps the status image as it closes. */
export function keepingStatusImage(ralphDir: string, now: () => Date = () => new Date()): { atClose: (db: SqlReader) => void } {
  return { atClose: (db) => keepStatusImage(ralphDir, db, now()) };
}
