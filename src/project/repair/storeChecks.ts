// Over 400 lines because the store repair checks are small functions that share one finding type and one ordered list.
// Repair checks that need the event store: the files on disk before anyone opens them
// (SQLite integrity and tables, journal vs database, the writer lock) and the state of an
// opened store (counts in STATE.json, stuck claims, patches, BACKLOG.md marks, deferrals
// due, and views equal to a rebuild from events, replayed into a scratch in-memory copy).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { JOURNAL_FILE, readJournalSync } from '../../store/journal';
import { inspectStoreFiles, type StoreFileProblem } from '../../store/salvage';
import { DB_FILE, LOCKS_DIR } from '../../store/sqlJsStore';
import { SqlDb, loadSqlJs } from '../../store/sqlDb';
import { LOCK_FILE, deadReason } from '../../store/writerLock';
import type { LockHolder } from '../../store/errors';
import type { Projection, SqlReader, SqlRow, StoredEvent } from '../../store/types';
import { parseBacklog, renderBacklog } from '../../domain/backlog';
import { currentPatch, decideExpireDeferrals, hasPromotedPatch, type DeferredFacts } from '../../domain/task';
import type { Patch, Task } from '../../domain/model';
import { ralphPaths, type ControlContext } from '../../control/context';
import { CONTROL_PROJECTIONS, allTasks, lastEventId, patchesOf, promotedSince } from '../../control/views';
import { RALPH_DIR } from '../init';
import { ok } from './findings';
import type { Finding } from './findings';

/** Tables the control plane's commands and the README's queries need. */
export const REQUIRED_TABLES: readonly string[] = ['events', 'task_view', 'patch_view', 'ralph_meta', 'ralph_projections'];

/** A claim older than this, while a live run holds the store, is reported as possibly stuck. */
export const DEFAULT_CLAIM_STALE_MS = 2 * 60 * 60 * 1000;

export type WriterState =
  | { readonly state: 'free' }
  | { readonly state: 'live'; readonly holder: LockHolder | undefined }
  | { readonly state: 'dead'; readonly holder: LockHolder | undefined; readonly reason: string };

/** Who holds `.ralph/locks/writer.lock`: nobody, a live process, or a dead one. */
export function inspectWriterLock(ralphDir: string, now: number = Date.now(), staleMs = 30_000): WriterState {
  const file = path.join(ralphDir, LOCKS_DIR, LOCK_FILE);
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch {
    return { state: 'free' };
  }
  let holder: LockHolder | undefined;
  try {
    const v = JSON.parse(raw) as Partial<LockHolder>;
    if (typeof v.pid === 'number' && typeof v.host === 'string' && typeof v.heartbeat === 'string') holder = v as LockHolder;
  } catch {
    holder = undefined;
  }
  if (!holder) {
    // Unreadable: being written right now, or left by a holder killed mid-write.
    const age = now - fs.statSync(file).mtimeMs;
    return age > staleMs ? { state: 'dead', holder: undefined, reason: 'unreadable' } : { state: 'live', holder: undefined };
  }
  const reason = deadReason(holder, now, staleMs);
  return reason ? { state: 'dead', holder, reason } : { state: 'live', holder };
}

const STORE_FIX = {
  kind: 'control-plane',
  description: 'opening the store as writer replays the journal, cuts a torn tail and takes a dead lock over (with an event)',
} as const;

/** The store's own restore (src/store/salvage.ts), which `ralph repair --fix` runs before anything else. */
const RESTORE_FIX = {
  kind: 'control-plane',
  description:
    'ralph repair --fix keeps every intact journal record, restores ralph.db from ralph.db.prev where needed, saves the files as found under .ralph/backup/, records an incident and says what, if anything, was lost',
} as const;

const PROBLEM_CHECK: Record<StoreFileProblem['kind'], string> = {
  journal_damaged: 'journal.damaged',
  db_missing: 'db.missing',
  db_unreadable: 'db.integrity',
  db_checksum: 'db.checksum',
  db_older: 'db.older',
};

/** Findings the writer's refusals become: the store will not open these files until repaired. */
export const STORE_REFUSALS: ReadonlySet<string> = new Set(['journal.damaged', 'db.missing', 'db.checksum', 'db.older']);

/**
 * ralph.db and the journal as files, before the store opens them: SQLite's integrity
 * check, the required tables, journal records whose events ralph.db lacks, a torn tail,
 * and a journal header naming events ralph.db does not have (lost events).
 */
