// The sql.js adapter of the EventStore port: the database lives in memory, every command's
// events are made durable by the journal (one fsync, group commit), and a throttled
// checkpoint writes .ralph/ralph.db atomically and trims the journal. One writer holds
// .ralph/locks/writer.lock; observers read ralph.db plus the journal's tail.
import { redactValue } from '../shared/redaction';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SqlJsStatic } from 'sql.js';
import { fsyncDirSync, isAtomicTempOf, writeFileAtomic, writeFileAtomicSync } from '../shared/fs';
import { ReadOnlyStoreError, StoreClosedError, StoreCorruptError, StoreFailedError } from './errors';
import { EventIdGenerator, defaultRunId, isoTimestamp, type Clock } from './eventIds';
import { EVENT_COLUMNS, INSERT_EVENT, checkNewEvent, rowToEvent, type EventRow } from './eventRows';
import { readWithStamp, readWithStampAsync, sameStamp, statOrUndefined, type FileRead, type FileStamp } from './fileStamp';
import { JOURNAL_FILE, JournalAppender, encodeRecord, readJournalSync, type JournalRecord } from './journal';
import { migrate } from './schema';
import { SqlDb, loadSqlJs } from './sqlDb';
import type {
  Decision,
  Disposable,
  EventStore,
  NewEvent,
  Projection,
  SqlParams,
  SqlReader,
  SqlRow,
  StoreMode,
  StoreStats,
  StoredEvent,
} from './types';
import { LOCK_FILE, WriterLock, type Takeover } from './writerLock';

export const DB_FILE = 'ralph.db';
export const LOCKS_DIR = 'locks';

export interface OpenStoreOptions {
  /** The `.ralph` directory (created for the writer when missing). */
  readonly ralphDir: string;
  readonly mode: StoreMode;
  readonly projections: readonly Projection[];
  /** Defaults to run_YYYYMMDD_<pid>. */
  readonly runId?: string;
  /** sql-wasm.wasm; defaults to the one beside the bundle or in node_modules. */
  readonly wasmPath?: string;
  /** Longest time an acknowledged event waits in the journal before ralph.db is rewritten (default 1000 ms). */
  readonly checkpointDebounceMs?: number;
  /** Wall clock in ms (tests step it back). */
  readonly clock?: Clock;
  /** A lock whose heartbeat is older than this is taken over (default 30 s). */
  readonly lockStaleMs?: number;
  /** Heartbeat period of the writer lock (default 5 s). */
  readonly heartbeatMs?: number;
}

class SqlJsEventStore implements EventStore {
  readonly dbPath: string;
  private readonly journalPath: string;
  private readonly ids: EventIdGenerator;
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();
  private inTransaction = false;
  private closed = false;
  private failure: StoreFailedError | undefined;
  private dirty = false;
  private checkpointTimer: NodeJS.Timeout | undefined;
  private checkpointChain: Promise<void> = Promise.resolve();
  private exitHandler: (() => void) | undefined;
  private appender: JournalAppender | undefined;
  private lock: WriterLock | undefined;
  // observer bookkeeping
  private dbStamp: FileStamp | undefined;
  private journalIno = 0;
  private journalOffset = 0;
  private lastSeenId = '';
  // counters
  private commands = 0;
  private eventsAppended = 0;
  private checkpoints = 0;
  private dbBytes = 0;
  private replayed = 0;
  private reloads = 0;
  private torn = 0;
  private lastError: string | undefined;
  private lastExportMs = 0;
  private lastCheckpointMs = 0;
  /** Leading journal bytes already covered by ralph.db (the checkpoint header). */
  private journalHeaderBytes = 0;

  constructor(
    private readonly SQL: SqlJsStatic,
    private db: SqlDb,
    readonly mode: StoreMode,
    readonly runId: string,
    private readonly ralphDir: string,
    private readonly projections: readonly Projection[],
    private readonly clock: Clock,
    private readonly debounceMs: number,
  ) {
    this.dbPath = path.join(ralphDir, DB_FILE);
    this.journalPath = path.join(ralphDir, JOURNAL_FILE);
    this.ids = new EventIdGenerator(clock);
  }

  // ---- open ---------------------------------------------------------------------------

