// Time travel: the project as it was at a moment of the event log. The events up to the moment
// are replayed into a scratch in-memory database through the same projections as the live
// store, and the same status code reads it, so `status --at` prints what `status` printed then.
//
// The loop's position (phase, iteration, current task) lives in STATE.json, which is not an
// event; at a past moment it is read from the loop's own events instead: running between
// loop.started and loop.stopped (paused between loop.paused and loop.resumed), the iteration
// count of the last loop.stopped, and, while a loop runs, the task the primary's last claim
// still holds.
import { InvalidArgumentError } from '../domain/errors';
import { DEFAULT_LOOP_POSITION, type LoopPosition, type StatusFacts } from '../domain/views';
import { migrate } from '../store/schema';
import { loadSqlJs, SqlDb } from '../store/sqlDb';
import type { StoredEvent } from '../store/types';
import type { ControlContext } from './context';
import { perDayBudgetOf } from './forecast';
import { statusFactsOf } from './derived';
import { CONTROL_PROJECTIONS } from './views';

/** A moment of the log: an event (its id) or a time (ISO 8601). */
export type Moment = { readonly kind: 'event'; readonly eventId: string } | { readonly kind: 'time'; readonly ts: string };

/** `evt_…` is an event id; anything else must be a date or time `Date` reads (given as UTC when it names no zone). */
export function parseMoment(s: string): Moment {
  if (/^evt_[A-Za-z0-9_]+$/.test(s)) return { kind: 'event', eventId: s };
  const zoned = /([zZ]|[+-]\d\d:?\d\d)$/.test(s) || /^\d{4}-\d\d-\d\d$/.test(s) ? s : `${s}Z`;
  const ms = Date.parse(zoned);
  if (!/^\d{4}-\d\d-\d\d/.test(s) || Number.isNaN(ms)) {
    throw new InvalidArgumentError(
      `--at ${JSON.stringify(s.slice(0, 80))}: not an event id (evt_…) or an ISO 8601 time (2026-12-01T14:05:00Z)`,
    );
  }
  return { kind: 'time', ts: new Date(ms).toISOString() };
}

export interface PastStatus extends StatusFacts {
  /** The moment, as a time (an event's own time when given as an event). */
  readonly at: string;
  /** The last event at or before the moment; null when the log had none yet. */
  readonly lastEventId: string | null;
}

/** The events up to and including the moment, in log order. */
export function eventsUpTo(events: readonly StoredEvent[], m: Moment): StoredEvent[] {
  return m.kind === 'event' ? events.filter((e) => e.event_id <= m.eventId) : events.filter((e) => e.ts <= m.ts);
}

/** The loop's position as its events tell it (see the header). */
export function loopPositionAt(events: readonly StoredEvent[]): Pick<LoopPosition, 'phase' | 'iteration' | 'current_item'> {
  let phase = DEFAULT_LOOP_POSITION.phase;
  let iteration = DEFAULT_LOOP_POSITION.iteration;
  const claims = new Map<string, string>();
  for (const e of events) {
    if (e.event_type === 'loop.started' || e.event_type === 'loop.resumed') phase = 'running';
    else if (e.event_type === 'loop.paused') phase = 'paused';
    else if (e.event_type === 'loop.stopped') {
      phase = 'stopped';
      const n = e.payload['iterations'];
      if (typeof n === 'number') iteration = n;
    } else if (e.entity_type === 'task' && e.event_type.startsWith('task.')) {
      if (e.event_type === 'task.claimed' && (e.payload['claimed_by'] ?? e.actor) === 'primary') claims.set(e.entity_id, e.ts);
      else if (typeof e.payload['new_status'] === 'string' || e.event_type === 'task.completed') claims.delete(e.entity_id);
    }
  }
  // STATE.json names a current task only while a loop runs.
  const running = phase === 'running' || phase === 'paused';
  const current = !running ? null : ([...claims.entries()].sort((a, b) => (a[1] < b[1] ? 1 : -1))[0]?.[0] ?? null);
  return { phase, iteration, current_item: current };
}

/** The status facts at moment `m`: the log replayed up to it through the control projections. */
export async function statusFactsAt(ctx: ControlContext, m: Moment): Promise<PastStatus> {
  const events = eventsUpTo(ctx.store.events(), m);
  const last = events[events.length - 1];
  const at = m.kind === 'time' ? m.ts : (last?.ts ?? new Date(0).toISOString());
  const SQL = await loadSqlJs();
  const db = new SqlDb(new SQL.Database());
  try {
    migrate(db, ':memory:');
    for (const p of CONTROL_PROJECTIONS) for (const s of p.ddl) db.exec(s);
    db.exec('BEGIN');
    for (const e of events) {
      db.run(
        'INSERT INTO events (event_id, ts, run_id, entity_type, entity_id, event_type, actor, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [e.event_id, e.ts, e.run_id, e.entity_type, e.entity_id, e.event_type, e.actor, JSON.stringify(e.payload)],
      );
      for (const p of CONTROL_PROJECTIONS) p.apply(db, e);
    }
    db.exec('COMMIT');
    const facts = statusFactsOf(db, loopPositionAt(events), new Date(at), () => perDayBudgetOf(ctx.projectDir));
    return { ...facts, at, lastEventId: last?.event_id ?? null };
  } finally {
    db.close();
  }
}

export { ReplayCursor, type ReplayCursorOptions } from './replayCursor';