export async function checkStoreFiles(ralphDir: string, writer: WriterState): Promise<Finding[]> {
  const findings: Finding[] = [];
  const dbRel = `${RALPH_DIR}/${DB_FILE}`;
  const journalRel = `${RALPH_DIR}/${JOURNAL_FILE}`;
  const dbFile = path.join(ralphDir, DB_FILE);
  const journal = readJournalSync(path.join(ralphDir, JOURNAL_FILE));
  const live = writer.state === 'live';
  const inspection = await inspectStoreFiles(ralphDir);
  const restorable = inspection.prev?.ok === true;
  const dbFix = restorable ? RESTORE_FIX : ({ kind: 'manual', description: 'restore ralph.db from a backup' } as const);
  for (const p of inspection.problems) {
    if (p.kind === 'db_unreadable') continue; // the integrity check below reports it
    findings.push({
      check: PROBLEM_CHECK[p.kind],
      status: live ? 'warn' : 'fail',
      message: p.message,
      path: p.kind === 'journal_damaged' ? journalRel : dbRel,
      fix: RESTORE_FIX,
    });
  }
  const lostWithHistory = inspection.problems.some((p) => p.kind === 'db_missing');

  let missingFromDb = 0;
  let dbReadable = false;
  if (lostWithHistory) {
    // reported above: a missing or empty ralph.db whose history says it held events
  } else if (!fs.existsSync(dbFile)) {
    if (journal.records.length === 0) {
      findings.push({
        check: 'db.missing',
        status: 'fail',
        message: `${dbRel} does not exist`,
        path: dbRel,
        fix: { kind: 'init', description: 'ralph init creates the database' },
      });
    } else {
      findings.push({
        check: 'db.missing',
        status: live ? 'warn' : 'fail',
        message: `${dbRel} does not exist; the journal holds ${journal.records.length} record(s)`,
        path: dbRel,
        ...(live ? {} : { fix: STORE_FIX }),
      });
    }
  } else {
    const SQL = await loadSqlJs();
    let raw;
    try {
      raw = new SQL.Database(fs.readFileSync(dbFile));
    } catch (e) {
      raw = undefined;
      findings.push({
        check: 'db.integrity',
        status: 'fail',
        message: `${dbRel} cannot be opened as SQLite: ${(e as Error).message}`,
        path: dbRel,
        fix: dbFix,
      });
    }
    if (raw) {
      const db = new SqlDb(raw);
      try {
        const result = db.all<{ integrity_check: string }>('PRAGMA integrity_check').map((r) => r.integrity_check);
        if (result.length === 1 && result[0] === 'ok') findings.push(ok('db.integrity', `${dbRel} passes PRAGMA integrity_check`));
        else
          findings.push({
            check: 'db.integrity',
            status: 'fail',
            message: `${dbRel}: integrity_check says ${result.slice(0, 5).join('; ')}`,
            path: dbRel,
            fix: dbFix,
          });
        const tables = new Set(db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => r.name));
        const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
        if (missing.length === 0) findings.push(ok('db.tables', `${REQUIRED_TABLES.length} tables present`));
        else {
          const eventsGone = missing.includes('events');
          findings.push({
            check: 'db.tables',
            status: 'fail',
            message: `${dbRel} lacks table(s) ${missing.join(', ')}`,
            path: dbRel,
            fix: eventsGone
              ? restorable
                ? RESTORE_FIX
                : { kind: 'manual', description: 'the event log itself is gone: restore ralph.db from a backup' }
              : { kind: 'control-plane', description: 'the store recreates them and rebuild replays the events into them' },
          });
        }
        if (tables.has('events')) {
          // The journal is trimmed at each checkpoint, so it is small: look its ids up one by one.
          for (const rec of journal.records) {
            for (const e of rec.events) if (!db.get('SELECT 1 AS x FROM events WHERE event_id = ?', [e.event_id])) missingFromDb++;
          }
          dbReadable = true;
        }
      } catch (e) {
        findings.push({
          check: 'db.integrity',
          status: 'fail',
          message: `${dbRel} is not a valid SQLite database: ${(e as Error).message}`,
          path: dbRel,
          fix: dbFix,
        });
      } finally {
        db.close();
      }
    }
  }

  if (journal.tornBytes > 0 && !journal.damage) {
    findings.push(
      live
        ? {
            check: 'journal.torn',
            status: 'warn',
            message: `${journalRel}: ${journal.tornBytes} byte(s) after the last complete record (${journal.tornReason ?? 'incomplete'}); the live writer may be appending`,
            path: journalRel,
          }
        : {
            check: 'journal.torn',
            status: 'fail',
            message: `${journalRel}: torn tail of ${journal.tornBytes} byte(s) (${journal.tornReason ?? 'incomplete'}): a write cut short, so nobody was told it was recorded`,
            path: journalRel,
            fix: STORE_FIX,
          },
    );
  }
  if (dbReadable) {
    // (a ralph.db older than the journal's header is the db.older refusal above)
    const missing = missingFromDb;
    if (missing > 0) {
      findings.push(
        live
          ? ok('journal.replay', `${missing} journal event(s) not yet checkpointed into ${dbRel} by the live writer`)
          : {
              check: 'journal.replay',
              status: 'fail',
              message: `${missing} event(s) in ${journalRel} are missing from ${dbRel} (a writer stopped before its checkpoint)`,
              path: dbRel,
              fix: STORE_FIX,
            },
      );
    } else if (journal.tornBytes === 0 && inspection.problems.length === 0) {
      findings.push(ok('journal', `${journalRel} and ${dbRel} agree`));
    }
  }

  if (writer.state === 'live') {
    const h = writer.holder;
    findings.push({
      check: 'store.writer',
      status: 'ok',
      message: h ? `a live writer holds the store: pid ${h.pid} on ${h.host}, run ${h.runId}` : 'a writer is taking the lock right now',
    });
  }
  return findings;
}

