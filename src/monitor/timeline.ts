// The monitor at a past moment (its time slider): the log's first N events replayed through
// the control projections by a ReplayCursor (src/control/timeTravel.ts), and the same
// snapshot code as the live monitor run over that scratch database with `now` at the moment.
// What only the present knows (running agents, log lines, STATE.json) is left out; the
// loop's run state comes from its own events up to the moment.
//
// So that no move, the first included, folds the log from its start, `prefold()` walks the
// cursor to the live end in the background, in slices of a few milliseconds between which
// the event loop runs; the cursor keeps a snapshot every 250 events as it goes (fewer, further
// apart, on a long log: 1,000 at 100k events) and one at the live end, and a move then folds
// forward from the nearest one before it or undoes back from the nearest one after it.
import type { LoopRun, MonitorSnapshot } from '../protocol/monitor';
import { ReplayCursor } from '../control/timeTravel';
import type { SqlReader } from '../store/types';
import { buildMonitorSnapshot, createSnapshotCache, readTaskEvents } from './snapshot';
import type { TaskEventRow } from './series';
import { EventTimes } from './eventTimes';
import { firstTrue } from './firstTrue';
import { FlowIndex } from './flowIndex';
import type { SnapshotInput } from './snapshot';

const LOOP_LIFECYCLE = ['loop.started', 'loop.resumed', 'loop.paused', 'loop.stopped'];

/** How long one background slice of the prefold may hold the event loop. */
const PREFOLD_SLICE_MS = 8;
/** Events folded per step within a slice. */
const PREFOLD_STEP = 50;
/** The replay cursor's first snapshot spacing (see TimelineOptions.snapshotEvery). */
const SNAPSHOT_EVERY = 250;

export interface TimelineOptions {
  /** The live log (the store). */
  readonly source: SqlReader;
  /** `.ralph/logs` */
  readonly logsDir: string;
  /**
   * The cursor's first snapshot spacing, in events (default 250: a move folds at most that
   * many; the cursor doubles it as the log outgrows its count of snapshots).
   */
  readonly snapshotEvery?: number;
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
  /** Every history row has a time and their ids ascend (a log in time order). */
  private historyPlain = true;
  /** The plain history's flow counts and runs (rebuilt when a re-sort changes it). */
  private flowIndex = new FlowIndex();
  /** The highest position the cursor has folded to (its snapshots reach up to here). */
  private frontier = 0;
  private readonly times = new EventTimes();
  private counted: { readonly newest: string | null; readonly n: number } | undefined;
  private prefolding: Promise<void> | undefined;
  private disposed = false;

  constructor(private readonly o: TimelineOptions) {}

  /**
   * Folds the log up to its live end in the background (see the header); resolves when it
   * got there, or when the timeline is disposed. Calling it again returns the same promise
   * until then, and afterwards starts a walk to the new end.
   */
  prefold(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.prefolding ??= this.walkToEnd().finally(() => {
      this.prefolding = undefined;
    });
    return this.prefolding;
  }

  private async walkToEnd(): Promise<void> {
    const cursor = await this.openCursor();
    // The flow chart's history too, read once here rather than on the first move.
    this.readHistory();
    for (;;) {
      await new Promise<void>((r) => setImmediate(r));
      if (this.disposed) return;
      const total = this.liveCount();
      if (this.frontier >= total) {
        // A snapshot at the live end too: a move near it then undoes from there.
        if (cursor.at === this.frontier) cursor.keepExtraSnapshot();
        return;
      }
      // A move may have taken the cursor back: the first step starts again from the
      // snapshot nearest the frontier.
      const t0 = performance.now();
      do {
        cursor.moveTo(Math.min(total, this.frontier + PREFOLD_STEP));
        this.frontier = Math.max(this.frontier, cursor.at);
      } while (this.frontier < total && performance.now() - t0 < PREFOLD_SLICE_MS);
      this.times.extend(cursor.reader);
    }
  }

  /** The snapshot after the log's first `index` events (1-based count; clamped to the log). */
  async snapshotAt(index: number, input: Pick<SnapshotInput, 'project'> = {}): Promise<MonitorSnapshot> {
    const cursor = await this.openCursor();
    // One min() or max() a query reads from the ts index; both in one would scan the log.
    const live = {
      first: this.o.source.get<{ ts: string | null }>('SELECT MIN(ts) AS ts FROM events')?.ts ?? null,
      last: this.o.source.get<{ ts: string | null }>('SELECT MAX(ts) AS ts FROM events')?.ts ?? null,
    };
    const total = this.liveCount();
    cursor.moveTo(Math.min(Math.max(1, index), total));
    this.frontier = Math.max(this.frontier, cursor.at);
    const db = cursor.reader;
    this.times.extend(db);
    const lastId = cursor.lastEventId;
    const last = lastId === null ? undefined : db.get<{ ts: string }>('SELECT ts FROM events WHERE event_id = ?', [lastId]);
    const at = last ? new Date(last.ts) : new Date(live?.first ?? 0);
    const snap = buildMonitorSnapshot(db, this.o.logsDir, Number.isNaN(at.getTime()) ? new Date(0) : at, {
      ...input,
      run: runAt(db),
      past: true,
      eventIndex: this.times.at(db, cursor.at),
      cache: { rows: [], lastEventId: null, flow: null, metricsFiles: this.metricsFiles },
      ...this.historyInput(lastId),
    });
    snap.timeline = {
      total,
      firstTs: live?.first ?? null,
      lastTs: live?.last ?? null,
      at: lastId === null || !last ? null : { index: cursor.at, eventId: lastId, ts: last.ts },
    };
    return snap;
  }