  /** Loads ralph.db (or an empty database), migrates it and brings the projections in step. */
  static loadDatabase(
    SQL: SqlJsStatic,
    dbPath: string,
    projections: readonly Projection[],
    file: FileRead | undefined = readWithStamp(dbPath),
  ): { db: SqlDb; stamp: FileStamp | undefined; bytes: number; changed: boolean } {
    let raw;
    try {
      raw = file && file.data.length > 0 ? new SQL.Database(file.data) : new SQL.Database();
    } catch (e) {
      throw new StoreCorruptError(dbPath, `cannot be opened as SQLite: ${(e as Error).message}`);
    }
    const db = new SqlDb(raw);
    try {
      db.get('SELECT count(*) AS n FROM sqlite_master');
    } catch (e) {
      db.close();
      throw new StoreCorruptError(dbPath, `is not a valid SQLite database: ${(e as Error).message}`);
    }
    // The database file lives in sql.js's in-memory FS and only this connection uses it:
    // an exclusive lock keeps the page cache across transactions (no re-validation per
    // commit), and a memory rollback journal still makes ROLLBACK work. Durability is the
    // event journal's job, not SQLite's.
    db.exec(
      'PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; ' +
        'PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;',
    );
    const applied = migrate(db, dbPath);
    const rebuilt = SqlJsEventStore.syncProjections(db, projections);
    return { db, stamp: file?.stamp, bytes: file?.data.length ?? 0, changed: applied.length > 0 || rebuilt };
  }

  /** Runs every projection's DDL; rebuilds those whose stored version differs. */
  private static syncProjections(db: SqlDb, projections: readonly Projection[]): boolean {
    let rebuilt = false;
    db.exec('BEGIN');
    try {
      for (const p of projections) {
        const row = db.get<{ version: number }>('SELECT version FROM ralph_projections WHERE name = ?', [p.name]);
        if (row && row.version === p.version) {
          for (const s of p.ddl) db.exec(s);
          continue;
        }
        // New or changed projection: its tables may have an old shape, so recreate them.
        for (const t of p.tables) db.exec(`DROP TABLE IF EXISTS "${t.replace(/"/g, '""')}"`);
        for (const s of p.ddl) db.exec(s);
        SqlJsEventStore.replayInto(db, [p]);
        db.run('INSERT OR REPLACE INTO ralph_projections(name, version, rebuilt_at) VALUES (?, ?, ?)', [
          p.name,
          p.version,
          new Date().toISOString(),
        ]);
        rebuilt = true;
      }
      db.exec('COMMIT');
    } catch (e) {
      db.rollbackQuietly();
      throw e;
    }
    return rebuilt;
  }