export interface StoreCheckOptions {
  /** Whether a live process (not us) holds the writer lock: then claims may be legitimately in use. */
  readonly writerAlive: boolean;
  readonly claimStaleMs?: number;
  readonly projections?: readonly Projection[];
}

function claimedSince(db: SqlReader, taskId: string): string | undefined {
  const id = lastEventId(db, taskId, 'task.claimed');
  return id === undefined ? undefined : db.get<{ ts: string }>('SELECT ts FROM events WHERE event_id = ?', [id])?.ts;
}

/** Claimed tasks whose run is gone: every claim when no live writer exists, else claims older than the threshold. */
export function findStuckClaims(ctx: ControlContext, opts: StoreCheckOptions): { task: Task; since: string | undefined }[] {
  const limit = opts.claimStaleMs ?? DEFAULT_CLAIM_STALE_MS;
  const now = ctx.now().getTime();
  return ctx.store
    .all<Task>("SELECT * FROM task_view WHERE status = 'claimed' ORDER BY task_id")
    .map((task) => ({ task, since: claimedSince(ctx.store, task.task_id) }))
    .filter(({ since }) => !opts.writerAlive || since === undefined || now - Date.parse(since) > limit);
}

function checkClaims(ctx: ControlContext, opts: StoreCheckOptions): Finding[] {
  const stuck = findStuckClaims(ctx, opts);
  if (stuck.length === 0) return [ok('tasks.claims', 'no stuck claims')];
  return stuck.map(({ task, since }) =>
    opts.writerAlive
      ? {
          check: 'tasks.stuck_claim',
          status: 'warn' as const,
          message: `${task.task_id} claimed by ${task.claimed_by ?? '?'} since ${since ?? '?'} (longer than ${Math.round((opts.claimStaleMs ?? DEFAULT_CLAIM_STALE_MS) / 60000)} min) while a run holds the store`,
          fix: { kind: 'manual' as const, description: 'stop the running loop, then ralph repair --fix releases it' },
        }
      : {
          check: 'tasks.stuck_claim',
          status: 'fail' as const,
          message: `${task.task_id} claimed by ${task.claimed_by ?? '?'} since ${since ?? '?'}, and no run is alive`,
          fix: { kind: 'control-plane' as const, description: 'transition-task back to pending with a reason (an event)' },
        },
  );
}

