// Over 400 lines because it is one adapter of the EventStore port whose append, replica and notifications share one connection's state.
// The PostgreSQL adapter of the EventStore port (team mode). PostgreSQL holds the truth: the
// `events` table, appended with optimistic concurrency (a compare-and-swap on ralph_head in
// the same transaction as the insert). Each process keeps a replica of the events and the
// projections in an in-memory sql.js database, so the port's reads and commands' decide
// functions stay synchronous and the projections' SQL is the same as the embedded store's.
// LISTEN/NOTIFY tells every process about new events at once. A connection lost mid-run is
// waited out (up to `outageMs`), and an append whose COMMIT went unanswered is looked up
// by its event ids before it is retried, so nothing is appended twice or lost.
import { Client } from 'pg';
import { pgClientConfig } from './pgConfig';
import { redactValue } from '../../shared/redaction';
import {
  CommandAlreadyAppliedError,
  ReadOnlyStoreError,
  StoreClosedError,
  StoreConflictError,
  StoreUnavailableError,
  type AppliedCommand,
} from '../errors';
import { EventIdGenerator, defaultRunId, isoTimestamp, type Clock } from '../eventIds';
import { EVENT_COLUMNS, INSERT_EVENT, checkNewEvent, eventsQuery, rowToEvent, type EventRow } from '../eventRows';
import { migrate } from '../schema';
import { SqlDb, loadSqlJs } from '../sqlDb';
import { COMMAND_APPLIED } from '../sqlJsStore';
import { redactStoreUrl, storeUrlProblem } from '../storeUrl';
import type {
  CommandStamp,
  Decision,
  ExecuteOptions,
  Disposable,
  EventStore,
  NewEvent,
  Projection,
  SqlParams,
  SqlReader,
  SqlRow,
  EventFilter,
  StoreMode,
  StoreStats,
  StoredEvent,
} from '../types';
import { EVENTS_CHANNEL, ensurePgSchema } from './pgSchema';

export interface OpenPgStoreOptions {
  readonly url: string;
  readonly mode: StoreMode;
  readonly projections: readonly Projection[];
  readonly runId?: string;
  readonly wasmPath?: string;
  readonly clock?: Clock;
  /** How long a command waits for a lost server to come back before it fails (default 5 min). */
  readonly outageMs?: number;
  /** Re-decide attempts after losing the compare-and-swap (default 20). */
  readonly maxAttempts?: number;
  /**
   * LISTEN for other processes' events (default true). A one-shot command does without:
   * it catches up before each command anyway, through the compare-and-swap.
   */
  readonly subscribe?: boolean;
}

interface Pending {
  readonly decide: (db: SqlReader) => Decision<unknown>;
  readonly command: CommandStamp | undefined;
  readonly resolve: (v: { result: unknown; events: StoredEvent[] }) => void;
  readonly reject: (e: unknown) => void;
}

type Outcome = { ok: true; result: unknown; events: StoredEvent[] } | { ok: false; error: unknown };

interface PgEventRow extends EventRow {
  seq: string;
}

const PG_COLUMNS = `seq, ${EVENT_COLUMNS}`;

/**
 * Every append transaction takes this transaction-scoped advisory lock first, so appends
 * commit one at a time; a command that keeps losing the compare-and-swap decides its next
 * attempt while holding it, after reading what it missed, and so cannot lose again.
 */
const APPEND_LOCK: readonly [number, number] = [0x52616c70, 2];
/** Optimistic attempts before a command decides under the append lock. */
const OPTIMISTIC_ATTEMPTS = 2;

const INSERT_EVENTS = `INSERT INTO events(${PG_COLUMNS})
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`;

function insertParams(expected: number, events: readonly StoredEvent[]): unknown[] {
  return [
    events.map((_, i) => expected + 1 + i),
    events.map((e) => e.event_id),
    events.map((e) => e.ts),
    events.map((e) => e.run_id),
    events.map((e) => e.entity_type),
    events.map((e) => e.entity_id),
    events.map((e) => e.event_type),
    events.map((e) => e.actor),
    events.map((e) => JSON.stringify(e.payload)),
  ];
}

/** Errors that mean the connection, not the statement, failed: wait and retry. */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : '';
  if (/^(08|57P0)/.test(code)) return true; // connection exceptions, admin/crash shutdown
  if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENOENT'].includes(code)) return true;
  const msg = typeof err?.message === 'string' ? err.message : '';
  return /Connection terminated|Client has encountered a connection error|not queryable|the database system is (starting up|shutting down)/i.test(
    msg,
  );
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

