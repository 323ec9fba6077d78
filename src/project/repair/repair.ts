// `ralph repair [--fix]`: every check (files, git, STATE.json, locks, proposals, the store
// files, the opened store), and with --fix the repairs in a safe order, each through the
// control plane's commands (events, never direct SQL, so every fix is in the log). After fixing,
// every check runs again on what is now on disk; those findings decide the exit code.
import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PREV_DB_FILE, openStore } from '../../store/sqlJsStore';
import { JOURNAL_FILE } from '../../store/journal';
import { restoreStoreFiles, type StoreRestoreReport } from '../../store/salvage';
import { domainEvent, toNewEvent } from '../../domain/events';
import type { EventStore, Projection } from '../../store/types';
import { controlContext, type ControlContext, type GitPort } from '../../control/context';
import { CONTROL_PROJECTIONS } from '../../control/views';
import { transitionTask } from '../../control/tasks';
import { discardPatch } from '../../control/patches';
import { expireStaleDeferrals } from '../../control/deferred';
import { processProposals } from '../../control/proposals';
import { rebuildViews, renderBacklogFile, renderState, syncBacklog } from '../../control/derived';
import { loadConfig } from '../config';
import { RALPH_DIR } from '../init';
import type { InitOptions } from '../init';
import { ProcessLedger } from '../../shared/processLedger';
import { applyLocalFixes } from './fixes';
import { PROCESS_LEDGER_DIR } from './fileChecks';
import { formatFindings, hasProblems } from './findings';
import type { Finding } from './findings';
import { runProjectChecks } from './projectChecks';
import {
  backlogDrift,
  checkStoreFiles,
  findStuckClaims,
  inspectWriterLock,
  patchesWithoutFile,
  runStoreChecks,
  STORE_REFUSALS,
  type WriterState,
} from './storeChecks';
import { keepingStatusImage } from '../../control/statusImage';

/** The actor of every event repair appends. */
export const REPAIR_ACTOR = 'repair';

export interface RepairOptions {
  readonly projectDir: string;
  readonly fix: boolean;
  readonly now?: () => Date;
  /** While a live run holds the store, claims older than this are reported (default 2 h). */
  readonly claimStaleMs?: number;
  /** A writer lock whose heartbeat is older than this belongs to a dead run (default 30 s). */
  readonly lockStaleMs?: number;
  readonly projections?: readonly Projection[];
  readonly git?: GitPort;
}

/** One change --fix made: which step, and what it did. */
export interface RepairAction {
  readonly step: string;
  readonly detail: string;
}

export interface RepairReport {
  readonly projectDir: string;
  readonly fixed: boolean;
  /** Findings of the first check. */
  readonly findings: readonly Finding[];
  readonly actions: readonly RepairAction[];
  /** Findings after fixing (the first check's when not fixing): these decide the exit code. */
  readonly remaining: readonly Finding[];
  readonly ok: boolean;
}

function exists(p: string): boolean {
  return fs.existsSync(p);
}

function hasStoreFiles(ralphDir: string): boolean {
  return exists(path.join(ralphDir, 'ralph.db')) || exists(path.join(ralphDir, JOURNAL_FILE)) || exists(path.join(ralphDir, PREV_DB_FILE));
}

/**
 * The worktree names the loop uses (primary, worker-1..N, and `verify` where late
 * promotions are re-verified); other Ralph worktrees are orphaned.
 */
function agentNames(projectDir: string): string[] {
  const config = loadConfig(projectDir);
  const workers = config.ok ? config.value.workers.count : 1;
  // 'verify' is src/loop/lateVerify.ts LATE_VERIFY_WORKTREE (the project layer does not import the loop).
  return ['primary', 'verify', ...Array.from({ length: workers }, (_, i) => `worker-${i + 1}`)];
}

