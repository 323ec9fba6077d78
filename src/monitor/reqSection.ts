// The monitor's REQ section: the project's specification.yaml folded with the req.* events
// of the database the snapshot reads (the live store, or the time slider's replay), the same
// fold `ralph req status` and the Requirements view use (src/req/view.ts). Plus where the
// current REQ's round is: the agent still writing, or the verification layer running now,
// from the round's req.layer events and the req agent's last invocation.
import { InvalidEventError, readEvent } from '../domain/events';
import type { RecordedEvent } from '../domain/events';
import { REQ_LAYERS } from '../domain/reqEvents';
import type { ReqView } from '../domain/reqStatus';
import type { ReqSection } from '../protocol/monitor';
import { quoteId } from '../domain/ids';
import { eventsQuery, rowToEvent } from '../store/eventRows';
import type { EventRow } from '../store/eventRows';
import type { SqlReader } from '../store/types';
import { reqProjectView } from '../req/view';

/** How many learnings the section lists. */
export const REQ_SECTION_LEARNINGS = 5;

type Layers = NonNullable<ReqSection['current']>['layers'];

/** The req.* events read so far, so the live monitor reads only the new ones each build. */
export interface ReqEventsCache {
  events: RecordedEvent[];
  ids: string[];
  /** Rows read, valid or not, and the last one's id. */
  rows: number;
  lastId: string | null;
  /** One line per event that did not validate (repeated in every snapshot's warnings). */
  problems: string[];
}

export function createReqEventsCache(): ReqEventsCache {
  return { events: [], ids: [], rows: 0, lastId: null, problems: [] };
}

/** The req.* events in append order; one that does not validate is named in `problems` and left out. */
function reqEventsOf(db: SqlReader, cache: ReqEventsCache): ReqEventsCache {
  const total = db.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE entity_type = 'req'")?.n ?? 0;
  const q = eventsQuery(cache.lastId === null ? { entityType: 'req' } : { entityType: 'req', afterId: cache.lastId });
  const fresh = db.all<EventRow>(q.sql, q.params);
  // The log was rebuilt or replaced under us (or an id sorts before the last one): read it all again.
  if (cache.lastId !== null && cache.rows + fresh.length !== total) return reqEventsOf(db, Object.assign(cache, createReqEventsCache()));
  for (const row of fresh) {
    cache.rows += 1;
    cache.lastId = row.event_id;
    try {
      const e = readEvent(rowToEvent(row));
      if (e) {
        cache.events.push(e);
        cache.ids.push(row.event_id);
      }
    } catch (err) {
      if (!(err instanceof InvalidEventError)) throw err;
      cache.problems.push(`req event ${quoteId(row.event_id)} (${row.event_type}) left out: ${err.message}`);
    }
  }
  return cache;
}

/** The current round's layers and step, from its events after its req.started. */
function roundProgress(
  db: SqlReader,
  id: string,
  events: readonly RecordedEvent[],
  ids: readonly string[],
): { step: string; layers: Layers } {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--)
    if (events[i]?.type === 'req.started' && events[i]?.entity_id === id) {
      start = i;
      break;
    }
  const ran = new Map<string, boolean>();
  let failedAt: string | null = null;
  for (const e of events.slice(start + 1)) {
    if (e.entity_id !== id) continue;
    if (e.type === 'req.layer') ran.set(e.data.layer, e.data.ok);
    else if (e.type === 'req.round_failed') failedAt = e.data.layer;
  }
  // No layer yet: the agent writes, unless its invocation of this round already finished.
  const startId = ids[start];
  const lastAgent =
    startId === undefined
      ? undefined
      : db.get<{ event_type: string }>(
          "SELECT event_type FROM events WHERE entity_type = 'agent' AND entity_id = 'req' AND event_id > ? ORDER BY event_id DESC LIMIT 1",
          [startId],
        )?.event_type;
  const agentDone = ran.size > 0 || lastAgent === 'agent.finished';
  // A round that failed before any layer (timeout, no change, a bad answer) runs nothing now.
  let step = failedAt ?? (agentDone ? '' : 'agent');
  const layers: Layers = REQ_LAYERS.map((layer) => {
    const ok = ran.get(layer);
    if (ok !== undefined) {
      if (!ok) step ||= layer;
      return { layer, state: ok ? 'passed' : 'failed' };
    }
    if (step === '') {
      step = layer;
      return { layer, state: 'running' };
    }
    return { layer, state: 'waiting' };
  });
  return { step: step || 'commit', layers };
}

