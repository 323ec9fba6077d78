// Over 400 lines because it is one adapter of the EventStore port whose commands, checkpoint and replay share one in-memory database.
// The sql.js adapter of the EventStore port: the database lives in memory, every command's
// events are made durable by the journal (one fsync, group commit), and a throttled
// checkpoint writes .ralph/ralph.db atomically (keeping the one it replaces as
// ralph.db.prev) and trims the journal to the records since that previous one, so
// ralph.db.prev plus the journal is always a complete history. One writer holds
// .ralph/locks/writer.lock; observers read ralph.db plus the journal's tail. A writer
// refuses to open a damaged journal, a ralph.db that fails its checkpoint's checksum, and a
// missing, empty or older ralph.db when the history around it says it held more.
import { monotonicMs } from '../shared/clock';
import { redactValue } from '../shared/redaction';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SqlJsStatic } from 'sql.js';
import { fileError, fsyncDirSync, isAtomicTempOf, onFile, writeFileAtomic, writeFileAtomicSync } from '../shared/fs';
import {
  DB_FILE,
  PREV_DB_FILE,
  clearNextSum,
  fileCheckpointWriter,
  isCheckpointTemp,
  keepChangedDb,
  readNextSum,
  sameSum,
  sumOf,
  type CheckpointWriter,
  type DbImage,
} from './checkpoint';
import {
  CommandAlreadyAppliedError,
  ReadOnlyStoreError,
  StoreClosedError,
  StoreCorruptError,
  StoreFailedError,
  StoreLockedError,
  type AppliedCommand,
  type LockHolder,
} from './errors';
import { EventIdGenerator, defaultRunId, isoTimestamp, type Clock } from './eventIds';
import { EVENT_COLUMNS, INSERT_EVENT, checkNewEvent, eventsQuery, rowToEvent, type EventRow } from './eventRows';
import { readWithStamp, readWithStampWhile, sameStamp, statOrUndefined, type FileRead, type FileStamp } from './fileStamp';
import { checkDatabaseSum, inspectDbBytes, journalDamageError, refuseLostDatabase, refuseOlderDatabase } from './history';
import {
  JOURNAL_FILE,
  JournalAppender,
  JournalWriteError,
  crc32,
  encodeHeader,
  encodeRecord,
  headerOf,
  lastRecordEventId,
  readFileFrom,
  readJournalSync,
  type CheckpointHeader,
  type DbSum,
  type JournalRecord,
  type JournalRead,
  type JournalScan,
} from './journal';
import { migrate } from './schema';
import { CheckpointReplica } from './checkpointReplica';
import { SqlDb, loadSqlJs, loadedWasmPath } from './sqlDb';
import type {
  CommandStamp,
  Decision,
  Disposable,
  EventStore,
  ExecuteOptions,
  NewEvent,
  Projection,
  SqlParams,
  SqlReader,
  SqlRow,
  EventFilter,
  StoreMode,
  StoreStats,
  StoredEvent,
} from './types';
import { LOCK_FILE, WriterLock, lockHolderOf, type Takeover } from './writerLock';
import { WriterTicket, liveTickets } from './writerQueue';

export { DB_FILE, PREV_DB_FILE } from './checkpoint';
export const LOCKS_DIR = 'locks';

/** The marker event a command id leaves with its events (see ExecuteOptions.command). */
export const COMMAND_APPLIED = 'command.applied';

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
  /**
   * Writer: how long to wait for the line of writers that do not drain the inbox (short-lived
   * commands) to move: the wait gives up once the lock has not changed hands, and nobody
   * ahead has left, for this long (default 0: fail at once). A running loop's lock is never
   * waited for: StoreLockedError says so (holder.drainsInbox), and the caller sends its
   * command to the loop's inbox instead.
   */
  readonly lockWaitMs?: number;
  /** Called on each failed attempt while waiting for the lock (how long so far, and who holds it). */
  readonly onLockWait?: (waitedMs: number, holder: LockHolder | undefined) => void;
  /** Writer: this process drains `.ralph/inbox/` while it holds the lock (a running loop). */
  readonly drainsInbox?: boolean;
  /** Writes ralph.db at checkpoints (default: the file writer of checkpoint.ts). */
  readonly checkpointWriter?: CheckpointWriter;
  /**
   * Writer: where checkpoints export the database (checkpointReplica.ts). 'auto': in a
   * worker thread once ralph.db reaches REPLICA_MIN_BYTES, on this thread below; 'always':
   * in the worker from the first checkpoint after the open (tests); 'never'. Default: 'auto'
   * for a writer that drains the inbox (a running loop, which lives long enough for a
   * worker to pay), 'never' for the rest (a short command checkpoints once, as it exits).
   */
  readonly checkpointWorker?: 'auto' | 'always' | 'never';
  /**
   * Writer: called once as the store closes cleanly, after its last checkpoint and before the
   * lock is released, so the files are final while it reads the database (the control plane
   * keeps its status image here). It must not throw.
   */
  readonly atClose?: (db: SqlReader) => void;
}

/**
 * RALPH_CHECKPOINT_WORKER=always|never|auto overrides the default (a test suite can run its
 * kills with the worker forced on this way); anything else leaves it.
 */
function checkpointWorkerOf(options: OpenStoreOptions): 'auto' | 'always' | 'never' {
  if (options.checkpointWorker) return options.checkpointWorker;
  const v = process.env['RALPH_CHECKPOINT_WORKER'];
  if (v === 'always' || v === 'never' || v === 'auto') return v;
  return options.drainsInbox ? 'auto' : 'never';
}

