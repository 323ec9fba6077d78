// The replay cursor: a scratch database holding the log's first N events folded through the
// control projections, movable to any N (the monitor's time slider moves one). Kept apart
// from `status --at`'s one-off replay (timeTravel.ts), which needs none of its snapshots.
import type { Database, SqlJsStatic } from 'sql.js';
import { migrate } from '../store/schema';
import { loadSqlJs, SqlDb } from '../store/sqlDb';
import { copyPages } from '../store/pageCopy';
import { EVENT_COLUMNS, rowToEvent, type EventRow } from '../store/eventRows';
import type { SqlReader, StoredEvent } from '../store/types';
import { CONTROL_PROJECTIONS } from './views';

export interface ReplayCursorOptions {
  /**
   * Keep a snapshot of the projection tables every this many events as the log is folded
   * (default 1000); once there are more than MAX_SNAPSHOTS, every other one is dropped and
   * the spacing doubles.
   */
  readonly snapshotEvery?: number;
}

/**
 * Snapshots a cursor keeps at most (memory: each is a page image of the projection tables at
 * its position; at 100k events of scripts/bench/timeTravel.ts, spaced 1000 apart, they hold
 * 115 MB, outside the wasm heap; the undo log of every event, 140k records, some 15 MB).
 */
const MAX_SNAPSHOTS = 100;

/** An event undone costs about this many folded (the bench: all in SQL, no projection code runs). */
const UNDO_COST = 0.25;
/**
 * A snapshot restored costs about as much as this share of a spacing of events folded (a
 * page copy of a few MB: at 100k events, spaced 1000 apart, some 50 events' fold).
 */
const RESTORE_COST = 1 / 20;

/**
 * A scratch database holding the log's first `position` events (in event id order) folded
 * through the control projections, movable to any position. Forward it replays only the
 * events it has not seen. Backward it undoes: triggers on the projection tables record each
 * row's before-image as an event changes it, once per position (an undo log keyed by
 * position, kept for every event read), so going back k events puts back exactly the rows
 * those k events changed, in a few statements. A long move, either way, instead starts from
 * the nearest snapshot (a page image of the projection tables, rowids included, kept as the
 * fold passed its position): the one at or before the target, folding forward from it, or
 * the one after it, undoing back from it, whichever is cheaper; a restore copies pages, not
 * rows. The events table is a view of the cursor's own copy of the log it has read, up to the
 * position (its rowid, as in a fold from 0; its `SELECT *` has a `rowid` column too), so no
 * move writes event rows. The monitor's time slider moves one of these.
 */
export class ReplayCursor {
  private position = 0;
  private lastId: string | null = null;
  private readonly undo = new Map<string, { readonly restore: string; readonly triggers: readonly string[] }>();
  /**
   * Snapshot positions, each with the id of the last event folded in there and an image of
   * the projection tables then: a database of its own, a page copy of the cursor's main
   * schema (position 0's, the empty tables, is `empty`).
   */
  private readonly snapshots = new Map<number, { readonly lastId: string; readonly image: Database; readonly bytes: number }>();
  private every: number;
  private restoredCount = 0;
  /** The position of the snapshot keepExtraSnapshot() kept, while it is kept. */
  private extra: number | undefined;
  /** Events read from the log so far (the copy in replay_log holds exactly these). */
  private seen = 0;

  private readonly empty: Database;

  private constructor(
    private readonly SQL: SqlJsStatic,
    private readonly db: SqlDb,
    private readonly source: SqlReader,
    options: ReplayCursorOptions,
  ) {
    this.every = Math.max(1, Math.floor(options.snapshotEvery ?? 1000));
    this.empty = this.image();
  }