function section(view: ReqView, rounds: number, db: SqlReader, events: RecordedEvent[], ids: string[]): ReqSection {
  const count = (...s: string[]): number => view.rows.filter((r) => s.includes(r.status)).length;
  const cur = view.current ? view.rows.find((r) => r.id === view.current) : undefined;
  const status = new Map(view.rows.map((r) => [r.id, r.status]));
  return {
    state: view.runState,
    total: view.rows.length,
    done: count('done'),
    pending: count('pending', 'in_progress'),
    blocked: count('blocked', 'blocked_auto', 'manual'),
    skipped: count('skipped'),
    iteration: view.iteration,
    maxIterations: view.maxIterations,
    levels: view.layers.map((l) => ({ done: l.filter((id) => status.get(id) === 'done').length, total: l.length })),
    current: cur
      ? { id: cur.id, title: cur.title, round: cur.round, rounds, lastFailure: cur.lastFailure, ...roundProgress(db, cur.id, events, ids) }
      : null,
    learnings: [...view.learnings]
      .reverse()
      .slice(0, REQ_SECTION_LEARNINGS)
      .map((l) => ({ text: l.text, kind: l.kind, source: l.source })),
    permanentLearnings: view.learnings.filter((l) => l.kind === 'permanent').length,
    blockedReqs: view.rows
      .filter((r) => r.status === 'blocked' || r.status === 'blocked_auto' || r.status === 'manual')
      .map((r) => ({
        id: r.id,
        title: r.title,
        auto: r.status === 'blocked_auto',
        why:
          r.status === 'blocked_auto'
            ? `waits on ${r.blockedBy ?? 'a blocked REQ'}, which is blocked`
            : r.status === 'manual'
              ? 'being fixed by hand (decided: manual)'
              : (r.blockReason ?? 'blocked'),
        options: r.status === 'blocked' ? [...r.options] : [],
      })),
    cycle: view.cycle ? [...view.cycle] : null,
    problem: null,
  };
}

/**
 * The REQ section of `projectDir`, or null when it has no specification file. A
 * specification that does not load is a section with only its problem.
 */
export function readReqSection(
  db: SqlReader,
  projectDir: string,
  warnings: string[],
  cache: ReqEventsCache = createReqEventsCache(),
): ReqSection | null {
  let read: ReqEventsCache | undefined;
  const events = (): RecordedEvent[] => (read ??= reqEventsOf(db, cache)).events;
  // Without a specification file nothing is read from the log.
  const p = reqProjectView(projectDir, events);
  if (p === null) return null;
  warnings.push(...(read?.problems ?? []));
  const ids = read?.ids ?? [];
  if ('problem' in p) {
    return {
      state: 'idle',
      total: 0,
      done: 0,
      pending: 0,
      blocked: 0,
      skipped: 0,
      iteration: 0,
      maxIterations: 0,
      levels: [],
      current: null,
      learnings: [],
      permanentLearnings: 0,
      blockedReqs: [],
      cycle: null,
      problem: p.problem,
    };
  }
  const s = section(p.view, p.settings.rounds, db, events(), ids);
  // A cycle folds in file order: the chain is the report's.
  return p.report.cycle ? { ...s, state: 'WAIT_USER', cycle: p.report.cycle } : s;
}