function stateCounts(ctx: ControlContext): Finding[] {
  const rel = `${RALPH_DIR}/STATE.json`;
  let state: Record<string, unknown>;
  try {
    const v: unknown = JSON.parse(fs.readFileSync(ralphPaths(ctx.ralphDir).state, 'utf8'));
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return [];
    state = v as Record<string, unknown>;
  } catch {
    return []; // missing or invalid: the file checks report it
  }
  const tasks = allTasks(ctx.store);
  const n = (s: string): number => tasks.filter((t) => t.status === s).length;
  const want: Record<string, number> = {
    items_done_count: n('done'),
    items_blocked_count: n('blocked'),
    items_deferred_count: n('deferred'),
    items_pending_count: n('pending'),
    items_total_count: tasks.length,
    commits_total: promotedSince(ctx.store, undefined),
  };
  const wrong = Object.entries(want).filter(([k, v]) => state[k] !== v);
  if (wrong.length === 0) return [ok('state.counts', 'STATE.json counts match the log')];
  return [
    {
      check: 'state.counts',
      status: 'fail',
      message: `${rel} out of sync with the log: ${wrong.map(([k, v]) => `${k} ${JSON.stringify(state[k])} (log: ${v})`).join(', ')}`,
      path: rel,
      fix: { kind: 'control-plane', description: 'render-state' },
    },
  ];
}

/** Done marks and rows of BACKLOG.md the log does not have yet (what sync-backlog would take in or refuse). */
export function backlogDrift(ctx: ControlContext): {
  problems: string[];
  newRows: string[];
  syncableDone: string[];
  refusedDone: { taskId: string; status: string }[];
  stale: boolean;
} {
  const file = ralphPaths(ctx.ralphDir).backlog;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { problems: [], newRows: [], syncableDone: [], refusedDone: [], stale: false };
  }
  const parsed = parseBacklog(text, `${RALPH_DIR}/BACKLOG.md`);
  const out = {
    problems: parsed.problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
    newRows: [] as string[],
    syncableDone: [] as string[],
    refusedDone: [] as { taskId: string; status: string }[],
  };
  const tasks = new Map(allTasks(ctx.store).map((t): [string, Task] => [t.task_id, t]));
  for (const row of parsed.rows) {
    const task = tasks.get(row.id);
    const done = row.rawStatus.trim().toLowerCase() === 'done';
    if (task === undefined) {
      out.newRows.push(row.id);
      if (done) out.refusedDone.push({ taskId: row.id, status: 'pending' });
    } else if (done && task.status !== 'done') {
      if (hasPromotedPatch(patchesOf(ctx.store, row.id))) out.syncableDone.push(row.id);
      else out.refusedDone.push({ taskId: row.id, status: task.status });
    }
  }
  const all = [...tasks.values()];
  // The wave titles written in the file are kept by a render, so they are no drift.
  const rendered = renderBacklog(all, all.length === 0 ? [0, 1, 2] : [], parsed.waveTitles);
  return { ...out, stale: rendered !== text };
}

function checkBacklog(ctx: ControlContext): Finding[] {
  const rel = `${RALPH_DIR}/BACKLOG.md`;
  const d = backlogDrift(ctx);
  const findings: Finding[] = [];
  if (d.problems.length) {
    findings.push({
      check: 'backlog.parse',
      status: 'fail',
      message: `malformed row(s): ${d.problems.join('; ')}`,
      path: rel,
      fix: { kind: 'manual', description: 'correct the rows (repair will not re-render BACKLOG.md over them)' },
    });
    return findings;
  }
  if (d.newRows.length)
    findings.push({
      check: 'backlog.unsynced',
      status: 'fail',
      message: `${d.newRows.length} row(s) not in the log: ${d.newRows.join(', ')}`,
      path: rel,
      fix: { kind: 'control-plane', description: 'sync-backlog imports them' },
    });
  if (d.syncableDone.length)
    findings.push({
      check: 'backlog.unsynced_done',
      status: 'fail',
      message: `done in ${rel} but not in the log (promoted patch present): ${d.syncableDone.join(', ')}`,
      path: rel,
      fix: { kind: 'control-plane', description: 'sync-backlog records them done, before any render' },
    });
  for (const r of d.refusedDone) {
    findings.push({
      check: 'backlog.done_without_patch',
      status: 'fail',
      message: `${r.taskId} is marked done in ${rel} but has no promoted patch (log: ${r.status})`,
      path: rel,
      fix: {
        kind: 'control-plane',
        description: "reported, never made done: sync-backlog refuses it and render-backlog shows the log's status",
      },
    });
  }
  if (findings.length === 0 && d.stale)
    findings.push({
      check: 'backlog.render',
      status: 'warn',
      message: `${rel} differs from a render of the log`,
      path: rel,
      fix: { kind: 'control-plane', description: 'render-backlog' },
    });
  return findings.length ? findings : [ok('backlog', `${rel} matches the log`)];
}