/** From this size of ralph.db on, checkpoints export in a worker thread ('auto'): ~15 ms of export on an idle machine. */
export const REPLICA_MIN_BYTES = 4 * 1024 * 1024;

/** What the writer's open learnt from the files, for the store's bookkeeping. */
interface OpenFacts {
  readonly scan: JournalScan;
  readonly dbExisted: boolean;
  readonly dbStamp: FileStamp | undefined;
  /** The sum of ralph.db as read, when it is the image the header describes (or newer). */
  readonly dbSum: DbSum | undefined;
  readonly changed: boolean;
  /**
   * Set when ralph.db is newer than the journal's header says (a checkpoint cut short before
   * its trim): the sum of ralph.db.prev as it is on disk, for the header the open writes.
   */
  readonly interrupted?: { readonly prev: DbSum | undefined };
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
  private readonly writer: CheckpointWriter;
  // writer bookkeeping: what ralph.db and ralph.db.prev on disk are, and what the journal
  // must keep for each of them
  private dbSum: DbSum | undefined;
  private prevSum: DbSum | undefined;
  /** A ralph.db changed outside Ralph that this checkpoint kept aside (ralph.db.next is noted until its trim). */
  private changedKept: string | undefined;
  /** ralph.db as we last wrote or verified it: only that file is kept as ralph.db.prev. */
  private dbDiskStamp: FileStamp | undefined;
  /** Journal offset of the first record ralph.db.prev may lack. */
  private prevCoverEnd = 0;
  /** Journal offset of the first record ralph.db may lack (all before it are in the file). */
  private dbCoverEnd = 0;
  // observer bookkeeping
  private dbStamp: FileStamp | undefined;
  private journalIno = 0;
  private journalOffset = 0;
  private lastSeenId = '';
  // counters
  private commands = 0;
  private eventsAppended = 0;
  private eventsAcknowledged = 0;
  private checkpoints = 0;
  private dbBytes = 0;
  private replayed = 0;
  private reloads = 0;
  private torn = 0;
  private lastError: string | undefined;
  private lastExportMs = 0;
  private lastCheckpointMs = 0;
  // checkpoint exports in a worker thread (checkpointReplica.ts)
  private replica: CheckpointReplica | undefined;
  private replicaFailed = false;
  private offThreadExports = 0;
  private atClose: ((db: SqlReader) => void) | undefined;

  /** OpenStoreOptions.atClose, for a writer. */
  callAtClose(fn: ((db: SqlReader) => void) | undefined): void {
    this.atClose = fn;
  }

  constructor(
    private readonly SQL: SqlJsStatic,
    private db: SqlDb,
    readonly mode: StoreMode,
    readonly runId: string,
    private readonly ralphDir: string,
    private readonly projections: readonly Projection[],
    private readonly clock: Clock,
    private readonly debounceMs: number,
    writer: CheckpointWriter | undefined,
    private readonly replicaPolicy: 'auto' | 'always' | 'never' = 'auto',
  ) {
    this.dbPath = path.join(ralphDir, DB_FILE);
    this.journalPath = path.join(ralphDir, JOURNAL_FILE);
    this.ids = new EventIdGenerator(clock);
    this.writer = writer ?? fileCheckpointWriter(ralphDir);
  }

  // ---- open ---------------------------------------------------------------------------

  /** Loads ralph.db (or an empty database), migrates it and brings the projections in step. */
  static loadDatabase(
    SQL: SqlJsStatic,
    dbPath: string,
    projections: readonly Projection[],
    file: FileRead | undefined = readWithStamp(dbPath),
  ): { db: SqlDb; stamp: FileStamp | undefined; bytes: number; changed: boolean } {
    const hint = fs.existsSync(path.join(path.dirname(dbPath), PREV_DB_FILE))
      ? `; run \`ralph repair --fix\` to restore it from ${PREV_DB_FILE} and the journal`
      : '';
    let raw;
    try {
      raw = file && file.data.length > 0 ? new SQL.Database(file.data) : new SQL.Database();
    } catch (e) {
      throw new StoreCorruptError(dbPath, `cannot be opened as SQLite: ${(e as Error).message}${hint}`);
    }
    const db = new SqlDb(raw);
    try {
      db.get('SELECT count(*) AS n FROM sqlite_master');
    } catch (e) {
      db.close();
      throw new StoreCorruptError(dbPath, `is not a valid SQLite database: ${(e as Error).message}${hint}`);
    }
    // The database file lives in sql.js's in-memory FS and only this connection uses it:
    // an exclusive lock keeps the page cache across transactions (no re-validation per
    // commit), and a memory rollback journal still makes ROLLBACK work. Durability is the
    // event journal's job, not SQLite's.
    db.exec(
      'PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; ' +
        'PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;',
    );
    let changed: boolean;
    try {
      const applied = migrate(db, dbPath);
      changed = SqlJsEventStore.syncProjections(db, projections) || applied.length > 0;
    } catch (e) {
      db.close();
      if (e instanceof Error && /malformed|not a database|corrupt/i.test(e.message)) {
        throw new StoreCorruptError(dbPath, `is damaged: ${e.message}${hint}`);
      }
      throw e;
    }
    return { db, stamp: file?.stamp, bytes: file?.data.length ?? 0, changed };
  }