/** Every check, reading only: the store is opened as an observer (or not at all). */
export async function checkProject(options: Omit<RepairOptions, 'fix'>): Promise<{ findings: Finding[]; writer: WriterState }> {
  const projectDir = path.resolve(options.projectDir);
  const ralphDir = path.join(projectDir, RALPH_DIR);
  const now = options.now ?? ((): Date => new Date());
  const writer = exists(ralphDir) ? inspectWriterLock(ralphDir, now().getTime(), options.lockStaleMs) : ({ state: 'free' } as const);
  let findings = await runProjectChecks(projectDir, { activeWorktrees: agentNames(projectDir) });
  if (!exists(ralphDir)) return { findings, writer };
  const storeFiles = await checkStoreFiles(ralphDir, writer);
  // The store's view of patches (below) replaces the file count of commits/pending/.
  if (hasStoreFiles(ralphDir)) findings = findings.filter((f) => f.check !== 'patches.pending');
  findings.push(...storeFiles);
  const unreadable = storeFiles.some(
    (f) =>
      (f.status === 'fail' && (f.check === 'db.integrity' || (f.check === 'db.tables' && f.fix?.kind === 'manual'))) ||
      // an observer refuses these too (a checksum or an older ralph.db it still reads)
      (f.status !== 'ok' && (f.check === 'journal.damaged' || f.check === 'db.missing') && STORE_REFUSALS.has(f.check)),
  );
  if (unreadable || !hasStoreFiles(ralphDir)) return { findings, writer };
  let store: EventStore;
  try {
    store = await openStore({ ralphDir, mode: 'observer', projections: options.projections ?? CONTROL_PROJECTIONS });
  } catch (e) {
    findings.push({
      check: 'store.open',
      status: 'fail',
      message: `the event store cannot be opened: ${(e as Error).message}`,
      fix: { kind: 'manual', description: 'restore ralph.db from a backup' },
    });
    return { findings, writer };
  }
  try {
    const ctx = controlContext(store, { ralphDir, projectDir, now, ...(options.git ? { git: options.git } : {}) });
    findings.push(
      ...(await runStoreChecks(ctx, {
        writerAlive: writer.state === 'live',
        ...(options.claimStaleMs !== undefined ? { claimStaleMs: options.claimStaleMs } : {}),
        ...(options.projections ? { projections: options.projections } : {}),
      })),
    );
  } finally {
    await store.close();
  }
  return { findings, writer };
}

async function createDatabase(ralphDir: string, projections: readonly Projection[]): Promise<void> {
  const store = await openStore({ ralphDir, mode: 'writer', projections, ...keepingStatusImage(ralphDir) });
  await store.close();
}

/** Files and git: stale lock files other than the writer's, then git prune and init's fill-in. */
async function localFixes(
  projectDir: string,
  findings: readonly Finding[],
  projections: readonly Projection[],
  actions: RepairAction[],
): Promise<void> {
  const writerLockRel = `${RALPH_DIR}/locks/writer.lock`;
  for (const f of findings) {
    // The writer lock is the store's: it is taken over with an event when repair opens it.
    if (f.check === 'locks.stale' && f.path && f.path !== writerLockRel) {
      await fsp.rm(path.join(projectDir, f.path), { force: true });
      actions.push({ step: 'locks', detail: `removed ${f.path} (${f.message.replace(/^.* is held by /, 'held by ')})` });
    }
  }
  const initOptions: Pick<InitOptions, 'createDatabase'> = { createDatabase: (dir) => createDatabase(dir, projections) };
  for (const change of await applyLocalFixes(projectDir, findings, initOptions))
    actions.push({ step: change.startsWith('git') || change.startsWith('removed') ? 'git' : 'init', detail: change });
}