class PgEventStore implements EventStore {
  readonly dbPath: string;
  private readonly ids: EventIdGenerator;
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private listener: Client | undefined;
  private listenTimer: NodeJS.Timeout | undefined;
  private head = 0;
  private inTransaction = false;
  private closed = false;
  private pending: Pending[] = [];
  private draining = false;
  private catchUpChain: Promise<boolean> = Promise.resolve(false);
  private commands = 0;
  private eventsAppended = 0;
  private commits = 0;
  private lastError: string | undefined;

  constructor(
    private readonly url: string,
    private readonly db: SqlDb,
    readonly mode: StoreMode,
    readonly runId: string,
    private readonly projections: readonly Projection[],
    private readonly clock: Clock,
    private readonly outageMs: number,
    private readonly maxAttempts: number,
    private readonly subscribe: boolean,
  ) {
    this.dbPath = redactStoreUrl(url);
    this.ids = new EventIdGenerator(clock);
  }

  // ---- connections --------------------------------------------------------------------

  private newClient(): Client {
    const c = new Client(pgClientConfig(this.url, `ralph ${this.runId}`));
    // An idle client's socket error must not crash the process: drop it, reconnect on use.
    c.on('error', (e) => {
      this.lastError = e.message;
      if (this.client === c) this.client = undefined;
    });
    c.on('end', () => {
      if (this.client === c) this.client = undefined;
    });
    return c;
  }

  /** The command connection, (re)connected on demand. */
  private connection(): Promise<Client> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const c = this.newClient();
      try {
        await c.connect();
      } catch (e) {
        await c.end().catch(() => undefined);
        throw e;
      }
      this.client = c;
      return c;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Runs `fn` on the connection; waits out a lost server for up to outageMs. */
  private async withConnection<T>(what: string, fn: (c: Client) => Promise<T>, waitMs = this.outageMs): Promise<T> {
    const deadline = Date.now() + waitMs;
    let wait = 50;
    for (;;) {
      try {
        return await fn(await this.connection());
      } catch (e) {
        if (this.closed) throw new StoreClosedError();
        if (!isConnectionError(e)) throw e;
        this.lastError = (e as Error).message;
        const c = this.client;
        this.client = undefined;
        void c?.end().catch(() => undefined);
        if (Date.now() >= deadline) throw new StoreUnavailableError(this.dbPath, `${what}: ${(e as Error).message}`);
        await delay(wait);
        wait = Math.min(wait * 2, 1000);
      }
    }
  }

  async open(): Promise<void> {
    // Opening is interactive (`ralph status`): a server that stays away fails it soon.
    await this.withConnection('open', (c) => ensurePgSchema(c, this.dbPath, this.mode === 'writer'), Math.min(this.outageMs, 10_000));
    if (this.subscribe) await this.listen();
    await this.catchUp();
  }

  /** LISTEN on a connection of its own; on loss, reconnects and catches up what it missed. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const c = this.newClient();
    const lost = (): void => {
      if (this.listener !== c) return;
      this.listener = undefined;
      void c.end().catch(() => undefined);
      this.scheduleListen(250);
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL && Number(n.payload) > this.head) void this.catchUp().catch(() => undefined);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (e) {
      await c.end().catch(() => undefined);
      if (!isConnectionError(e)) throw e;
      this.scheduleListen(500);
      return;
    }
    if (this.closed) {
      await c.end().catch(() => undefined);
      return;
    }
    this.listener = c;
  }

  private scheduleListen(ms: number): void {
    if (this.closed || this.listenTimer) return;
    this.listenTimer = setTimeout(() => {
      this.listenTimer = undefined;
      void this.listen()
        .then(() => (this.listener ? this.catchUp() : false))
        .catch((e: unknown) => {
          this.lastError = (e as Error).message;
        });
    }, ms);
  }

  // ---- the replica --------------------------------------------------------------------

  /** Fetches events past our head and applies them; true when there were any. */
  catchUp(): Promise<boolean> {
    const run = this.catchUpChain.then(async () => {
      if (this.closed) return false;
      const rows = await this.withConnection('read events', (c) =>
        c.query<PgEventRow>(`SELECT ${PG_COLUMNS} FROM events WHERE seq > $1 ORDER BY seq`, [this.head]),
      );
      return this.applyRows(rows.rows.map((r) => ({ seq: Number(r.seq), event: rowToEvent(r) }))) > 0;
    });
    this.catchUpChain = run.catch(() => false);
    return run;
  }