function checkDeferrals(ctx: ControlContext): Finding[] {
  const db = ctx.store;
  const facts: DeferredFacts[] = db
    .all<Task>("SELECT * FROM task_view WHERE status = 'deferred' ORDER BY deferred_at, task_id")
    .map((task) => ({
      task,
      patch: currentPatch({ task, patches: patchesOf(db, task.task_id) }),
      commitsSinceDeferral: promotedSince(db, lastEventId(db, task.task_id, 'task.deferred')),
    }));
  const due = decideExpireDeferrals(facts)
    .filter((e) => e.type === 'task.deferral_expired')
    .map((e) => e.entity_id);
  if (due.length === 0) return [ok('deferrals', 'no stale deferrals')];
  return [
    {
      check: 'deferrals.stale',
      status: 'fail',
      message: `${due.length} deferral(s) past their expiry: ${due.join(', ')}`,
      fix: { kind: 'control-plane', description: 'expire-stale-deferrals' },
    },
  ];
}

/** Resolves a patch_path (absolute, or relative to the project) to an absolute path. */
function patchFileOf(ctx: ControlContext, p: Patch): string | undefined {
  if (!p.patch_path) return undefined;
  return path.isAbsolute(p.patch_path) ? p.patch_path : path.resolve(ctx.projectDir, p.patch_path);
}

const LIVE_PATCH = new Set(['queued', 'applied', 'verified']);

/** Live patches whose file is gone (they can never be promoted). */
export function patchesWithoutFile(ctx: ControlContext): Patch[] {
  return ctx.store
    .all<Patch>('SELECT * FROM patch_view ORDER BY patch_id')
    .filter((p) => LIVE_PATCH.has(p.status))
    .filter((p) => {
      const f = patchFileOf(ctx, p);
      return f === undefined || !fs.existsSync(f);
    });
}

function checkPatches(ctx: ControlContext, opts: StoreCheckOptions): Finding[] {
  const findings: Finding[] = [];
  const patches = ctx.store.all<Patch>('SELECT * FROM patch_view ORDER BY patch_id');
  const known = new Set(patches.map((p) => patchFileOf(ctx, p)).filter((f): f is string => f !== undefined));
  const pendingDir = path.join(ctx.ralphDir, 'commits', 'pending');
  const files = fs.existsSync(pendingDir)
    ? fs
        .readdirSync(pendingDir)
        .filter((f) => f.endsWith('.patch'))
        .sort()
    : [];
  const orphans = files.filter((f) => !known.has(path.join(pendingDir, f)));
  if (orphans.length) {
    findings.push({
      check: 'patches.orphan_file',
      status: 'warn',
      message: `${orphans.length} file(s) in ${RALPH_DIR}/commits/pending/ no patch in the log refers to: ${orphans.join(', ')}`,
      fix: { kind: 'manual', description: 'delete them, or queue them with queue-patch' },
    });
  }
  const missing = new Set(patchesWithoutFile(ctx).map((p) => p.patch_id));
  for (const id of missing) {
    findings.push(
      opts.writerAlive
        ? {
            check: 'patches.missing_file',
            status: 'warn',
            message: `patch ${id} is live but its file is gone`,
            fix: { kind: 'manual', description: 'stop the running loop, then ralph repair --fix discards it' },
          }
        : {
            check: 'patches.missing_file',
            status: 'fail',
            message: `patch ${id} is live but its file is gone; it can never be promoted`,
            fix: { kind: 'control-plane', description: 'discard-patch (the task returns to pending)' },
          },
    );
  }
  const waiting = patches.filter((p) => LIVE_PATCH.has(p.status) && !missing.has(p.patch_id));
  if (waiting.length && !opts.writerAlive) {
    findings.push({
      check: 'patches.queued',
      status: 'warn',
      message: `${waiting.length} patch(es) queued with no run alive: ${waiting.map((p) => p.patch_id).join(', ')}`,
      fix: { kind: 'control-plane', description: 'the loop re-evaluates them (promote or discard) when it starts' },
    });
  }
  return findings.length
    ? findings
    : [ok('patches', waiting.length ? `${waiting.length} patch(es) queued for the live run` : 'no stuck patches')];
}

function rowsOf(db: SqlReader, table: string): string[] {
  return db
    .all<SqlRow>(`SELECT * FROM "${table.replace(/"/g, '""')}"`)
    .map((r) =>
      JSON.stringify(
        Object.keys(r)
          .sort()
          .map((k) => [k, r[k]]),
      ),
    )
    .sort();
}