/** The store's repairs, in order, through the control plane's commands. */
async function storeFixes(
  ctx: ControlContext,
  store: EventStore,
  viewsChecked: readonly Finding[],
  actions: RepairAction[],
): Promise<void> {
  const act = (step: string, detail: string): void => void actions.push({ step, detail });

  // Opening as writer already did three repairs; report them.
  const stats = store.stats();
  for (const e of store.events({ entityType: 'run', entityId: store.runId })) {
    if (e.event_type !== 'lock.taken_over') continue;
    const prev = e.payload['previous'] as { pid?: number; host?: string } | null;
    act(
      'lock',
      `took over the writer lock of ${prev ? `pid ${String(prev.pid)} on ${String(prev.host)}` : 'an unknown holder'} (${String(e.payload['reason'])}; event ${e.event_id})`,
    );
  }
  if (stats.replayedEvents > 0) act('journal', `replayed ${stats.replayedEvents} journal event(s) into ralph.db`);
  if (stats.tornBytes > 0) act('journal', `cut a torn journal tail of ${stats.tornBytes} byte(s)`);

  // 1. Views first: every command below decides on them, so wrong views would mean wrong events.
  // (Replaying the journal at open applies the projections too, so the first check's verdict holds.)
  const stale = viewsChecked.filter((f) => f.check === 'views.rebuild' && f.status === 'fail');
  if (stale.length) {
    const n = await rebuildViews(ctx);
    act('rebuild', `rebuilt ${stale.map((f) => f.message.split(' ')[0]).join(', ')} from ${n} event(s)`);
  }

  // 2. sync-backlog before any render, so done marks and new rows in BACKLOG.md are not lost.
  let renderBacklog = true;
  if (exists(path.join(ctx.ralphDir, 'BACKLOG.md'))) {
    const drift = backlogDrift(ctx);
    if (drift.problems.length) {
      renderBacklog = false;
      act('sync-backlog', `skipped: BACKLOG.md has malformed rows (${drift.problems.join('; ')}); not re-rendered, so your edits stay`);
    } else if (drift.newRows.length || drift.syncableDone.length || drift.refusedDone.length) {
      const r = await syncBacklog(ctx, REPAIR_ACTOR);
      if (r.imported.length) act('sync-backlog', `imported ${r.imported.length} new row(s): ${r.imported.join(', ')}`);
      if (r.completed.length) act('sync-backlog', `recorded done (promoted patch present): ${r.completed.join(', ')}`);
      for (const x of r.refused)
        act('sync-backlog', `NOT done: ${x.taskId} is marked done in BACKLOG.md but has no promoted patch; left ${x.status}`);
    }
  }

  // 3. Claims of runs that are gone: back to pending, each with an event and the reason.
  for (const { task, since } of findStuckClaims(ctx, { writerAlive: false })) {
    const reason = `stuck claim by ${task.claimed_by ?? '?'} since ${since ?? '?'}: no run alive (ralph repair)`;
    await transitionTask(ctx, {
      taskId: task.task_id,
      status: 'pending',
      actor: REPAIR_ACTOR,
      payload: { reason, released_owner: task.claimed_by },
      via: 'repair',
    });
    act('claims', `${task.task_id}: claimed -> pending (${reason})`);
  }

  // 4. Live patches whose file is gone can never be promoted.
  for (const p of patchesWithoutFile(ctx)) {
    const r = await discardPatch(ctx, { patchId: p.patch_id, reason: 'patch file missing (ralph repair)', actor: REPAIR_ACTOR });
    act('patches', `discarded ${p.patch_id} (file missing); ${r.taskId} back to pending`);
  }

  // 5. Deferrals past their expiry, 6. proposals waiting.
  const expired = await expireStaleDeferrals(ctx, { actor: REPAIR_ACTOR });
  if (expired.length) act('expire-stale-deferrals', `expired ${expired.length}: ${expired.join(', ')}`);
  const { counts, reports } = await processProposals(ctx, REPAIR_ACTOR);
  if (reports.length) {
    act('process-proposals', `accepted ${counts.accepted}, deferred ${counts.deferred}, rejected ${counts.rejected}`);
    for (const r of reports) act('process-proposals', `${r.file}: ${r.outcome}${r.detail ? ` (${r.detail})` : ''}`);
  }

  // 7. The derived files, last: they show the log as the steps above left it.
  const stateFile = path.join(ctx.ralphDir, 'STATE.json');
  const stateBefore = exists(stateFile) ? fs.readFileSync(stateFile, 'utf8') : undefined;
  if (renderState(ctx) !== stateBefore) act('render-state', 'rewrote .ralph/STATE.json from the log');
  if (renderBacklog) {
    const file = path.join(ctx.ralphDir, 'BACKLOG.md');
    const before = exists(file) ? fs.readFileSync(file, 'utf8') : undefined;
    if (renderBacklogFile(ctx) !== before) act('render-backlog', 'rewrote .ralph/BACKLOG.md from the log');
  }
}

/** The restore as an `incident` event: what was wrong, what was kept, what was lost. */
async function recordRestore(store: EventStore, r: StoreRestoreReport, actions: RepairAction[]): Promise<void> {
  const lost = r.lostEventIds.length > 0 || r.lostUnknown;
  const [e] = await store.append([
    toNewEvent(
      domainEvent('incident', 'store', REPAIR_ACTOR, {
        kind: 'store_restored',
        summary: r.summary.join('; '),
        problems: r.problems.map((p) => ({ kind: p.kind, file: p.file, ...(p.offset !== undefined ? { offset: p.offset } : {}) })),
        backup: r.backupDir,
        base: r.base,
        kept_records: r.keptRecords,
        kept_events: r.keptEvents,
        damaged: r.damaged.map((d) => ({ ...d })),
        lost_event_ids: [...r.lostEventIds],
        lost_unknown: r.lostUnknown,
        lost,
      }),
    ),
  ]);
  actions.push({ step: 'store', detail: `recorded the incident as event ${e?.event_id ?? '?'}` });
}

