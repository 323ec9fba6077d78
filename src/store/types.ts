// The event store's port: what the control plane, the loop and the hosts may ask of it.
// The sql.js adapter (src/store/sqlJsStore.ts) implements it; projections (the derived
// tables such as task_view and patch_view) are supplied by their owners at open time.
import type { AppliedCommand } from './errors';

// The event row types belong to the domain (events.ts converts to and from them); the
// store's port names them as its own.
import type { NewEvent, StoredEvent } from '../domain/eventRows';
export type { NewEvent, StoredEvent };

export type SqlValue = string | number | null | Uint8Array;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;
export type SqlRow = Record<string, SqlValue>;

/** Read access to the database, for queries and for deciding commands. */
export interface SqlReader {
  all<R extends object = SqlRow>(sql: string, params?: SqlParams): R[];
  get<R extends object = SqlRow>(sql: string, params?: SqlParams): R | undefined;
}

/** Write access, given only to projections while they apply an event. */
export interface SqlWriter extends SqlReader {
  run(sql: string, params?: SqlParams): void;
}

/**
 * Keeps derived tables in step with the events. `apply` runs inside the same
 * transaction as the append; `truncate` + replaying every event must give the same rows
 * (that is what `rebuild` does and what repair checks).
 */
export interface Projection {
  readonly name: string;
  /** Bump to have the store rebuild this projection's tables on next open. */
  readonly version: number;
  /** CREATE TABLE / CREATE INDEX statements, idempotent (IF NOT EXISTS). */
  readonly ddl: readonly string[];
  readonly tables: readonly string[];
  apply(db: SqlWriter, event: StoredEvent): void;
}

/** What a command decided: the events to append and the value to hand back. */
export interface Decision<T> {
  readonly events: readonly NewEvent[];
  readonly result: T;
}

export interface Disposable {
  dispose(): void;
}

/**
 * A command applied exactly once: its id is recorded with its events (a `command.applied`
 * marker event in the same transaction and journal record), and executing the same id
 * again throws CommandAlreadyAppliedError instead of appending anything.
 */
export interface CommandStamp {
  /** Unique per submission (an inbox file's id); a replay carries the same id. */
  readonly id: string;
  /** What kind of command it was (emit-event, transition-task, stop…). */
  readonly name: string;
  readonly actor: string;
  /** Where it came from, e.g. `inbox/cmd_….json`. */
  readonly source?: string;
  /** 'failed' when the events record the command's failure (default 'applied'). */
  readonly outcome?: 'applied' | 'failed';
}

export interface ExecuteOptions {
  readonly command?: CommandStamp;
}

export type StoreMode = 'writer' | 'observer';

export interface EventStore extends SqlReader {
  readonly mode: StoreMode;
  readonly runId: string;
  readonly dbPath: string;

  /**
   * Runs `decide` against the current state and appends what it returns, atomically
   * (events + projections in one transaction, nothing written when `decide` throws).
   * Resolves once the events are durable (journal fsync; bursts share one fsync).
   * Throws ReadOnlyStoreError in observer mode.
   */
  execute<T>(decide: (db: SqlReader) => Decision<T>, options?: ExecuteOptions): Promise<{ result: T; events: StoredEvent[] }>;

  /** Shorthand for execute with a fixed list of events. */
  append(events: readonly NewEvent[], options?: ExecuteOptions): Promise<StoredEvent[]>;

  /** The record of a command id executed with ExecuteOptions.command, if it was. */
  appliedCommand(commandId: string): AppliedCommand | undefined;

  /** Events in append order, optionally only those after `afterId`. */
  events(filter?: EventFilter): StoredEvent[];

  /** Truncates every projection and replays all events into it. */
  rebuild(): Promise<void>;

  /** Writes ralph.db atomically now (temp + fsync + rename) and trims the journal. */
  checkpoint(): Promise<void>;

  /** Observers: re-read ralph.db and the journal's tail; no-op for the writer. */
  refresh(): Promise<boolean>;

  /** Fires after events are applied (writer: after append; observer: after refresh). */
  onDidAppend(listener: (events: readonly StoredEvent[]) => void): Disposable;

  /** Counters for benchmarks, diagnostics and tests. */
  stats(): StoreStats;

  /** Checkpoints (writer), releases the lock, frees the database. */
  close(): Promise<void>;
}

/** What the store has done since it was opened (sizes are current). */
export interface StoreStats {
  /** Commands (execute calls) that appended at least one event. */
  readonly commands: number;
  readonly eventsAppended: number;
  /** Events whose journal write was fsynced (acknowledged to their command). */
  readonly eventsAcknowledged: number;
  /** fdatasync calls on the journal; a group-committed burst counts once. */
  readonly fsyncs: number;
  /** Completed atomic writes of ralph.db. */
  readonly checkpoints: number;
  readonly journalBytes: number;
  /** Size of ralph.db on disk at the last checkpoint or load. */
  readonly dbBytes: number;
  /** Journal events applied at open (writer) or on refresh (observer) that the db lacked. */
  readonly replayedEvents: number;
  /** Bytes of a torn or garbled journal tail ignored (and, by the writer, cut off). */
  readonly tornBytes: number;
  /** Observers: times ralph.db was re-read because a checkpoint held events not yet seen. */
  readonly dbReloads: number;
  /** Duration of the last checkpoint's export (synchronous: it blocks the event loop). */
  readonly lastExportMs: number;
  /** Duration of the last whole checkpoint (export, atomic write, journal trim). */
  readonly lastCheckpointMs: number;
  /** Checkpoints whose export ran in the checkpoint replica's worker thread, not on the writer's. */
  readonly checkpointsOffThread?: number;
  /** The last background checkpoint failure, if any. */
  readonly lastError?: string;
}

/** Which events `events()` returns, in event-id order. */
export interface EventFilter {
  readonly afterId?: string;
  readonly entityType?: string;
  readonly entityId?: string;
  readonly limit?: number;
}