/** What a view check needs of a store: queries and the events in order. */
export type EventSource = SqlReader & { events(): readonly StoredEvent[] };

/**
 * Replays every event of the store into fresh projection tables in a scratch in-memory
 * database and compares rows with the store's views. The store itself is only read.
 */
export async function diffViewsAgainstRebuild(
  store: EventSource,
  projections: readonly Projection[] = CONTROL_PROJECTIONS,
): Promise<{ table: string; onlyInView: number; onlyInRebuild: number; sample?: string }[]> {
  const SQL = await loadSqlJs();
  const scratch = new SqlDb(new SQL.Database());
  try {
    for (const p of projections) for (const s of p.ddl) scratch.exec(s);
    scratch.exec('BEGIN');
    for (const e of store.events()) for (const p of projections) p.apply(scratch, e);
    scratch.exec('COMMIT');
    const diffs: { table: string; onlyInView: number; onlyInRebuild: number; sample?: string }[] = [];
    for (const table of projections.flatMap((p) => p.tables)) {
      let view: string[];
      try {
        view = rowsOf(store, table);
      } catch {
        view = [];
      }
      const rebuilt = rowsOf(scratch, table);
      const inRebuild = new Set(rebuilt);
      const inView = new Set(view);
      const onlyInView = view.filter((r) => !inRebuild.has(r));
      const onlyInRebuild = rebuilt.filter((r) => !inView.has(r));
      if (onlyInView.length || onlyInRebuild.length) {
        const sample = onlyInView[0] ?? onlyInRebuild[0];
        diffs.push({ table, onlyInView: onlyInView.length, onlyInRebuild: onlyInRebuild.length, ...(sample ? { sample } : {}) });
      }
    }
    return diffs;
  } finally {
    scratch.close();
  }
}

async function checkViews(ctx: ControlContext, opts: StoreCheckOptions): Promise<Finding[]> {
  const diffs = await diffViewsAgainstRebuild(ctx.store, opts.projections ?? CONTROL_PROJECTIONS);
  if (diffs.length === 0) return [ok('views.rebuild', 'views equal a rebuild from the events')];
  return diffs.map((d) => ({
    check: 'views.rebuild',
    status: 'fail' as const,
    message: `${d.table} differs from a rebuild from events: ${d.onlyInView} row(s) only in the view, ${d.onlyInRebuild} only in the rebuild`,
    fix: { kind: 'control-plane' as const, description: 'rebuild replays every event into fresh views' },
  }));
}

/** Drift a running loop removes itself (it renders, syncs and expires on its own schedule). */
const LOOP_CATCHES_UP = new Set([
  'state.counts',
  'backlog.unsynced',
  'backlog.unsynced_done',
  'backlog.done_without_patch',
  'backlog.render',
  'deferrals.stale',
]);

/**
 * A check whose queries fail on the opened store is a finding, and the other checks still
 * run. A damaged ralph.db can pass integrity_check and still have a view's schema text
 * changed (a flipped byte in a column name on its first page): its queries then fail.
 */
async function readingStore(check: string, run: () => Finding[] | Promise<Finding[]>): Promise<Finding[]> {
  try {
    return await run();
  } catch (e) {
    return [
      {
        check: 'store.read',
        status: 'fail',
        message: `the ${check} check cannot read the store: ${e instanceof Error ? e.message : String(e)}`,
        path: `${RALPH_DIR}/${DB_FILE}`,
        fix: RESTORE_FIX,
      },
    ];
  }
}

/** Every check of an opened store (observer or writer); nothing is written. */
export async function runStoreChecks(ctx: ControlContext, opts: StoreCheckOptions): Promise<Finding[]> {
  const checks: [string, () => Finding[] | Promise<Finding[]>][] = [
    ['state', () => stateCounts(ctx)],
    ['claims', () => checkClaims(ctx, opts)],
    ['patches', () => checkPatches(ctx, opts)],
    ['backlog', () => checkBacklog(ctx)],
    ['deferrals', () => checkDeferrals(ctx)],
    ['views', () => checkViews(ctx, opts)],
  ];
  const findings: Finding[] = [];
  for (const [name, run] of checks) findings.push(...(await readingStore(name, run)));
  if (!opts.writerAlive) return findings;
  return findings.map((f) =>
    f.status === 'fail' && LOOP_CATCHES_UP.has(f.check)
      ? { ...f, status: 'warn', message: `${f.message} (a live run holds the store and catches up on its own)` }
      : f,
  );
}