  private static replayInto(db: SqlDb, projections: readonly Projection[]): void {
    if (projections.length === 0) return;
    const rows = db.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY event_id`);
    for (const r of rows) {
      const e = rowToEvent(r);
      for (const p of projections) p.apply(db, e);
    }
  }

  /** Applies journal events the database lacks, in journal order; returns how many. */
  private replayJournal(records: readonly JournalRecord[]): number {
    let n = 0;
    if (records.length === 0) return 0;
    this.db.exec('BEGIN');
    try {
      for (const rec of records) {
        for (const e of rec.events) {
          this.ids.observe(e.event_id);
          if (this.db.get('SELECT 1 AS x FROM events WHERE event_id = ?', [e.event_id])) continue;
          this.insertAndApply(e);
          n++;
        }
      }
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.rollbackQuietly();
      throw e;
    }
    return n;
  }

  private insertAndApply(e: StoredEvent): void {
    this.db.run(INSERT_EVENT, [e.event_id, e.ts, e.run_id, e.entity_type, e.entity_id, e.event_type, e.actor, JSON.stringify(e.payload)]);
    for (const p of this.projections) p.apply(this.db, e);
  }

  private maxEventId(): string {
    return this.db.get<{ m: string | null }>('SELECT max(event_id) AS m FROM events')?.m ?? '';
  }

  async openWriter(dbExisted: boolean, changed: boolean): Promise<void> {
    this.ids.observe(this.maxEventId());
    const scan = readJournalSync(this.journalPath);
    this.replayed += this.replayJournal(scan.records);
    // Journal bytes whose events ralph.db already holds need no checkpoint at close.
    if (this.replayed === 0) this.journalHeaderBytes = scan.validEnd;
    this.torn += scan.tornBytes;
    if (scan.tornBytes > 0) {
      // Cut the torn tail off so the next append does not land behind garbage.
      const fd = fs.openSync(this.journalPath, 'r+');
      try {
        fs.ftruncateSync(fd, scan.validEnd);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    const created = !fs.existsSync(this.journalPath);
    this.appender = await JournalAppender.open(this.journalPath, scan.validEnd, () => {
      // Never write into a journal another writer now owns.
      if (this.lock && !this.lock.verify()) throw this.failure ?? new StoreFailedError('the writer lock was taken over by another process');
    });
    if (created) fsyncDirSync(this.ralphDir); // the journal's directory entry must survive a crash too
    this.exitHandler = () => this.exitCheckpoint();
    process.on('exit', this.exitHandler);
    if (!dbExisted || changed || this.replayed > 0) {
      this.dirty = true;
      await this.checkpoint();
    }
  }

  /** Undoes a half-finished open: no checkpoint, no lock (the caller releases it). */
  abandon(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    if (this.exitHandler) process.off('exit', this.exitHandler);
    this.closed = true;
    void this.appender?.close().catch(() => undefined);
    this.db.close();
  }

  recordTakeover(t: Takeover): Promise<StoredEvent[]> {
    return this.append([
      {
        entity_type: 'run',
        entity_id: this.runId,
        event_type: 'lock.taken_over',
        actor: 'store',
        payload: { previous: t.previous ?? null, reason: t.reason },
      },
    ]);
  }

  attachLock(lock: WriterLock): void {
    this.lock = lock;
  }

  onLockLost(): void {
    this.failure = new StoreFailedError('the writer lock was removed or taken over by another process');
  }

  openObserver(stamp: FileStamp | undefined): void {
    this.dbStamp = stamp;
    this.readJournalTail();
    this.lastSeenId = this.maxEventId();
  }

  // ---- reading ------------------------------------------------------------------------

  all<R extends object = SqlRow>(sql: string, params?: SqlParams): R[] {
    this.assertOpen();
    return this.db.all<R>(sql, params);
  }

  get<R extends object = SqlRow>(sql: string, params?: SqlParams): R | undefined {
    this.assertOpen();
    return this.db.get<R>(sql, params);
  }

  events(filter: { afterId?: string; entityType?: string; entityId?: string; limit?: number } = {}): StoredEvent[] {
    this.assertOpen();
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.afterId !== undefined) {
      where.push('event_id > ?');
      params.push(filter.afterId);
    }
    if (filter.entityType !== undefined) {
      where.push('entity_type = ?');
      params.push(filter.entityType);
    }
    if (filter.entityId !== undefined) {
      where.push('entity_id = ?');
      params.push(filter.entityId);
    }
    let sql = `SELECT ${EVENT_COLUMNS} FROM events`;
    if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
    sql += ' ORDER BY event_id';
    if (filter.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(Math.max(0, Math.floor(filter.limit)));
    }
    return this.db.all<EventRow>(sql, params).map(rowToEvent);
  }

  onDidAppend(listener: (events: readonly StoredEvent[]) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private fire(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    for (const l of [...this.listeners]) {
      try {
        l(events);
      } catch {
        // A failing listener must not turn an acknowledged command into an error.
      }
    }
  }

  stats(): StoreStats {
    return {
      commands: this.commands,
      eventsAppended: this.eventsAppended,
      fsyncs: this.appender?.fsyncs ?? 0,
      checkpoints: this.checkpoints,
      journalBytes: this.mode === 'writer' ? (this.appender?.size ?? 0) : this.journalOffset,
      dbBytes: this.dbBytes,
      replayedEvents: this.replayed,
      tornBytes: this.torn,
      dbReloads: this.reloads,
      lastExportMs: this.lastExportMs,
      lastCheckpointMs: this.lastCheckpointMs,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  setDbBytes(n: number): void {
    this.dbBytes = n;
  }

  // ---- writing ------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

  private assertWritable(operation: string): void {
    this.assertOpen();
    if (this.mode !== 'writer') throw new ReadOnlyStoreError(operation);
    if (this.failure) throw this.failure;
  }

  /** The synchronous part of execute: decide, stamp, insert, project, commit. */
  private commit<T>(decide: (db: SqlReader) => Decision<T>): { result: T; events: StoredEvent[] } {
    if (this.inTransaction) throw new Error('execute() was called from inside a decide or a projection; commands do not nest');
    this.db.run('BEGIN');
    this.inTransaction = true;
    try {
      const decision = decide(this.db);
      const stored: StoredEvent[] = [];
      const ms = this.clock();
      const ts = isoTimestamp(ms);
      decision.events.forEach((e, i) => {
        checkNewEvent(e, i);
        const s: StoredEvent = {
          event_id: this.ids.next(),
          ts,
          run_id: this.runId,
          entity_type: e.entity_type,
          entity_id: e.entity_id,
          event_type: e.event_type,
          actor: e.actor,
          // The one redaction step for event payloads: an agent's quoted secret never lands.
          payload: redactValue(e.payload),
        };
        this.insertAndApply(s);
        stored.push(s);
      });
      this.db.run('COMMIT');
      return { result: decision.result, events: stored };
    } catch (e) {
      this.db.rollbackQuietly();
      throw e;
    } finally {
      this.inTransaction = false;
    }
  }

  async execute<T>(decide: (db: SqlReader) => Decision<T>): Promise<{ result: T; events: StoredEvent[] }> {
    // Everything up to the first await runs synchronously, so commands apply in call order.
    this.assertWritable('execute');
    const out = this.commit(decide);
    if (out.events.length === 0) return out;
    this.commands += 1;
    this.eventsAppended += out.events.length;
    this.dirty = true;
    this.scheduleCheckpoint();
    const appender = this.appender;
    if (!appender) throw new StoreClosedError();
    try {
      await appender.append(encodeRecord(out.events));
    } catch (e) {
      this.failure ??= new StoreFailedError(`journal write failed: ${(e as Error).message}`, e);
      throw this.failure;
    }
    this.fire(out.events);
    return out;
  }

  async append(events: readonly NewEvent[]): Promise<StoredEvent[]> {
    return (await this.execute(() => ({ events, result: undefined }))).events;
  }

  async rebuild(): Promise<void> {
    this.assertOpen();
    if (this.mode === 'writer' && this.failure) throw this.failure;
    if (this.inTransaction) throw new Error('rebuild() cannot run inside a command');
    this.db.exec('BEGIN');
    this.inTransaction = true;
    try {
      for (const p of this.projections) for (const t of p.tables) this.db.exec(`DELETE FROM "${t.replace(/"/g, '""')}"`);
      SqlJsEventStore.replayInto(this.db, this.projections);
      const now = isoTimestamp(this.clock());
      for (const p of this.projections) {
        this.db.run('INSERT OR REPLACE INTO ralph_projections(name, version, rebuilt_at) VALUES (?, ?, ?)', [p.name, p.version, now]);
      }
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.rollbackQuietly();
      throw e;
    } finally {
      this.inTransaction = false;
    }
    if (this.mode === 'writer') {
      this.dirty = true;
      this.scheduleCheckpoint();
    }
  }

  // ---- checkpoints --------------------------------------------------------------------

  private scheduleCheckpoint(): void {
    if (this.checkpointTimer || this.closed) return;
    // A throttle, not a pure debounce: a steady stream of commands still gets checkpoints.
    // The export blocks the event loop, so a big database checkpoints less often (<= ~10%).
    const delay = Math.max(this.debounceMs, 10 * this.lastExportMs);
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      this.checkpoint().catch((e: unknown) => {
        this.lastError = (e as Error).message;
      });
    }, delay);
    this.checkpointTimer.unref();
  }

  async checkpoint(): Promise<void> {
    this.assertOpen();
    if (this.mode !== 'writer') throw new ReadOnlyStoreError('checkpoint');
    if (this.failure && this.lock?.isLost) throw this.failure;
    // One at a time, in call order: each caller's run starts after the previous one ends,
    // so it captures everything committed before the call (a run with nothing new is a no-op).
    const run = this.checkpointChain.then(() => this.runCheckpoint());
    this.checkpointChain = run.catch(() => undefined);
    return run;
  }

  private async runCheckpoint(): Promise<void> {
    const appender = this.appender;
    if (!appender) return;
    if (this.checkpointTimer) {
      clearTimeout(this.checkpointTimer);
      this.checkpointTimer = undefined;
    }
    // Every record below `synced` has its events in memory, hence in the export; records
    // appended later stay in the journal (replay is by event id, so overlap is harmless).
    const synced = appender.size;
    if (!this.dirty && synced <= this.journalHeaderBytes) return;
    this.dirty = false;
    const t0 = performance.now();
    const data = this.db.raw.export();
    const upTo = this.maxEventId();
    this.lastExportMs = performance.now() - t0;
    if (this.lock && !this.lock.verify()) throw this.failure ?? new StoreFailedError('writer lock lost');
    try {
      await writeFileAtomic(this.dbPath, data);
    } catch (e) {
      this.dirty = true;
      throw e;
    }
    this.dbBytes = data.length;
    // Trim: keep only bytes appended since `synced`. A crash before the rename leaves the
    // old (longer) journal, whose extra records are already in ralph.db: skipped on replay.
    // The new journal starts with a header naming the last event in that ralph.db.
    await appender.exclusive(async () => {
      const size = appender.size;
      const header = encodeRecord([], upTo);
      let tail = Buffer.alloc(0);
      if (size > synced) {
        const fd = fs.openSync(this.journalPath, 'r');
        try {
          tail = Buffer.alloc(size - synced);
          fs.readSync(fd, tail, 0, tail.length, synced);
        } finally {
          fs.closeSync(fd);
        }
      }
      await writeFileAtomic(this.journalPath, Buffer.concat([header, tail]));
      await appender.reopen(header.length + tail.length);
      this.journalHeaderBytes = header.length;
    });
    this.checkpoints += 1; // counted once the journal is trimmed too
    this.lastCheckpointMs = performance.now() - t0;
  }

  /** process 'exit': synchronous, best effort, so an exiting CLI leaves ralph.db complete. */
  private exitCheckpoint(): void {
    if (this.closed) return;
    try {
      if (this.inTransaction) {
        this.db.rollbackQuietly();
        this.inTransaction = false;
      }
      if (this.lock?.verify() !== false && (this.dirty || (this.appender?.size ?? 0) > this.journalHeaderBytes)) {
        writeFileAtomicSync(this.dbPath, this.db.raw.export());
        writeFileAtomicSync(this.journalPath, encodeRecord([], this.maxEventId()));
      }
    } catch {
      // Best effort: the journal still holds every acknowledged event.
    }
    this.lock?.release();
  }

  // ---- observers ----------------------------------------------------------------------

  /** Applies journal records past our offset (from 0 when the journal was replaced). */
  private readJournalTail(): void {
    let scan = readJournalSync(this.journalPath, this.journalOffset);
    if (scan.ino !== this.journalIno && this.journalOffset !== 0) scan = readJournalSync(this.journalPath, 0);
    const n = this.replayJournal(scan.records);
    this.replayed += n;
    this.journalIno = scan.ino;
    this.journalOffset = scan.validEnd; // an incomplete last record is re-read next time
  }

  async refresh(): Promise<boolean> {
    this.assertOpen();
    if (this.mode === 'writer') return false;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = statOrUndefined(this.dbPath);
      if (!sameStamp(now, this.dbStamp)) {
        // A new checkpoint. If its journal header says ralph.db holds nothing past what we
        // have already applied, keep our database and just follow the new journal.
        const scan = readJournalSync(this.journalPath, 0);
        const upTo = scan.records[0]?.upTo;
        if (upTo !== undefined && upTo <= this.maxEventId()) {
          this.dbStamp = now;
          this.journalIno = 0;
          this.journalOffset = 0;
        } else {
          const loaded = SqlJsEventStore.loadDatabase(this.SQL, this.dbPath, this.projections);
          this.db.close();
          this.db = loaded.db;
          this.dbStamp = loaded.stamp;
          this.dbBytes = loaded.bytes;
          this.journalIno = 0;
          this.journalOffset = 0;
          this.reloads += 1;
        }
      }
      this.readJournalTail();
      // The writer renames ralph.db before it trims the journal: if ralph.db changed while
      // we read, the journal we saw may already be trimmed, so read both again.
      if (sameStamp(statOrUndefined(this.dbPath), this.dbStamp)) break;
    }
    const fresh = this.events({ afterId: this.lastSeenId });
    if (fresh.length > 0) this.lastSeenId = fresh[fresh.length - 1]?.event_id ?? this.lastSeenId;
    this.fire(fresh);
    return fresh.length > 0;
  }

  // ---- closing ------------------------------------------------------------------------

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (this.mode === 'writer') {
        if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
        this.checkpointTimer = undefined;
        if (!this.lock?.isLost && !this.failure) {
          this.dirty = this.dirty || (this.appender?.size ?? 0) > this.journalHeaderBytes;
          await this.checkpoint();
        }
        await this.appender?.close();
      }
    } finally {
      this.closed = true;
      if (this.exitHandler) process.off('exit', this.exitHandler);
      this.lock?.release();
      this.db.close();
      this.listeners.clear();
    }
  }
}

