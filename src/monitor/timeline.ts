// The monitor at a past moment (its time slider): the log's first N events replayed through
// the control projections by a ReplayCursor (src/control/timeTravel.ts), and the same
// snapshot code as the live monitor run over that scratch database with `now` at the moment.
// What only the present knows (running agents, log lines, STATE.json) is left out; the
// loop's run state comes from its own events up to the moment.
import type { LoopRun, MonitorSnapshot } from '../protocol/monitor';
import { ReplayCursor } from '../control/timeTravel';
import type { SqlReader } from '../store/types';
import { buildMonitorSnapshot, createSnapshotCache, readTaskEvents } from './snapshot';
import type { TaskEventRow } from './series';
import type { SnapshotInput } from './snapshot';

const LOOP_LIFECYCLE = ['loop.started', 'loop.resumed', 'loop.paused', 'loop.stopped'];

export interface TimelineOptions {
  /** The live log (the store). */
  readonly source: SqlReader;
  /** `.ralph/logs` */
  readonly logsDir: string;
}

export class MonitorTimeline {
  private cursor: Promise<ReplayCursor> | undefined;
  private readonly metricsFiles = createSnapshotCache().metricsFiles;
  /**
   * The live log's task events in time order, read once and then incrementally: a moment's
   * task history is the prefix of these up to its last event, so the flow chart needs no
   * re-read of the log per move.
   */
  private history: { readonly id: string; readonly row: TaskEventRow }[] = [];
  private historyMax: string | null = null;

  constructor(private readonly o: TimelineOptions) {}

  /** The snapshot after the log's first `index` events (1-based count; clamped to the log). */
  async snapshotAt(index: number, input: Pick<SnapshotInput, 'project'> = {}): Promise<MonitorSnapshot> {
    this.cursor ??= ReplayCursor.open(this.o.source);
    const cursor = await this.cursor;
    const live = this.o.source.get<{ n: number; first: string | null; last: string | null }>(
      'SELECT COUNT(*) AS n, MIN(ts) AS first, MAX(ts) AS last FROM events',
    );
    const total = live?.n ?? 0;
    cursor.moveTo(Math.min(Math.max(1, index), total));
    const db = cursor.reader;
    const lastId = cursor.lastEventId;
    const last = lastId === null ? undefined : db.get<{ ts: string }>('SELECT ts FROM events WHERE event_id = ?', [lastId]);
    const at = last ? new Date(last.ts) : new Date(live?.first ?? 0);
    const snap = buildMonitorSnapshot(db, this.o.logsDir, Number.isNaN(at.getTime()) ? new Date(0) : at, {
      ...input,
      run: runAt(db),
      past: true,
      cache:
        lastId === null
          ? { rows: [], lastEventId: null, metricsFiles: this.metricsFiles }
          : { rows: this.historyUpTo(lastId), lastEventId: lastId, metricsFiles: this.metricsFiles },
    });
    snap.timeline = {
      total,
      firstTs: live?.first ?? null,
      lastTs: live?.last ?? null,
      at: lastId === null || !last ? null : { index: cursor.at, eventId: lastId, ts: last.ts },
    };
    return snap;
  }

  /** The task history of the log up to and including event `id` (the snapshot's cache checks its count). */
  private historyUpTo(id: string): TaskEventRow[] {
    const fresh = readTaskEvents(this.o.source, this.historyMax);
    if (fresh.length > 0) {
      const lastTs = this.history.at(-1)?.row.tsMs ?? Number.NEGATIVE_INFINITY;
      this.history.push(...fresh);
      for (const f of fresh) if (this.historyMax === null || f.id > this.historyMax) this.historyMax = f.id;
      if ((fresh[0]?.row.tsMs ?? lastTs) < lastTs) this.history.sort((a, b) => a.row.tsMs - b.row.tsMs || (a.id < b.id ? -1 : 1));
    }
    return this.history.filter((h) => h.id <= id).map((h) => h.row);
  }

  dispose(): void {
    void this.cursor?.then((c) => c.close());
    this.cursor = undefined;
  }
}

/** Whether a loop ran at the cursor's moment: its last lifecycle event says. */
function runAt(db: SqlReader): LoopRun {
  const e = db.get<{ event_type: string }>(
    `SELECT event_type FROM events WHERE event_type IN (${LOOP_LIFECYCLE.map(() => '?').join(', ')}) ORDER BY event_id DESC LIMIT 1`,
    LOOP_LIFECYCLE,
  )?.event_type;
  return e === 'loop.started' || e === 'loop.resumed' ? 'running' : e === 'loop.paused' ? 'paused' : 'stopped';
}