  /** A cursor at position 0 over the log that `source` reads (the live store). */
  static async open(source: SqlReader, options: ReplayCursorOptions = {}): Promise<ReplayCursor> {
    const SQL = await loadSqlJs();
    const db = new SqlDb(new SQL.Database());
    migrate(db, ':memory:');
    for (const p of CONTROL_PROJECTIONS) for (const s of p.ddl) db.exec(s);
    // INSERT OR REPLACE deletes the row it replaces: with recursive triggers that delete is recorded too.
    db.exec('PRAGMA recursive_triggers = ON');
    db.exec(
      'CREATE TEMP TABLE replay_undo (seq INTEGER PRIMARY KEY, pos INTEGER NOT NULL, tbl TEXT NOT NULL, op TEXT NOT NULL, rid INTEGER NOT NULL, data TEXT)',
    );
    db.exec('CREATE INDEX temp.idx_replay_undo_pos ON replay_undo(tbl, pos)');
    db.exec('CREATE TEMP TABLE replay_state (pos INTEGER NOT NULL, recording INTEGER NOT NULL)');
    // The events read so far, by position, with the events table's indexes. `events` is a view
    // of its first `pos` rows (the position is its rowid, as in a fold from 0), so a move,
    // however long, writes no event rows: it only sets the position.
    db.exec(
      'CREATE TEMP TABLE replay_log (pos INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, ts TEXT NOT NULL, run_id TEXT NOT NULL, entity_type TEXT NOT NULL, entity_id TEXT NOT NULL, event_type TEXT NOT NULL, actor TEXT NOT NULL, payload TEXT NOT NULL)',
    );
    db.exec('CREATE INDEX temp.idx_replay_log_entity ON replay_log(entity_type, entity_id)');
    db.exec('CREATE INDEX temp.idx_replay_log_type ON replay_log(event_type)');
    db.exec('CREATE INDEX temp.idx_replay_log_ts ON replay_log(ts)');
    db.exec('DROP TABLE main.events');
    db.exec(`CREATE TEMP VIEW events AS SELECT ${EVENT_COLUMNS}, pos AS rowid FROM replay_log WHERE pos <= (SELECT pos FROM replay_state)`);
    db.exec('INSERT INTO replay_state VALUES (0, 1)');
    const c = new ReplayCursor(SQL, db, source, options);
    for (const p of CONTROL_PROJECTIONS) for (const t of p.tables) c.recordChangesOf(t);
    return c;
  }

  /** The scratch database at the current position (read it, never write it). */
  get reader(): SqlReader {
    return this.db;
  }

  get at(): number {
    return this.position;
  }

  /** The id of the last event folded in; null at position 0. */
  get lastEventId(): string | null {
    return this.lastId;
  }

  /** The snapshots' images: how many, and their size in bytes (the bench prints it). */
  get snapshotImages(): { readonly count: number; readonly bytes: number } {
    let bytes = 0;
    for (const s of this.snapshots.values()) bytes += s.bytes;
    return { count: this.snapshots.size, bytes };
  }

  /** Moves taken from a snapshot so far (for tests and the bench). */
  get restores(): number {
    return this.restoredCount;
  }

  /** Moves to the first `target` events of the log (fewer when the log is shorter). */
  moveTo(target: number): void {
    const want = Math.max(0, Math.floor(target));
    // The cheapest of three starts, counted in events folded: from here (folding forward, or
    // undoing back at UNDO_COST an event); from the nearest snapshot at or before the target
    // (position 0 is the empty one), folding forward; from the nearest one after it, undoing
    // back. A restore counts RESTORE_COST spacings. The undo log covers every position read (1..seen).
    const here = want >= this.position ? want - this.position : (this.position - want) * UNDO_COST;
    const below = this.nearestSnapshot(want, -1) ?? 0;
    const above = want <= this.seen ? this.nearestSnapshot(want, 1) : undefined;
    const restore = RESTORE_COST * this.every;
    const fromBelow = restore + (want - below);
    const fromAbove = above === undefined ? Number.POSITIVE_INFINITY : restore + (above - want) * UNDO_COST;
    if (fromAbove < here && fromAbove <= fromBelow && above !== undefined) this.restore(above);
    else if (fromBelow < here) this.restore(below);
    if (want < this.position) this.back(want);
    while (this.position < want) {
      const n = Math.min(want - this.position, 1000, this.every - (this.position % this.every));
      const rows = this.source.all<EventRow>(
        this.lastId === null
          ? `SELECT ${EVENT_COLUMNS} FROM events ORDER BY event_id LIMIT ?`
          : `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id > ? ORDER BY event_id LIMIT ?`,
        this.lastId === null ? [n] : [this.lastId, n],
      );
      if (rows.length === 0) return; // the log is shorter than asked
      this.apply(rows.map(rowToEvent));
      if (this.position % this.every === 0) this.keepSnapshot();
      if (rows.length < n) return;
    }
  }