/** `ralph repair`: checks, and with `fix` repairs then checks again. */
export async function runRepair(options: RepairOptions): Promise<RepairReport> {
  const projectDir = path.resolve(options.projectDir);
  const ralphDir = path.join(projectDir, RALPH_DIR);
  const projections = options.projections ?? CONTROL_PROJECTIONS;
  const first = await checkProject(options);
  if (!options.fix) {
    return { projectDir, fixed: false, findings: first.findings, actions: [], remaining: first.findings, ok: !hasProblems(first.findings) };
  }
  const actions: RepairAction[] = [];
  if (first.writer.state === 'live') {
    const h = first.writer.holder;
    actions.push({
      step: 'store',
      detail: `skipped the store's repairs: a live writer holds it${h ? ` (pid ${h.pid} on ${h.host}, run ${h.runId})` : ''}; stop it and run again`,
    });
    await localFixes(
      projectDir,
      first.findings.filter((f) => f.check !== 'db.missing'),
      projections,
      actions,
    );
  } else {
    await localFixes(projectDir, first.findings, projections, actions);
    if (first.findings.some((f) => f.check === 'locks.processes')) {
      // No run is alive: what a killed one left running is ended now, as the next start would.
      const reaped = await new ProcessLedger(path.join(ralphDir, 'locks', PROCESS_LEDGER_DIR)).reap();
      for (const g of reaped)
        actions.push({ step: 'processes', detail: `${g.killed ? 'ended' : 'forgot the ended'} ${g.what} (pid ${g.pid}) in ${g.cwd}` });
    }
    // The store's files before anything opens them: a damaged journal or a lost, damaged
    // or older ralph.db is restored (every intact record kept, the files as found saved
    // under .ralph/backup/), so the writer below opens them without losing what is left.
    const restored = exists(ralphDir) ? await restoreStoreFiles(ralphDir, (options.now ?? ((): Date => new Date()))()) : undefined;
    for (const line of restored?.summary ?? []) actions.push({ step: 'store', detail: line });
    const storeUnusable =
      !restored &&
      first.findings.some(
        (f) => f.status === 'fail' && f.fix?.kind === 'manual' && (f.check.startsWith('db.') || f.check === 'store.open'),
      );
    if (storeUnusable) actions.push({ step: 'store', detail: "skipped the store's repairs: ralph.db needs a manual restore (see above)" });
    else if (exists(ralphDir)) {
      const store = await openStore({
        ralphDir,
        mode: 'writer',
        projections,
        ...(options.lockStaleMs !== undefined ? { lockStaleMs: options.lockStaleMs } : {}),
      });
      try {
        const ctx = controlContext(store, {
          ralphDir,
          projectDir,
          ...(options.now ? { now: options.now } : {}),
          ...(options.git ? { git: options.git } : {}),
        });
        if (restored) await recordRestore(store, restored, actions);
        await storeFixes(ctx, store, first.findings, actions);
      } finally {
        await store.close();
      }
    }
  }
  const after = await checkProject(options);
  return { projectDir, fixed: true, findings: first.findings, actions, remaining: after.findings, ok: !hasProblems(after.findings) };
}

/** The text `ralph repair` prints. */
export function formatRepairReport(report: RepairReport): string {
  const lines: string[] = [`Ralph repair: ${report.projectDir}`, formatFindings(report.findings)];
  const count = (fs_: readonly Finding[], s: string): number => fs_.filter((f) => f.status === s).length;
  if (report.fixed) {
    lines.push('', report.actions.length ? `Fixes (${report.actions.length}):` : 'Fixes: nothing to change');
    for (const a of report.actions) lines.push(`  ${a.step}: ${a.detail}`);
    const left = report.remaining.filter((f) => f.status !== 'ok');
    lines.push('', left.length ? 'After fixing:' : 'After fixing: every check passes');
    if (left.length) lines.push(formatFindings(left));
  }
  const fails = count(report.remaining, 'fail');
  const warns = count(report.remaining, 'warn');
  lines.push(
    '',
    fails
      ? `${fails} problem(s)${report.fixed ? ' remain' : ''}${warns ? `, ${warns} warning(s)` : ''}${report.fixed ? '' : '; `ralph repair --fix` repairs what it can'}`
      : `No problems${warns ? ` (${warns} warning(s))` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