  /**
   * The live log's event count. Counting reads the whole log (tens of ms at 100k events), so
   * it is counted again only when the log's newest event id moved: the log only grows.
   */
  private liveCount(): number {
    const newest = this.o.source.get<{ id: string | null }>('SELECT MAX(event_id) AS id FROM events')?.id ?? null;
    if (this.counted?.newest !== newest) {
      this.counted = { newest, n: this.o.source.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n ?? 0 };
    }
    return this.counted.n;
  }

  private openCursor(): Promise<ReplayCursor> {
    this.cursor ??= ReplayCursor.open(this.o.source, { snapshotEvery: this.o.snapshotEvery ?? SNAPSHOT_EVERY });
    return this.cursor;
  }

  /** Moves the cursor has taken from a snapshot (tests and the bench). */
  async restores(): Promise<number> {
    return (await this.openCursor()).restores;
  }

  /**
   * The task history of the log up to and including event `id`, the rows with a time only:
   * as the flow index's prefix when the history is plain, else as its rows.
   */
  private historyInput(id: string | null): Pick<SnapshotInput, 'history' | 'taskFlow'> {
    if (id === null) return { history: [] };
    this.readHistory();
    const h = this.history;
    if (!this.historyPlain) return { history: h.filter((x) => x.id <= id && !Number.isNaN(x.row.tsMs)).map((x) => x.row) };
    // Ids ascend along the history: its part up to `id` is a prefix, found by bisection.
    const n = firstTrue(h.length, (i) => (h[i]?.id ?? '') > id);
    const index = this.flowIndex;
    return {
      taskFlow: {
        runWindow: (lines, nowMs, running) => index.runWindow(lines, n, nowMs, running),
        flow: (window, maxBuckets) => index.flow(n, window, maxBuckets),
      },
    };
  }

  /** Reads the live log's task events not read yet into the history. */
  private readHistory(): void {
    const fresh = readTaskEvents(this.o.source, this.historyMax);
    if (fresh.length > 0) {
      const lastTs = this.history.at(-1)?.row.tsMs ?? Number.NEGATIVE_INFINITY;
      const from = this.history.length;
      this.history.push(...fresh);
      for (const f of fresh) if (this.historyMax === null || f.id > this.historyMax) this.historyMax = f.id;
      if ((fresh[0]?.row.tsMs ?? lastTs) < lastTs) {
        this.history.sort((a, b) => a.row.tsMs - b.row.tsMs || (a.id < b.id ? -1 : 1));
        this.historyPlain = plainFrom(this.history, 0, true);
        this.flowIndex = new FlowIndex(); // its rows' order changed
      } else this.historyPlain = plainFrom(this.history, from, this.historyPlain);
      if (!this.historyPlain) this.flowIndex = new FlowIndex();
      else if (this.flowIndex.length < this.history.length)
        this.flowIndex.extend(this.history.slice(this.flowIndex.length).map((x) => x.row));
    }
  }

  dispose(): void {
    this.disposed = true;
    void this.cursor?.then((c) => c.close());
    this.cursor = undefined;
  }
}

/** Whether `h` from `from` on keeps `plain` (every row timed, ids ascending). */
function plainFrom(h: readonly { readonly id: string; readonly row: TaskEventRow }[], from: number, plain: boolean): boolean {
  if (!plain) return false;
  for (let i = from; i < h.length; i++) {
    const x = h[i];
    if (!x || Number.isNaN(x.row.tsMs) || (i > 0 && (h[i - 1]?.id ?? '') >= x.id)) return false;
  }
  return true;
}

/** Whether a loop ran at the cursor's moment: its last lifecycle event says. */
function runAt(db: SqlReader): LoopRun {
  const e = db.get<{ event_type: string }>(
    `SELECT event_type FROM events WHERE event_type IN (${LOOP_LIFECYCLE.map(() => '?').join(', ')}) ORDER BY event_id DESC LIMIT 1`,
    LOOP_LIFECYCLE,
  )?.event_type;
  return e === 'loop.started' || e === 'loop.resumed' ? 'running' : e === 'loop.paused' ? 'paused' : 'stopped';
}