  /**
   * Keeps a snapshot at the current position besides the spaced ones, replacing the one it
   * kept before (the monitor keeps one at the live end, where no spaced one may be near).
   */
  keepExtraSnapshot(): void {
    const pos = this.position;
    if (pos === 0 || this.snapshots.has(pos) || this.lastId === null) return;
    if (this.extra !== undefined && this.extra !== pos) this.dropSnapshot(this.extra);
    this.extra = pos;
    this.keepSnapshot();
  }

  /** The snapshot position nearest `target` at or before it (`dir` -1) or at or after it (1). */
  private nearestSnapshot(target: number, dir: -1 | 1): number | undefined {
    let best: number | undefined;
    for (const pos of this.snapshots.keys()) {
      if ((pos - target) * dir >= 0 && (best === undefined || (best - pos) * dir > 0)) best = pos;
    }
    return best;
  }

  /**
   * A page copy of the cursor's main schema (the projection tables; the log and the undo
   * log are temp) in a database of its own. Its page cache is kept small: the pages live in
   * its file, which sql.js keeps in memory anyway.
   */
  private image(): Database {
    const image = new this.SQL.Database();
    try {
      image.exec('PRAGMA cache_size = 8');
      copyPages(this.SQL, image, 'main', this.db.raw, 'main');
    } catch (e) {
      image.close();
      throw e;
    }
    return image;
  }

  /** Keeps an image of the projection tables at the current position (once per position). */
  private keepSnapshot(): void {
    const pos = this.position;
    if (pos === 0 || this.snapshots.has(pos) || this.lastId === null) return;
    const image = this.image();
    this.snapshots.set(pos, { lastId: this.lastId, image, bytes: imageBytes(image) });
    if (this.snapshots.size > MAX_SNAPSHOTS + (this.extra === undefined ? 0 : 1)) {
      this.every *= 2;
      for (const p of [...this.snapshots.keys()]) if (p % this.every !== 0 && p !== this.extra) this.dropSnapshot(p);
    }
  }

  private dropSnapshot(pos: number): void {
    this.snapshots.get(pos)?.image.close();
    this.snapshots.delete(pos);
    if (this.extra === pos) this.extra = undefined;
  }

  /**
   * Puts the projection tables as snapshot `pos` holds them (position 0: empty), and the
   * position there. The undo log stays: it records what each event did, wherever the fold
   * that passed it started.
   * The tables are copied back page by page (no row inserted, no index rebuilt: a few ms
   * where copying 20k task rows took 50-70). The copy fires no trigger, so it records no
   * undo; the temp undo triggers on the tables outlive it and record the folds after it.
   */
  private restore(pos: number): void {
    const snap = pos === 0 ? { lastId: null, image: this.empty } : this.snapshots.get(pos);
    if (snap === undefined) return;
    const db = this.db;
    copyPages(this.SQL, db.raw, 'main', snap.image, 'main');
    db.run('UPDATE replay_state SET pos = ?', [pos]);
    this.position = pos;
    this.lastId = snap.lastId;
    this.restoredCount += 1;
  }

  close(): void {
    for (const s of this.snapshots.values()) s.image.close();
    this.snapshots.clear();
    this.empty.close();
    this.db.close();
  }

