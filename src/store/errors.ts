// Typed errors of the event store: each has a stable `name` and the data a caller needs.

/** What `.ralph/locks/writer.lock` says about the process holding it. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** ISO 8601 UTC: when the holder took the lock. */
  readonly started: string;
  /** ISO 8601 UTC: the holder's last sign of life. */
  readonly heartbeat: string;
  readonly runId: string;
  /** True for a writer that drains `.ralph/inbox/` while it holds the lock (a running loop). */
  readonly drainsInbox?: boolean;
}

/** A second writer tried to open the store while a live process holds the lock. */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
  constructor(
    readonly lockPath: string,
    readonly holder: LockHolder | undefined,
    /** How long the opener waited for the lock before giving up (0: it did not wait). */
    readonly waitedMs = 0,
    /** How many other writers were waiting for the lock ahead of this one (writerQueue.ts). */
    readonly waitingAhead = 0,
  ) {
    super(
      (holder
        ? `The Ralph event store is locked by another writer: pid ${holder.pid} on host ${holder.host}, ` +
          `since ${holder.started} (last heartbeat ${holder.heartbeat}, run ${holder.runId}` +
          `${holder.drainsInbox ? ', a running loop' : ''}). Open it as an observer, or stop that process. Lock file: ${lockPath}`
        : waitingAhead > 0
          ? `The Ralph event store's lock ${lockPath} is passing to another writer waiting for it; try again.`
          : `The Ralph event store is locked by another writer that is still creating ${lockPath}; try again.`) +
        (waitingAhead > 0 ? ` ${waitingAhead} other writer(s) wait(s) for it ahead of this one.` : '') +
        (waitedMs > 0 ? ` (waited ${(waitedMs / 1000).toFixed(1)} s for it)` : ''),
    );
  }
}

/** A write was attempted through a store opened in observer mode. */
export class ReadOnlyStoreError extends Error {
  override readonly name = 'ReadOnlyStoreError';
  constructor(readonly operation: string) {
    super(`The event store is open read-only (observer); ${operation} needs the writer.`);
  }
}

/**
 * ralph.db or the journal cannot be read as what it should be, or holds less than its
 * history proves existed: the store refuses to open rather than lose or hide events.
 */
export class StoreCorruptError extends Error {
  override readonly name = 'StoreCorruptError';
  constructor(
    readonly file: string,
    readonly detail: string,
    /** Byte offset of the damage in `file`, when known. */
    readonly offset?: number,
  ) {
    super(`${file}: ${detail}`);
  }
}

/** A command id that is already recorded as applied (exactly once: the replay is skipped). */
export class CommandAlreadyAppliedError extends Error {
  override readonly name = 'CommandAlreadyAppliedError';
  constructor(
    readonly commandId: string,
    readonly applied: AppliedCommand,
  ) {
    super(`command ${commandId} was already applied (event ${applied.markerId})`);
  }
}

/** What the store recorded about an applied command: its marker event and the events it appended. */
export interface AppliedCommand {
  readonly markerId: string;
  readonly command: string;
  readonly outcome: 'applied' | 'failed';
  readonly eventIds: readonly string[];
  readonly ts: string;
}

/** The database was written by a newer Ralph whose schema this one does not know. */
export class StoreVersionError extends Error {
  override readonly name = 'StoreVersionError';
  constructor(
    readonly file: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(`${file}: schema version ${found} is newer than this Ralph supports (${supported}); upgrade Ralph.`);
  }
}

/**
 * The store can no longer promise durability (a journal write failed, or another process
 * took the lock over); every later write is refused so memory and disk cannot drift apart.
 */
export class StoreFailedError extends Error {
  override readonly name = 'StoreFailedError';
  constructor(
    readonly reason: string,
    override readonly cause?: unknown,
    /**
     * Whether the write that failed may still be in the journal: 'no' (cut back: retrying
     * cannot duplicate it) or 'unknown' (do not retry blindly).
     */
    readonly recorded: 'no' | 'unknown' = 'no',
  ) {
    super(
      `The event store stopped accepting writes: ${reason}` +
        (recorded === 'unknown' ? '; the failed command may or may not have been recorded' : ''),
    );
  }
}

/** The store was used after close(). */
export class StoreClosedError extends Error {
  override readonly name = 'StoreClosedError';
  constructor() {
    super('The event store is closed.');
  }
}

/**
 * An optimistic-concurrency append lost: another process appended first, and re-deciding
 * against the newer state kept losing for `attempts` tries (a shared store only).
 */
export class StoreConflictError extends Error {
  override readonly name = 'StoreConflictError';
  constructor(
    readonly expectedHead: number,
    readonly actualHead: number,
    readonly attempts: number,
  ) {
    super(
      `The event store changed under this command ${attempts} times in a row (expected head ${expectedHead}, found ${actualHead}); ` +
        'another process is appending heavily; try again.',
    );
  }
}

/** The shared store's server cannot be reached (for longer than the store waits). */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(
    /** The store URL with its password replaced. */
    readonly url: string,
    readonly detail: string,
  ) {
    super(`The event store at ${url} is unavailable: ${detail}`);
  }
}