  /**
   * Brings every projection in step: rebuilds those whose stored version differs, and runs
   * the DDL of the others only when an object it creates is missing. Most opens find them
   * all current, and preparing every CREATE … IF NOT EXISTS costs a short-lived command
   * SQLite's DDL code, compiled from wasm for nothing.
   */
  private static syncProjections(db: SqlDb, projections: readonly Projection[]): boolean {
    const versions = new Map(
      db.all<{ name: string; version: number }>('SELECT name, version FROM ralph_projections').map((r) => [r.name, r.version]),
    );
    const objects = new Set(db.all<{ name: string }>('SELECT name FROM sqlite_master').map((r) => r.name));
    const current = (p: Projection): boolean => versions.get(p.name) === p.version && p.ddl.every((s) => createsExisting(s, objects));
    if (projections.every(current)) return false;
    let rebuilt = false;
    db.exec('BEGIN');
    try {
      for (const p of projections) {
        if (versions.get(p.name) === p.version) {
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

  /**
   * The scan to replay: `scan`, or the full parse of the journal when it skipped records
   * this database lacks (the last event of the last of them is missing: an observer holding
   * an older ralph.db). Not the header's `upTo`: that is the largest id, which need not be
   * the last appended (another tool's ids sort anywhere).
   */
  private resolveScan(scan: JournalScan): JournalScan {
    if (!scan.skipped) return scan;
    return this.hasEvent(scan.skipped.lastId) ? scan : scan.skipped.full();
  }

  /** Applies journal events the database lacks, in journal order; returns how many. */
  private replayJournal(records: readonly JournalRecord[]): number {
    let n = 0;
    if (records.length === 0) return 0;
    // A checkpoint holds every event appended before the one its journal header names (the
    // export is taken with no append in flight): when the database has that one, the events
    // the journal holds up to it, by position, are in it too and need no look-up each (an
    // observer's open would otherwise query once per event kept since the previous
    // checkpoint). By position, not by id: ids from another writer need not sort after it.
    const header = headerOf(records);
    const upTo = header !== undefined && header.upTo !== '' && this.hasEvent(header.upTo) ? header.upTo : '';
    let coveredLeft = upTo === '' ? 0 : countUpTo(records, upTo);
    this.db.exec('BEGIN');
    try {
      for (const rec of records) {
        for (const e of rec.events) {
          this.ids.observe(e.event_id);
          if (coveredLeft > 0) {
            coveredLeft--;
            continue;
          }
          if (this.hasEvent(e.event_id)) continue;
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

  hasEvent(eventId: string): boolean {
    return this.db.get('SELECT 1 AS x FROM events WHERE event_id = ?', [eventId]) !== undefined;
  }

  private insertAndApply(e: StoredEvent): void {
    this.db.run(INSERT_EVENT, [e.event_id, e.ts, e.run_id, e.entity_type, e.entity_id, e.event_type, e.actor, JSON.stringify(e.payload)]);
    for (const p of this.projections) p.apply(this.db, e);
  }

  maxEventId(): string {
    return this.db.get<{ m: string | null }>('SELECT max(event_id) AS m FROM events')?.m ?? '';
  }

  /** The largest id of the generator's shape (`evt_…`), read from the primary key's range. */
  private maxGeneratedId(): string {
    return (
      this.db.get<{ m: string | null }>("SELECT max(event_id) AS m FROM events WHERE event_id >= 'evt_' AND event_id < 'evt`'")?.m ?? ''
    );
  }

  async openWriter(facts: OpenFacts): Promise<void> {
    const { scan } = facts;
    // The largest id of the generator's own shape, not the largest id: another tool's may sort
    // last and says nothing to the generator, and the records an open skips are not observed.
    this.ids.observe(this.maxGeneratedId());
    // Damage only the full parse finds (inside the counted records) is refused like any other.
    const resolved = this.resolveScan(scan);
    if (resolved.damage) throw journalDamageError(this.journalPath, resolved.damage);
    this.replayed += this.replayJournal(resolved.records);
    const header = headerOf(scan.records);
    // ralph.db.prev may lack everything after the header; ralph.db lacks only what was replayed.
    this.prevCoverEnd = scan.headerEnd;
    this.dbCoverEnd = this.replayed === 0 ? scan.validEnd : scan.headerEnd;
    this.dbSum = facts.dbExisted ? facts.dbSum : undefined;
    this.prevSum = header?.prev;
    this.dbDiskStamp = facts.dbStamp;
    this.torn += scan.tornBytes;
    let size = scan.validEnd;
    if (scan.tornBytes > 0) {
      // Cut the torn tail off so the next append does not land behind garbage.
      this.patchJournal((fd) => fs.ftruncateSync(fd, scan.validEnd), 'truncate');
    }
    if (scan.unterminated) {
      // A complete last record whose newline never made it to disk: finish the line, and
      // count the newline as part of it (a trim from before it would leave an empty line).
      this.patchJournal((fd) => fs.writeSync(fd, '\n', scan.validEnd), 'write');
      size += 1;
      if (this.dbCoverEnd === scan.validEnd) this.dbCoverEnd = size;
      if (this.prevCoverEnd === scan.validEnd) this.prevCoverEnd = size;
    }
    if (facts.interrupted && facts.dbSum)
      size = await this.finishInterruptedCheckpoint(facts.dbSum, facts.interrupted.prev, scan.headerEnd, size);
    const created = !fs.existsSync(this.journalPath);
    this.appender = await JournalAppender.open(this.journalPath, size, () => {
      // Never write into a journal another writer now owns.
      if (this.lock && !this.lock.verify()) throw this.failure ?? new StoreFailedError('the writer lock was taken over by another process');
    });
    if (created) fsyncDirSync(this.ralphDir); // the journal's directory entry must survive a crash too
    this.exitHandler = () => this.exitCheckpoint();
    process.on('exit', this.exitHandler);
    // A header counting records the journal does not end with (cut short or changed outside
    // Ralph; the scan then parsed every record) must not stand: this writer's appends would
    // land inside the count and a later open would skip them. The checkpoint writes a new one.
    const coveredBroken = (header?.covered ?? 0) > 0 && scan.skipped === undefined;
    if (!facts.dbExisted || facts.changed || this.replayed > 0 || coveredBroken) {
      this.dirty = true;
      await this.checkpoint();
    } else if (facts.dbSum && this.wantsReplica(facts.dbSum.size)) {
      // Nothing the open did changed the database but the projections' idempotent DDL:
      // ralph.db as read (the worker checks its sum), with that DDL, is what memory holds,
      // and no export is needed to seed the replica.
      const replica = new CheckpointReplica(this.db);
      replica.seedFromFile(
        this.dbPath,
        facts.dbSum,
        loadedWasmPath(),
        this.projections.flatMap((p) => p.ddl),
      );
      this.replica = replica;
    }
  }

  private patchJournal(fn: (fd: number) => void, operation: 'truncate' | 'write'): void {
    const fd = onFile('open', this.journalPath, () => fs.openSync(this.journalPath, 'r+'));
    try {
      onFile(operation, this.journalPath, () => {
        fn(fd);
        fs.fsyncSync(fd);
      });
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * The step a checkpoint cut short never took: the journal's header made to describe the
   * ralph.db now on disk (and the ralph.db.prev beside it), every record after the old
   * header kept. Until then the next checkpoint's rotation would replace ralph.db.prev, the
   * only file the old header's checksum names, and a kill before its trim would leave a
   * store no open accepts. Returns the journal's new size.
   */
  private async finishInterruptedCheckpoint(db: DbSum, prev: DbSum | undefined, headerEnd: number, size: number): Promise<number> {
    const head = encodeHeader({ upTo: db.upTo, db, ...(prev ? { prev } : {}) });
    const kept =
      size > headerEnd
        ? (readFileFrom(this.journalPath, headerEnd)?.buf.subarray(0, size - headerEnd) ?? Buffer.alloc(0))
        : Buffer.alloc(0);
    if (kept.length !== Math.max(0, size - headerEnd)) {
      throw new StoreFailedError(`${this.journalPath} is shorter than the ${size} bytes just read from it`);
    }
    const bytes = Buffer.concat([head, kept]);
    await writeFileAtomic(this.journalPath, bytes);
    this.prevSum = prev;
    this.prevCoverEnd = head.length;
    this.dbCoverEnd = this.replayed === 0 ? bytes.length : head.length;
    return bytes.length;
  }

  /** Undoes a half-finished open: no checkpoint, no lock (the caller releases it). */
  abandon(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    if (this.exitHandler) process.off('exit', this.exitHandler);
    this.closed = true;
    void this.appender?.close().catch(() => undefined);
    void this.replica?.dispose();
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

  /** `scan`: the journal as the open read it, after ralph.db. */
  openObserver(stamp: FileStamp | undefined, scan: JournalRead): void {
    this.dbStamp = stamp;
    this.followJournal(scan);
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

  events(filter: EventFilter = {}): StoredEvent[] {
    this.assertOpen();
    const q = eventsQuery(filter);
    return this.db.all<EventRow>(q.sql, q.params).map(rowToEvent);
  }

  appliedCommand(commandId: string): AppliedCommand | undefined {
    this.assertOpen();
    const row = this.db.get<{ event_id: string; ts: string; payload: string }>(
      'SELECT event_id, ts, payload FROM events WHERE entity_type = ? AND entity_id = ? AND event_type = ? ORDER BY event_id LIMIT 1',
      ['command', commandId, COMMAND_APPLIED],
    );
    if (!row) return undefined;
    let p: { command?: unknown; outcome?: unknown; event_ids?: unknown } = {};
    try {
      p = JSON.parse(row.payload) as typeof p;
    } catch {
      // a marker whose payload cannot be read still says the command was applied
    }
    return {
      markerId: row.event_id,
      ts: row.ts,
      command: typeof p.command === 'string' ? p.command : '?',
      outcome: p.outcome === 'failed' ? 'failed' : 'applied',
      eventIds: Array.isArray(p.event_ids) ? p.event_ids.filter((x): x is string => typeof x === 'string') : [],
    };
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
      eventsAcknowledged: this.eventsAcknowledged,
      fsyncs: this.appender?.fsyncs ?? 0,
      checkpoints: this.checkpoints,
      journalBytes: this.mode === 'writer' ? (this.appender?.size ?? 0) : this.journalOffset,
      dbBytes: this.dbBytes,
      replayedEvents: this.replayed,
      tornBytes: this.torn,
      dbReloads: this.reloads,
      lastExportMs: this.lastExportMs,
      lastCheckpointMs: this.lastCheckpointMs,
      checkpointsOffThread: this.offThreadExports,
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

  private stamp(e: NewEvent, ts: string): StoredEvent {
    return {
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
  }

  /** The synchronous part of execute: decide, stamp, insert, project, commit. */
  private commit<T>(decide: (db: SqlReader) => Decision<T>, command: CommandStamp | undefined): { result: T; events: StoredEvent[] } {
    if (this.inTransaction) throw new Error('execute() was called from inside a decide or a projection; commands do not nest');
    if (command) {
      const prior = this.appliedCommand(command.id);
      if (prior) throw new CommandAlreadyAppliedError(command.id, prior);
    }
    this.db.run('BEGIN');
    this.inTransaction = true;
    try {
      const decision = decide(this.db);
      const stored: StoredEvent[] = [];
      const ts = isoTimestamp(this.clock());
      decision.events.forEach((e, i) => {
        checkNewEvent(e, i);
        const s = this.stamp(e, ts);
        this.insertAndApply(s);
        stored.push(s);
      });
      if (command) {
        // In the same transaction and journal record as the command's events: either both
        // survive a crash or neither does, so a replay of the command is always detected.
        const marker = this.stamp(
          {
            entity_type: 'command',
            entity_id: command.id,
            event_type: COMMAND_APPLIED,
            actor: command.actor,
            payload: {
              command: command.name,
              outcome: command.outcome ?? 'applied',
              event_ids: stored.map((s) => s.event_id),
              ...(command.source !== undefined ? { source: command.source } : {}),
            },
          },
          ts,
        );
        this.insertAndApply(marker);
        stored.push(marker);
      }
      this.db.run('COMMIT');
      return { result: decision.result, events: stored };
    } catch (e) {
      this.db.rollbackQuietly();
      throw e;
    } finally {
      this.inTransaction = false;
    }
  }

  async execute<T>(decide: (db: SqlReader) => Decision<T>, options: ExecuteOptions = {}): Promise<{ result: T; events: StoredEvent[] }> {
    // Everything up to the first await runs synchronously, so commands apply in call order.
    this.assertWritable('execute');
    const out = this.commit(decide, options.command);
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
      const recorded = e instanceof JournalWriteError ? e.recorded : 'unknown';
      // The events are in memory but not durable: refuse everything from now on, so
      // neither a later command nor a checkpoint can make them look acknowledged.
      this.failure ??= new StoreFailedError(`journal write failed: ${(e as Error).message}`, e, recorded);
      throw this.failure;
    }
    this.eventsAcknowledged += out.events.length;
    this.fire(out.events);
    return out;
  }

  async append(events: readonly NewEvent[], options: ExecuteOptions = {}): Promise<StoredEvent[]> {
    return (await this.execute(() => ({ events, result: undefined }), options)).events;
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
    // Events a failed journal write left in memory were never acknowledged: no checkpoint
    // may write them into ralph.db.
    if (this.failure) throw this.failure;
    // One at a time, in call order: each caller's run starts after the previous one ends,
    // so it captures everything committed before the call (a run with nothing new is a no-op).
    const run = this.checkpointChain.then(() => this.runCheckpoint());
    this.checkpointChain = run.catch(() => undefined);
    return run;
  }

  /** The image a checkpoint writes: the whole database, and the last event it holds. */
  private snapshot(): DbImage {
    return { data: this.db.raw.export(), upTo: this.maxEventId() };
  }

  /**
   * What ralph.db on disk is: the file we last wrote or verified (`ours`: kept as
   * ralph.db.prev at a checkpoint), other bytes (`changed` outside Ralph: kept under
   * .ralph/backup/ before it is replaced), or nothing to keep (`none`).
   */
  private diskDb(): 'ours' | 'changed' | 'none' {
    if (this.dbSum === undefined || this.dbDiskStamp === undefined) return 'none';
    if (sameStamp(statOrUndefined(this.dbPath), this.dbDiskStamp)) return 'ours';
    // Touched (a backup or sync tool set its time) but still our bytes: keep it. Replacing it
    // unkept would leave, until the trim, a ralph.db and a ralph.db.prev the header names neither.
    const read = readWithStamp(this.dbPath);
    if (read === undefined) return 'none';
    if (read.data.length !== this.dbSum.size || crc32(read.data) !== this.dbSum.crc) return 'changed';
    this.dbDiskStamp = read.stamp;
    return 'ours';
  }

  /** Whether this checkpoint keeps ralph.db as ralph.db.prev; a changed one is kept aside, its replacement's sum noted. */
  private prepareRotation(image: DbImage): boolean {
    const disk = this.diskDb();
    if (disk === 'changed') this.changedKept = keepChangedDb(this.ralphDir, sumOf(image), new Date(this.clock()));
    return disk === 'ours';
  }

  /**
   * The journal after a checkpoint: its header, then every record ralph.db.prev may lack.
   * The image holds the records below `held`, which the header counts as covered.
   */
  private trimmedJournal(
    header: CheckpointHeader,
    rotate: boolean,
    size: number,
    held: number,
  ): { bytes: Buffer; keepFrom: number; headerLength: number } {
    const keepFrom = rotate ? this.dbCoverEnd : this.prevCoverEnd;
    const kept =
      size > keepFrom ? (readFileFrom(this.journalPath, keepFrom)?.buf.subarray(0, size - keepFrom) ?? Buffer.alloc(0)) : Buffer.alloc(0);
    if (kept.length !== Math.max(0, size - keepFrom)) {
      throw new StoreFailedError(`${this.journalPath} is shorter than the ${size} bytes this writer appended`);
    }
    const covered = Math.max(0, Math.min(size, held) - keepFrom);
    const last = covered > 0 ? lastRecordEventId(kept, covered) : undefined;
    const head = encodeHeader({
      ...header,
      covered,
      ...(covered > 0 ? { coveredCrc: crc32(kept, 0, covered) } : {}),
      ...(last !== undefined ? { coveredLast: last } : {}),
    });
    return { bytes: Buffer.concat([head, kept]), keepFrom, headerLength: head.length };
  }

  /** Bookkeeping once ralph.db and the trimmed journal are both on disk. */
  private afterCheckpoint(sum: DbSum, rotate: boolean, synced: number, keepFrom: number, headerLength: number): void {
    this.prevSum = rotate ? this.dbSum : this.prevSum;
    this.dbSum = sum;
    this.dbDiskStamp = statOrUndefined(this.dbPath);
    this.dbBytes = sum.size;
    this.prevCoverEnd = headerLength;
    this.dbCoverEnd = headerLength + (synced - keepFrom);
  }

  private async runCheckpoint(): Promise<void> {
    const appender = this.appender;
    if (!appender) return;
    if (this.checkpointTimer) {
      clearTimeout(this.checkpointTimer);
      this.checkpointTimer = undefined;
    }
    // The export is taken with every appended record on disk and none in flight: the records
    // below `synced` are exactly the events in it (an export taken while an append was in
    // flight would hold events whose record the trim then kept, or whose write then failed
    // and which were never acknowledged). Records appended later stay in the journal.
    if (this.replica && !this.replica.healthy) await this.dropReplica();
    const replica = this.replica;
    const taken = await appender.drained(() => {
      if (this.failure) throw this.failure;
      const synced = appender.size;
      if (!this.dirty && synced <= this.dbCoverEnd) return undefined;
      this.dirty = false;
      const t0 = monotonicMs();
      // The replica's export holds exactly what this thread's would now: the worker runs
      // the writer's statements in order and answers this request after all of them.
      if (replica?.healthy) return { synced, t0, upTo: this.maxEventId(), exported: replica.exportImage() };
      const image = this.snapshot();
      this.lastExportMs = monotonicMs() - t0;
      // A replica starts following from this very image (seeded with it once it is written).
      return {
        synced,
        t0,
        upTo: image.upTo,
        image,
        follower: this.wantsReplica(image.data.length) ? new CheckpointReplica(this.db) : undefined,
      };
    });
    if (taken === undefined) return;
    const { synced, t0, follower } = taken;
    let image: DbImage;
    if (taken.exported) {
      try {
        const got = await taken.exported;
        image = { data: got.data, upTo: taken.upTo, crc: got.crc };
      } catch (e) {
        // No image from the worker: this checkpoint exports on this thread instead, and so do the next ones.
        this.lastError = (e as Error).message;
        await this.dropReplica();
        this.dirty = true;
        return this.runCheckpoint();
      }
      this.lastExportMs = monotonicMs() - t0;
      this.offThreadExports += 1;
    } else image = taken.image;
    if (this.lock && !this.lock.verify()) {
      await follower?.dispose();
      throw this.failure ?? new StoreFailedError('writer lock lost');
    }
    const rotate = this.prepareRotation(image);
    let sum: DbSum;
    try {
      sum = await this.writer.write(image, rotate);
    } catch (e) {
      this.dirty = true;
      await follower?.dispose();
      throw e;
    }
    if (follower) {
      follower.seed(image.data, loadedWasmPath()); // transferred: image.data is not read again
      this.replica = follower;
    }
    // A crash from here until the journal is replaced leaves the old header, which
    // describes the ralph.db now in ralph.db.prev: the next open recognises that.
    const prev = rotate ? this.dbSum : this.prevSum;
    const header: CheckpointHeader = { upTo: image.upTo, db: sum, ...(prev ? { prev } : {}) };
    await appender.exclusive(async () => {
      const t = this.trimmedJournal(header, rotate, appender.size, synced);
      await writeFileAtomic(this.journalPath, t.bytes);
      await appender.reopen(t.bytes.length);
      this.afterCheckpoint(sum, rotate, synced, t.keepFrom, t.headerLength);
    });
    if (this.changedKept !== undefined) {
      clearNextSum(this.ralphDir);
      this.changedKept = undefined;
    }
    this.checkpoints += 1; // counted once the journal is trimmed too
    this.lastCheckpointMs = monotonicMs() - t0;
  }

  /** A replica only for a writer whose exports would block long enough to matter, and never again after one failed. */
  private wantsReplica(bytes: number): boolean {
    if (this.replica || this.replicaFailed || this.replicaPolicy === 'never') return false;
    return this.replicaPolicy === 'always' || bytes >= REPLICA_MIN_BYTES;
  }

  private async dropReplica(): Promise<void> {
    const r = this.replica;
    this.replica = undefined;
    if (!r) return;
    this.replicaFailed = true;
    if (r.broken !== undefined && r.broken !== 'disposed') this.lastError = `checkpoint replica: ${r.broken}`;
    await r.dispose();
  }

  /** process 'exit': synchronous, best effort, so an exiting CLI leaves ralph.db complete. */
  private exitCheckpoint(): void {
    if (this.closed) return;
    try {
      if (this.inTransaction) {
        this.db.rollbackQuietly();
        this.inTransaction = false;
      }
      const size = this.appender?.size ?? 0;
      if (!this.failure && this.lock?.verify() !== false && (this.dirty || size > this.dbCoverEnd)) {
        const image = this.snapshot();
        const rotate = this.prepareRotation(image);
        const sum = this.writer.writeSync(image, rotate);
        const prev = rotate ? this.dbSum : this.prevSum;
        const t = this.trimmedJournal({ upTo: image.upTo, db: sum, ...(prev ? { prev } : {}) }, rotate, size, size);
        writeFileAtomicSync(this.journalPath, t.bytes);
        if (this.changedKept !== undefined) clearNextSum(this.ralphDir);
      }
    } catch {
      // Best effort: the journal still holds every acknowledged event.
    }
    this.lock?.release();
  }

  // ---- observers ----------------------------------------------------------------------

  /** Applies journal records past our offset (from 0 when the journal was replaced). */
  private readJournalTail(): void {
    let scan = readJournalSync(this.journalPath, this.journalOffset, { skipCovered: true });
    if (scan.ino !== this.journalIno && this.journalOffset !== 0) scan = readJournalSync(this.journalPath, 0, { skipCovered: true });
    this.followJournal(scan);
  }

  private followJournal(read: JournalRead): void {
    // The intact records before any damage are applied first, then the damage is thrown.
    const scan = this.resolveScan(read);
    const n = this.replayJournal(scan.records);
    this.replayed += n;
    this.journalIno = read.ino;
    this.journalOffset = scan.validEnd; // an incomplete last record is re-read next time
    if (scan.damage) throw journalDamageError(this.journalPath, scan.damage);
  }

  async refresh(): Promise<boolean> {
    this.assertOpen();
    if (this.mode === 'writer') return false;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = statOrUndefined(this.dbPath);
      if (!sameStamp(now, this.dbStamp)) {
        // A new checkpoint. If its journal header says ralph.db holds nothing past what we
        // have already applied, keep our database and just follow the new journal.
        const scan = readJournalSync(this.journalPath, 0, { skipCovered: true });
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
          this.dirty = this.dirty || (this.appender?.size ?? 0) > this.dbCoverEnd;
          await this.checkpoint();
        }
        await this.appender?.close();
        if (this.atClose && !this.lock?.isLost && !this.failure) this.atClose(this);
      }
    } finally {
      const r = this.replica;
      this.replica = undefined;
      await r?.dispose();
      this.closed = true;
      if (this.exitHandler) process.off('exit', this.exitHandler);
      this.lock?.release();
      this.db.close();
      this.listeners.clear();
    }
  }
}

/** `CREATE TABLE|INDEX|TRIGGER|VIEW IF NOT EXISTS name`: the object's name, in any quoting. */
const CREATE_IF_NOT_EXISTS = /^\s*CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\s+IF\s+NOT\s+EXISTS\s+["`[]?(\w+)["`\]]?/i;

/** Whether `ddl` only creates an object `objects` already has (anything else must run). */
function createsExisting(ddl: string, objects: ReadonlySet<string>): boolean {
  const name = CREATE_IF_NOT_EXISTS.exec(ddl)?.[1];
  return name !== undefined && objects.has(name);
}

/** How many journal events come before and including `eventId`; 0 when it is not there. */
function countUpTo(records: readonly JournalRecord[], eventId: string): number {
  let n = 0;
  for (const rec of records) {
    for (const e of rec.events) {
      n++;
      if (e.event_id === eventId) return n;
    }
  }
  return 0;
}

/** Removes what a writer killed mid-write leaves: atomic-write temps and heartbeat temps. */
function cleanTempFiles(ralphDir: string): void {
  for (const name of onFile('list', ralphDir, () => fs.readdirSync(ralphDir))) {
    if (isCheckpointTemp(name) || isAtomicTempOf(path.join(ralphDir, JOURNAL_FILE), name)) {
      fs.rmSync(path.join(ralphDir, name), { force: true });
    }
  }
  const locks = path.join(ralphDir, LOCKS_DIR);
  for (const name of fs.existsSync(locks) ? fs.readdirSync(locks) : []) {
    if (name.startsWith(`${LOCK_FILE}.beat-`)) fs.rmSync(path.join(locks, name), { force: true });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Takes the writer lock, waiting while other short-lived writers hold it, in turn with every
 * other waiter (writerQueue.ts: first come, first served). The wait gives up once the line
 * has not moved for `lockWaitMs` (the same holder, nobody ahead gone): a waiter with three
 * commands ahead of it waits for three turns, however long they take together, but not for
 * one that hangs. A holder that drains the inbox (a running loop) is not waited for. A
 * writer that does not wait does not take a free lock ahead of writers that do.
 */
async function acquireLock(
  options: OpenStoreOptions,
  runId: string,
  clock: Clock,
  onLost: () => void,
): Promise<{ lock: WriterLock; takeover?: Takeover }> {
  const locksDir = path.join(options.ralphDir, LOCKS_DIR);
  const lockFile = path.join(locksDir, LOCK_FILE);
  const take = (): { lock: WriterLock; takeover?: Takeover } =>
    WriterLock.acquire({
      locksDir,
      runId,
      clock,
      ...(options.drainsInbox ? { drainsInbox: true } : {}),
      ...(options.lockStaleMs !== undefined ? { staleMs: options.lockStaleMs } : {}),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
      onLost,
    });
  const start = Date.now();
  const waitMs = options.lockWaitMs ?? 0;
  const queued = liveTickets(locksDir).length;
  if (queued === 0) {
    try {
      return take();
    } catch (e) {
      if (!(e instanceof StoreLockedError) || e.holder?.drainsInbox || waitMs <= 0) throw e;
    }
  } else if (waitMs <= 0) {
    throw new StoreLockedError(lockFile, lockHolderOf(lockFile), 0, queued);
  }
  const ticket = WriterTicket.join(locksDir);
  try {
    let pause = 5;
    let movedAt = Date.now();
    let last: { ahead: number; holder: string } | undefined;
    for (;;) {
      const ahead = ticket.ahead();
      let holder: LockHolder | undefined;
      if (ahead === 0) {
        try {
          return take();
        } catch (e) {
          if (!(e instanceof StoreLockedError)) throw e;
          holder = e.holder;
        }
      } else {
        holder = lockHolderOf(lockFile);
      }
      const now = Date.now();
      const seen = { ahead, holder: holder ? `${holder.pid}@${holder.host}@${holder.started}` : '' };
      // The line moved: someone ahead left it, or the lock changed hands (a free lock about
      // to be taken counts as a change too).
      if (last && (seen.ahead < last.ahead || seen.holder !== last.holder)) movedAt = now;
      last = seen;
      const waited = now - start;
      if (holder?.drainsInbox || now - movedAt >= waitMs) throw new StoreLockedError(lockFile, holder, waited, ahead);
      options.onLockWait?.(waited, holder);
      await delay(Math.min(pause * (0.5 + Math.random()), waitMs - (now - movedAt)));
      // The first in line looks often, so a released lock is not left idle; the rest only
      // watch for their turn.
      pause = Math.min(pause * 2, ahead === 0 ? 20 : 50);
    }
  } finally {
    ticket.leave();
  }
}

/** ralph.db.prev's bytes, when it exists (only read on the refusal paths). */
function readPrev(ralphDir: string): Uint8Array | undefined {
  const file = path.join(ralphDir, PREV_DB_FILE);
  try {
    return fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('read', file, e);
  }
}

/**
 * Opens the event store in `.ralph`. The writer takes the lock (StoreLockedError when a
 * live process holds it), checks ralph.db against the history around it, replays journal
 * records ralph.db lacks and records a takeover of a dead holder's lock as a
 * `lock.taken_over` event. Observers read without the lock.
 */
export async function openStore(options: OpenStoreOptions): Promise<EventStore> {
  const clock = options.clock ?? Date.now;
  const runId = options.runId ?? defaultRunId(clock(), process.pid);
  const ralphDir = options.ralphDir;
  const dbPath = path.join(ralphDir, DB_FILE);
  const journalPath = path.join(ralphDir, JOURNAL_FILE);
  // sql.js's wasm compile is most of an open: a writer waits for it before taking the lock,
  // so commands side by side hold the lock for as short a time as possible; an observer
  // reads ralph.db meanwhile.
  const sqlJs = loadSqlJs(options.wasmPath);
  if (options.mode === 'writer') await sqlJs;
  let lock: WriterLock | undefined;
  let takeover: Takeover | undefined;
  let store: SqlJsEventStore | undefined;
  if (options.mode === 'writer') {
    onFile('mkdir', ralphDir, () => fs.mkdirSync(ralphDir, { recursive: true }));
    const got = await acquireLock(options, runId, clock, () => store?.onLockLost());
    lock = got.lock;
    takeover = got.takeover;
  }
  try {
    if (lock) cleanTempFiles(ralphDir);
    // Read ralph.db only now: a writer must hold the lock first, or a writer closing in
    // between could checkpoint (and trim the journal) after our read. Observers open the
    // database before they read the journal, so a checkpoint in between loses them nothing;
    // the journal is read while the thread pool copies ralph.db in.
    const [SQL, { read: file, result: scan }] = await Promise.all([
      sqlJs,
      readWithStampWhile(dbPath, () => readJournalSync(journalPath, 0, { acceptUnterminated: lock !== undefined, skipCovered: true })),
    ]);
    if (scan.damage) throw journalDamageError(journalPath, scan.damage);
    const header = headerOf(scan.records);
    let dbSum: DbSum | undefined;
    let interrupted: { prev: DbSum | undefined } | undefined;
    if (!file || file.data.length === 0) {
      refuseLostDatabase(dbPath, file ? 'empty' : 'missing', header, inspectDbBytes(SQL, readPrev(ralphDir)));
    } else if (lock) {
      const prevSum = (): DbSum | undefined => {
        const prev = readPrev(ralphDir);
        return prev ? { size: prev.length, crc: crc32(prev), upTo: '' } : undefined;
      };
      // ralph.db is ralph.db.prev (one inode), or the image a checkpoint wrote over a
      // ralph.db changed outside Ralph (ralph.db.next names it), killed before its trim.
      const isPrev = (): boolean => {
        const p = statOrUndefined(path.join(ralphDir, PREV_DB_FILE));
        if (p !== undefined && p.ino === file.stamp.ino) return true;
        return sameSum(readNextSum(ralphDir), { size: file.data.length, crc: crc32(file.data), upTo: '' });
      };
      if (checkDatabaseSum(dbPath, file.data, header, prevSum, isPrev) === 'interrupted') interrupted = { prev: prevSum() };
      dbSum = { size: file.data.length, crc: crc32(file.data), upTo: '' };
    }
    const loaded = SqlJsEventStore.loadDatabase(SQL, dbPath, options.projections, file);
    store = new SqlJsEventStore(
      SQL,
      loaded.db,
      options.mode,
      runId,
      ralphDir,
      options.projections,
      clock,
      options.checkpointDebounceMs ?? 1000,
      options.checkpointWriter,
      checkpointWorkerOf(options),
    );
    store.setDbBytes(loaded.bytes);
    if (lock) {
      store.callAtClose(options.atClose);
      const s = store;
      if (file && file.data.length > 0) refuseOlderDatabase(dbPath, header, (id) => s.hasEvent(id), s.maxEventId());
      if (dbSum) dbSum = { ...dbSum, upTo: s.maxEventId() };
      store.attachLock(lock);
      await store.openWriter({
        scan,
        dbExisted: file !== undefined && file.data.length > 0,
        dbStamp: file?.stamp,
        dbSum,
        changed: loaded.changed,
        ...(interrupted ? { interrupted } : {}),
      });
      // The journal's header now names the ralph.db on disk: a note of a checkpoint's next image is stale.
      clearNextSum(ralphDir);
      if (takeover) await store.recordTakeover(takeover);
    } else {
      store.openObserver(loaded.stamp, scan);
    }
    return store;
  } catch (e) {
    store?.abandon();
    lock?.release();
    throw e;
  }
}