/** Removes what a writer killed mid-write leaves: atomic-write temps and heartbeat temps. */
function cleanTempFiles(ralphDir: string): void {
  for (const name of fs.readdirSync(ralphDir)) {
    if (isAtomicTempOf(path.join(ralphDir, DB_FILE), name) || isAtomicTempOf(path.join(ralphDir, JOURNAL_FILE), name)) {
      fs.rmSync(path.join(ralphDir, name), { force: true });
    }
  }
  const locks = path.join(ralphDir, LOCKS_DIR);
  for (const name of fs.existsSync(locks) ? fs.readdirSync(locks) : []) {
    if (name.startsWith(`${LOCK_FILE}.beat-`)) fs.rmSync(path.join(locks, name), { force: true });
  }
}

/**
 * Opens the event store in `.ralph`. The writer takes the lock (StoreLockedError when a
 * live process holds it), replays journal records ralph.db lacks and records a takeover
 * of a dead holder's lock as a `lock.taken_over` event. Observers read without the lock.
 */
export async function openStore(options: OpenStoreOptions): Promise<EventStore> {
  const sqlJs = loadSqlJs(options.wasmPath);
  const clock = options.clock ?? Date.now;
  const runId = options.runId ?? defaultRunId(clock(), process.pid);
  const dbPath = path.join(options.ralphDir, DB_FILE);
  let lock: WriterLock | undefined;
  let takeover: Takeover | undefined;
  let store: SqlJsEventStore | undefined;
  if (options.mode === 'writer') {
    fs.mkdirSync(options.ralphDir, { recursive: true });
    const got = WriterLock.acquire({
      locksDir: path.join(options.ralphDir, LOCKS_DIR),
      runId,
      clock,
      ...(options.lockStaleMs !== undefined ? { staleMs: options.lockStaleMs } : {}),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
      onLost: () => store?.onLockLost(),
    });
    lock = got.lock;
    takeover = got.takeover;
  }
  try {
    if (lock) cleanTempFiles(options.ralphDir);
    // Read ralph.db only now: a writer must hold the lock first, or a writer closing in
    // between could checkpoint (and trim the journal) after our read.
    const [SQL, file] = await Promise.all([sqlJs, readWithStampAsync(dbPath)]);
    const dbExisted = file !== undefined;
    const loaded = SqlJsEventStore.loadDatabase(SQL, dbPath, options.projections, file);
    store = new SqlJsEventStore(
      SQL,
      loaded.db,
      options.mode,
      runId,
      options.ralphDir,
      options.projections,
      clock,
      options.checkpointDebounceMs ?? 1000,
    );
    store.setDbBytes(loaded.bytes);
    if (lock) {
      store.attachLock(lock);
      await store.openWriter(dbExisted, loaded.changed);
      if (takeover) await store.recordTakeover(takeover);
    } else {
      store.openObserver(loaded.stamp);
    }
    return store;
  } catch (e) {
    store?.abandon();
    lock?.release();
    throw e;
  }
}