  /** Triggers that keep the before-image of every row of `table` an event inserts, updates or deletes. */
  private recordChangesOf(table: string): void {
    if (!/^[a-z_]+$/.test(table)) throw new Error(`replay cursor: unexpected table name ${table}`);
    const cols = this.db.all<{ name: string }>(`PRAGMA table_info(${table})`).map((c) => c.name);
    const old = `json_array(${cols.map((c) => `OLD."${c}"`).join(', ')})`;
    const record = (op: string, rid: string, data: string): string =>
      `INSERT INTO replay_undo (pos, tbl, op, rid, data) SELECT pos, '${table}', '${op}', ${rid}, ${data} FROM replay_state WHERE recording = 1;`;
    const values = cols.map((_, i) => `json_extract(data, '$[${i}]')`);
    this.undo.set(table, {
      // Each row's earliest record in (?2, ?3], by position then by the order its event wrote them.
      restore:
        `INSERT INTO main.${table} (rowid, ${cols.map((c) => `"${c}"`).join(', ')}) SELECT rid, ${values.join(', ')} FROM ` +
        `(SELECT rid, op, data, ROW_NUMBER() OVER (PARTITION BY rid ORDER BY pos, seq) AS k FROM replay_undo WHERE tbl = ?1 AND pos > ?2 AND pos <= ?3) ` +
        `WHERE k = 1 AND op <> 'i'`,
      triggers: [
        `CREATE TEMP TRIGGER replay_i_${table} AFTER INSERT ON main.${table} BEGIN ${record('i', 'NEW.rowid', 'NULL')} END`,
        `CREATE TEMP TRIGGER replay_u_${table} AFTER UPDATE ON main.${table} BEGIN ${record('u', 'OLD.rowid', old)} END`,
        `CREATE TEMP TRIGGER replay_d_${table} AFTER DELETE ON main.${table} BEGIN ${record('d', 'OLD.rowid', old)} END`,
      ],
    });
    for (const t of this.undo.get(table)?.triggers ?? []) this.db.exec(t);
  }

  /**
   * Undoes the events after position `want` up to the current one at once, table by table:
   * a row those events touched is deleted, then put back as the first of them found it (the
   * before-image of its earliest record; none when its first record is its insert).
   */
  private back(want: number): void {
    const db = this.db;
    db.exec('BEGIN');
    try {
      db.run('UPDATE replay_state SET recording = 0');
      for (const [t, u] of this.undo) {
        db.run(`DELETE FROM main.${t} WHERE rowid IN (SELECT rid FROM replay_undo WHERE tbl = ?1 AND pos > ?2 AND pos <= ?3)`, [
          t,
          want,
          this.position,
        ]);
        db.run(u.restore, [t, want, this.position]);
      }
      const last = want === 0 ? undefined : db.get<{ id: string }>('SELECT event_id AS id FROM replay_log WHERE pos = ?', [want]);
      db.run('UPDATE replay_state SET pos = ?', [want]);
      db.exec('COMMIT');
      this.position = want;
      this.lastId = last?.id ?? null;
    } catch (e) {
      db.rollbackQuietly();
      throw e;
    }
  }

  private apply(events: readonly StoredEvent[]): void {
    const db = this.db;
    db.exec('BEGIN');
    try {
      let pos = this.position;
      for (const e of events) {
        pos += 1;
        // The undo log already holds what a position read before did.
        db.run('UPDATE replay_state SET pos = ?, recording = ?', [pos, pos > this.seen ? 1 : 0]);
        if (pos > this.seen) {
          db.run(`INSERT INTO replay_log (pos, ${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
            pos,
            ...[e.event_id, e.ts, e.run_id, e.entity_type, e.entity_id, e.event_type, e.actor, JSON.stringify(e.payload)],
          ]);
        }
        for (const p of CONTROL_PROJECTIONS) p.apply(db, e);
      }
      db.exec('COMMIT');
    } catch (e) {
      db.rollbackQuietly();
      throw e;
    }
    this.position += events.length;
    this.seen = Math.max(this.seen, this.position);
    this.lastId = events[events.length - 1]?.event_id ?? this.lastId;
  }
}

/** The size of an image's file: its pages. */
function imageBytes(image: Database): number {
  const r = image.exec('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()')[0]?.values[0]?.[0];
  return typeof r === 'number' ? r : 0;
}