  /** Applies rows past our head (in seq order) to the replica, then tells the listeners. */
  private applyRows(rows: readonly { seq: number; event: StoredEvent }[]): number {
    const fresh = rows.filter((r) => r.seq > this.head);
    if (fresh.length === 0 || this.closed) return 0;
    if (this.inTransaction) throw new Error('replica apply inside a command');
    this.db.exec('BEGIN');
    try {
      for (const { seq, event } of fresh) {
        if (seq !== this.head + 1) throw new Error(`${this.dbPath}: event seq ${seq} follows ${this.head}: the log has a gap`);
        this.insertAndApply(event);
        this.ids.observe(event.event_id);
        this.head = seq;
      }
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.rollbackQuietly();
      throw e;
    }
    this.fire(fresh.map((r) => r.event));
    return fresh.length;
  }

  private insertAndApply(e: StoredEvent): void {
    this.db.run(INSERT_EVENT, [e.event_id, e.ts, e.run_id, e.entity_type, e.entity_id, e.event_type, e.actor, JSON.stringify(e.payload)]);
    for (const p of this.projections) p.apply(this.db, e);
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

  // ---- reading ------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }

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

  onDidAppend(listener: (events: readonly StoredEvent[]) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  stats(): StoreStats {
    return {
      commands: this.commands,
      eventsAppended: this.eventsAppended,
      eventsAcknowledged: this.eventsAppended,
      fsyncs: this.commits,
      checkpoints: 0,
      journalBytes: 0,
      dbBytes: 0,
      replayedEvents: 0,
      tornBytes: 0,
      dbReloads: 0,
      lastExportMs: 0,
      lastCheckpointMs: 0,
      ...(this.lastError !== undefined ? { lastError: redactStoreUrl(this.lastError) } : {}),
    };
  }

  /** The last seq this process has applied (tests, diagnostics). */
  get headSeq(): number {
    return this.head;
  }

  // ---- writing ------------------------------------------------------------------------

  execute<T>(decide: (db: SqlReader) => Decision<T>, options: ExecuteOptions = {}): Promise<{ result: T; events: StoredEvent[] }> {
    try {
      this.assertOpen();
      if (this.mode !== 'writer') throw new ReadOnlyStoreError('execute');
      if (this.inTransaction) throw new Error('execute() was called from inside a decide or a projection; commands do not nest');
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ decide, command: options.command, resolve: resolve as Pending['resolve'], reject });
      // Commands issued in the same tick share one transaction (group commit).
      if (!this.draining) {
        this.draining = true;
        queueMicrotask(() => void this.drain());
      }
    });
  }

  async append(events: readonly NewEvent[], options?: ExecuteOptions): Promise<StoredEvent[]> {
    return (await this.execute(() => ({ events, result: undefined }), options)).events;
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

  private stamp(e: NewEvent, ts: string): StoredEvent {
    return {
      event_id: this.ids.next(),
      ts,
      run_id: this.runId,
      entity_type: e.entity_type,
      entity_id: e.entity_id,
      event_type: e.event_type,
      actor: e.actor,
      // The one redaction step for event payloads, as in the embedded store.
      payload: redactValue(e.payload),
    };
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0);
        try {
          const outcomes = await this.commitBatch(batch);
          outcomes.forEach((o, i) => {
            const p = batch[i];
            if (!p) return;
            if (o.ok) p.resolve({ result: o.result, events: o.events });
            else p.reject(o.error);
          });
        } catch (e) {
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Decides every command of the batch against the replica, in order (each sees the ones before). */
  private decideBatch(batch: readonly Pending[]): Outcome[] {
    const outcomes: Outcome[] = [];
    this.db.exec('BEGIN');
    this.inTransaction = true;
    try {
      const ts = isoTimestamp(this.clock());
      for (const p of batch) {
        this.db.exec('SAVEPOINT cmd');
        try {
          // Checked against the replica as of `expected`: a concurrent application of the
          // same command elsewhere makes the compare-and-swap fail, and the re-decision sees it.
          const prior = p.command ? this.appliedCommand(p.command.id) : undefined;
          if (p.command && prior) throw new CommandAlreadyAppliedError(p.command.id, prior);
          const decision = p.decide(this.db);
          const stored: StoredEvent[] = [];
          decision.events.forEach((e, i) => {
            checkNewEvent(e, i);
            const s = this.stamp(e, ts);
            this.insertAndApply(s);
            stored.push(s);
          });
          if (p.command) {
            const c = p.command;
            const marker = this.stamp(
              {
                entity_type: 'command',
                entity_id: c.id,
                event_type: COMMAND_APPLIED,
                actor: c.actor,
                payload: {
                  command: c.name,
                  outcome: c.outcome ?? 'applied',
                  event_ids: stored.map((x) => x.event_id),
                  ...(c.source !== undefined ? { source: c.source } : {}),
                },
              },
              ts,
            );
            this.insertAndApply(marker);
            stored.push(marker);
          }
          this.db.exec('RELEASE cmd');
          outcomes.push({ ok: true, result: decision.result, events: stored });
        } catch (error) {
          this.db.exec('ROLLBACK TO cmd');
          this.db.exec('RELEASE cmd');
          outcomes.push({ ok: false, error });
        }
      }
    } finally {
      // The replica takes the events only once PostgreSQL has them (applyRows).
      this.db.rollbackQuietly();
      this.inTransaction = false;
    }
    return outcomes;
  }

  private async commitBatch(batch: readonly Pending[]): Promise<Outcome[]> {
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new StoreClosedError();
      const expected = this.head;
      const outcomes = this.decideBatch(batch);
      const events = outcomes.flatMap((o) => (o.ok ? o.events : []));
      if (events.length === 0) return outcomes;
      const won = await this.casAppend(expected, events);
      if (won === true) {
        this.applyRows(events.map((event, i) => ({ seq: expected + 1 + i, event })));
        this.commands += outcomes.filter((o) => o.ok && o.events.length > 0).length;
        this.eventsAppended += events.length;
        return outcomes;
      }
      // Lost the race: take in what the others appended, then decide again on it.
      if (attempt >= this.maxAttempts) throw new StoreConflictError(expected, won, attempt);
      if (attempt >= OPTIMISTIC_ATTEMPTS) return this.lockedAppend(batch);
      await this.catchUp();
    }
  }

  /**
   * Reads what this process missed and decides under the append lock: nobody can append in
   * between, so the compare-and-swap holds. After a lost connection the previous attempt's
   * first event is looked up first (its COMMIT may have landed).
   */
  private async lockedAppend(batch: readonly Pending[]): Promise<Outcome[]> {
    let previous: { first: string; outcomes: Outcome[] } | undefined;
    return this.withConnection('append', async (c) => {
      if (previous) {
        const found = await c.query('SELECT seq FROM events WHERE event_id = $1', [previous.first]);
        if (found.rows.length > 0) {
          await this.catchUp();
          return previous.outcomes;
        }
        previous = undefined;
      }
      await c.query('BEGIN');
      try {
        await c.query('SELECT pg_advisory_xact_lock($1, $2)', [...APPEND_LOCK]);
        const missed = await c.query<PgEventRow>(`SELECT ${PG_COLUMNS} FROM events WHERE seq > $1 ORDER BY seq`, [this.head]);
        this.applyRows(missed.rows.map((r) => ({ seq: Number(r.seq), event: rowToEvent(r) })));
        const expected = this.head;
        const outcomes = this.decideBatch(batch);
        const events = outcomes.flatMap((o) => (o.ok ? o.events : []));
        if (events.length === 0) {
          await c.query('COMMIT');
          return outcomes;
        }
        const cas = await c.query('UPDATE ralph_head SET seq = seq + $1 WHERE id = 1 AND seq = $2', [events.length, expected]);
        if (cas.rowCount !== 1) throw new Error(`${this.dbPath}: ralph_head moved while the append lock was held`);
        await c.query(INSERT_EVENTS, insertParams(expected, events));
        await c.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, String(expected + events.length)]);
        previous = { first: events[0]?.event_id ?? '', outcomes };
        await c.query('COMMIT');
        this.commits += 1;
        this.applyRows(events.map((event, i) => ({ seq: expected + 1 + i, event })));
        this.commands += outcomes.filter((o) => o.ok && o.events.length > 0).length;
        this.eventsAppended += events.length;
        return outcomes;
      } catch (e) {
        if (!isConnectionError(e)) {
          previous = undefined;
          await c.query('ROLLBACK').catch(() => undefined);
        }
        throw e;
      }
    });
  }

  /**
   * Appends `events` at seq expected+1… if the head is still `expected`: true, or the head
   * found. After a lost connection the outcome of an unanswered COMMIT is looked up.
   */
  private async casAppend(expected: number, events: readonly StoredEvent[]): Promise<true | number> {
    const first = events[0]?.event_id ?? '';
    let uncertain = false;
    return this.withConnection('append', async (c) => {
      if (uncertain) {
        const found = await c.query('SELECT seq FROM events WHERE event_id = $1', [first]);
        if (found.rows.length > 0) return true;
      }
      uncertain = true;
      try {
        await c.query('BEGIN');
        await c.query('SELECT pg_advisory_xact_lock($1, $2)', [...APPEND_LOCK]);
        const cas = await c.query<{ seq: string }>('UPDATE ralph_head SET seq = seq + $1 WHERE id = 1 AND seq = $2 RETURNING seq', [
          events.length,
          expected,
        ]);
        if (cas.rowCount !== 1) {
          await c.query('ROLLBACK');
          uncertain = false;
          const now = await c.query<{ seq: string }>('SELECT seq FROM ralph_head WHERE id = 1');
          return Number(now.rows[0]?.seq ?? -1);
        }
        await c.query(INSERT_EVENTS, insertParams(expected, events));
        await c.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, String(expected + events.length)]);
        await c.query('COMMIT');
        this.commits += 1;
        return true as const;
      } catch (e) {
        if (!isConnectionError(e)) {
          await c.query('ROLLBACK').catch(() => undefined);
          uncertain = false;
        }
        throw e;
      }
    });
  }

  async rebuild(): Promise<void> {
    this.assertOpen();
    if (this.inTransaction) throw new Error('rebuild() cannot run inside a command');
    this.db.exec('BEGIN');
    try {
      for (const p of this.projections) for (const t of p.tables) this.db.exec(`DELETE FROM "${t.replace(/"/g, '""')}"`);
      const rows = this.db.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events ORDER BY event_id`);
      for (const r of rows) {
        const e = rowToEvent(r);
        for (const p of this.projections) p.apply(this.db, e);
      }
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.rollbackQuietly();
      throw e;
    }
  }

  /** PostgreSQL made every acknowledged append durable at COMMIT: nothing to write. */
  async checkpoint(): Promise<void> {
    this.assertOpen();
    if (this.mode !== 'writer') throw new ReadOnlyStoreError('checkpoint');
  }

  async refresh(): Promise<boolean> {
    this.assertOpen();
    return this.catchUp();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let commands already issued finish (they were acknowledged to nobody yet).
    while (this.draining) await new Promise((r) => setImmediate(r));
    this.closed = true;
    if (this.listenTimer) clearTimeout(this.listenTimer);
    const clients = [this.client, this.listener];
    this.client = undefined;
    this.listener = undefined;
    await Promise.all(clients.map((c) => c?.end().catch(() => undefined)));
    this.listeners.clear();
    this.db.close();
  }
}

/**
 * Opens the shared event store at a postgres:// URL: creates its tables on a writer's first
 * open, then replays every event into this process's replica of the projections.
 */
export async function openPgStore(options: OpenPgStoreOptions): Promise<EventStore & { readonly headSeq: number }> {
  const problem = storeUrlProblem(options.url);
  if (problem !== null) throw new Error(`the store URL ${redactStoreUrl(options.url)} ${problem}`);
  const clock = options.clock ?? Date.now;
  const runId = options.runId ?? defaultRunId(clock(), process.pid);
  const SQL = await loadSqlJs(options.wasmPath);
  const db = new SqlDb(new SQL.Database());
  db.exec('PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;');
  migrate(db, redactStoreUrl(options.url));
  for (const p of options.projections) for (const s of p.ddl) db.exec(s);
  const now = new Date(clock()).toISOString();
  for (const p of options.projections) {
    db.run('INSERT OR REPLACE INTO ralph_projections(name, version, rebuilt_at) VALUES (?, ?, ?)', [p.name, p.version, now]);
  }
  const store = new PgEventStore(
    options.url,
    db,
    options.mode,
    runId,
    options.projections,
    clock,
    options.outageMs ?? 300_000,
    options.maxAttempts ?? 20,
    options.subscribe ?? true,
  );
  try {
    await store.open();
  } catch (e) {
    await store.close();
    if (e instanceof Error && !(e instanceof StoreUnavailableError) && isConnectionError(e)) {
      throw new StoreUnavailableError(redactStoreUrl(options.url), e.message);
    }
    throw e;
  }
  return store;
}
