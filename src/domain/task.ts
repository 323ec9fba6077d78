// Over 400 lines because the task aggregate's evolve, deciders and attempt rules are one state machine over one row.
// The task lifecycle as pure functions: evolveTask folds an event into a task row;
// the decide* functions turn a command and the current state into events or a typed error;
// and the rules around attempts: which task is ready for whom, how a failed attempt is
// classed, and the follow-up a reviewer's modify opens.
import { isId } from './ids';
import { formatDeps, isEffort, isTaskStatus, newTask, type Effort, type Patch, type Task, type TaskStatus } from './model';
import { domainEvent, type DomainEvent, type RecordedEvent, type TransitionData } from './events';
import {
  DoneWithoutPromotedPatchError,
  InvalidArgumentError,
  InvalidStateError,
  TaskAlreadyClaimedError,
  TaskNotFoundError,
} from './errors';
import { unhandled } from './exhaustive';

/** Statuses that end a deferral (reference: pending/done/claimed clear deferred_*). */
const CLEARS_DEFERRAL: readonly TaskStatus[] = ['pending', 'done', 'claimed'];

/** The events about tasks: evolveTask folds each one or lists it as one it ignores. */
export type TaskEvent = Extract<RecordedEvent, { readonly type: `task.${string}` }>;

export function isTaskEvent(e: RecordedEvent): e is TaskEvent {
  return e.type.startsWith('task.');
}

/** A task row after one event; `undefined` in and out when the event does not create it. */
export function evolveTask(task: Task | undefined, e: RecordedEvent): Task | undefined {
  if (!isTaskEvent(e)) return task;
  switch (e.type) {
    case 'task.migrated':
      return { ...newTask({ ...e.data, id: e.entity_id }, 'spec'), status: e.data.status };
    case 'task.created':
      return newTask({ ...e.data, id: e.entity_id }, e.data.provenance);
    case 'task.pending':
    case 'task.claimed':
    case 'task.proposed':
    case 'task.done':
    case 'task.deferred':
    case 'task.blocked':
    case 'task.dropped':
      return applyTransition(task, e.entity_id, e.data, e.ts);
    case 'task.completed':
      return task && { ...task, patch_id: e.data.patch_id };
    case 'task.deferral_resolved':
      return (
        task && {
          ...task,
          status: e.data.new_status,
          version: task.version + 1,
          deferred_reason: null,
          deferred_at: null,
          claimed_by: e.data.new_status === 'pending' ? null : task.claimed_by,
          patch_id: e.data.patch_id ?? task.patch_id,
        }
      );
    case 'task.deferral_expired':
      return (
        task && {
          ...task,
          status: e.data.new_status,
          risk_tier: e.data.new_tier,
          version: task.version + 1,
          deferred_reason: null,
          deferred_at: null,
          claimed_by: null,
        }
      );
    case 'task.risk_classified':
      return task && { ...task, risk_tier: e.data.risk_tier };
    case 'task.reprioritized':
      return task && { ...task, wave: e.data.new_wave, version: task.version + 1 };
    // Facts about an attempt, for the story and the next attempt's prompt: the row stays as it is.
    case 'task.reflected':
    case 'task.follow_up':
      return task;
    default:
      // A new task event type does not compile until it is folded or ignored above.
      return unhandled(e, task);
  }
}

function applyTransition(task: Task | undefined, id: string, d: TransitionData, ts: string): Task {
  // Reference: transition-task on an unknown id creates the task from payload fields.
  const base =
    task ??
    newTask({
      id,
      ...(d.title != null ? { title: d.title } : {}),
      ...(d.source != null ? { source: d.source } : {}),
      ...(d.effort != null ? { effort: d.effort } : {}),
      ...(d.deps != null ? { deps: d.deps } : {}),
      ...(d.wave != null ? { wave: d.wave } : {}),
    });
  const to = d.new_status;
  let next: Task = { ...base, status: to, version: task ? task.version + 1 : 1 };
  if (d.claimed_by != null) next = { ...next, claimed_by: d.claimed_by };
  if (d.patch_id != null) next = { ...next, patch_id: d.patch_id };
  if (d.risk_tier != null) next = { ...next, risk_tier: d.risk_tier };
  if (to === 'deferred') {
    const reason = d.reason ?? (typeof d['deferred_reason'] === 'string' ? d['deferred_reason'] : null);
    next = { ...next, deferred_reason: reason, deferred_at: ts };
  } else if (CLEARS_DEFERRAL.includes(to)) {
    next = { ...next, deferred_reason: null, deferred_at: null };
  }
  // A pending task has no owner; the reference left stale owners behind.
  if (to === 'pending') next = { ...next, claimed_by: null };
  return next;
}

/** What a task decider needs: the task (if any) and its patches. */
export interface TaskContext {
  readonly task: Task | undefined;
  readonly patches: readonly Patch[];
}

export function hasPromotedPatch(patches: readonly Patch[]): boolean {
  return patches.some((p) => p.status === 'promoted');
}

export interface TransitionCommand {
  readonly taskId: string;
  readonly to: string;
  readonly actor: string;
  readonly payload?: Readonly<Record<string, unknown>>;
  /** Names the path in errors (e.g. `transition-task`, `sync-backlog`). */
  readonly via?: string;
}

/** transition-task: any status change, except `done` without a promoted patch. */
export function decideTransition(ctx: TaskContext, cmd: TransitionCommand): DomainEvent[] {
  if (!isTaskStatus(cmd.to))
    throw new InvalidArgumentError(
      `unknown task status '${cmd.to}' (expected one of pending, claimed, proposed, done, deferred, blocked, dropped)`,
    );
  const to = cmd.to;
  const payload = cmd.payload ?? {};
  if (to === 'done' && !hasPromotedPatch(ctx.patches)) throw new DoneWithoutPromotedPatchError(cmd.taskId, cmd.via ?? 'transition-task');
  if (ctx.task === undefined && (to === 'done' || to === 'proposed')) throw new TaskNotFoundError(cmd.taskId);
  if (to === 'claimed' && ctx.task?.status === 'claimed') {
    const owner = ctx.task.claimed_by;
    const wanted = typeof payload['claimed_by'] === 'string' ? payload['claimed_by'] : cmd.actor;
    if (owner !== null && owner !== wanted) throw new TaskAlreadyClaimedError(cmd.taskId, owner);
  }
  const data: Record<string, unknown> = { ...payload, old_status: ctx.task?.status ?? null, new_status: to };
  if (to === 'claimed' && data['claimed_by'] == null) data['claimed_by'] = cmd.actor;
  return [domainEvent(`task.${to}`, cmd.taskId, cmd.actor, data as TransitionData)];
}

/** Claims a pending task for `owner` (claimReadyTask uses it inside one transaction). */
export function decideClaim(ctx: TaskContext, taskId: string, owner: string): DomainEvent[] {
  if (ctx.task === undefined) throw new TaskNotFoundError(taskId);
  if (ctx.task.status === 'claimed' && ctx.task.claimed_by !== null && ctx.task.claimed_by !== owner) {
    throw new TaskAlreadyClaimedError(taskId, ctx.task.claimed_by);
  }
  if (ctx.task.status !== 'pending')
    throw new InvalidStateError(taskId, ctx.task.status, `task ${taskId} is ${ctx.task.status}, not pending`);
  return [domainEvent('task.claimed', taskId, owner, { old_status: 'pending', new_status: 'claimed', claimed_by: owner })];
}

export type ResolveDecision = 'approve' | 'reject' | 'modify';

export interface ResolveDeferredCommand {
  readonly taskId: string;
  readonly decision: ResolveDecision;
  readonly actor: string;
  readonly rationale: string;
  /** The judge's confidence in its verdict, kept with the resolution. */
  readonly confidence?: number;
}

/** The patch a deferred task is waiting on: its recorded patch, else its newest live one. */
export function currentPatch(ctx: TaskContext): Patch | undefined {
  const live = ctx.patches.filter((p) => p.status !== 'discarded');
  const byId = ctx.task?.patch_id ? live.find((p) => p.patch_id === ctx.task?.patch_id) : undefined;
  return byId ?? live[live.length - 1];
}

/**
 * resolve-deferred. approve: the task goes back to `proposed` with its patch approved, to
 * be promoted (done only follows a promoted patch); without a live patch approval is an
 * error. reject/modify: the task returns to pending (the rationale / modification kept in
 * the event for the next attempt) and its unpromoted patch is discarded; the event names it
 * (`discarded_patch_id`): after a modify the next attempt starts from it (reviewFollowUp).
 */
export function decideResolveDeferred(ctx: TaskContext, cmd: ResolveDeferredCommand): DomainEvent[] {
  const task = ctx.task;
  if (task === undefined) throw new TaskNotFoundError(cmd.taskId);
  if (task.status !== 'deferred')
    throw new InvalidStateError(cmd.taskId, task.status, `task ${cmd.taskId} is ${task.status}, not deferred`);
  const patch = currentPatch(ctx);
  if (cmd.decision === 'approve') {
    if (patch === undefined)
      throw new DoneWithoutPromotedPatchError(cmd.taskId, 'resolve-deferred approve (the task has no patch to promote)');
    const newStatus: TaskStatus = patch.status === 'promoted' ? 'done' : 'proposed';
    return [
      domainEvent('task.deferral_resolved', cmd.taskId, cmd.actor, {
        decision: 'approve',
        rationale: cmd.rationale,
        old_status: 'deferred',
        new_status: newStatus,
        patch_id: patch.patch_id,
        approved: true,
        ...(cmd.confidence !== undefined ? { confidence: cmd.confidence } : {}),
      }),
    ];
  }
  const discards = patch !== undefined && patch.status !== 'promoted';
  const events: DomainEvent[] = [
    domainEvent('task.deferral_resolved', cmd.taskId, cmd.actor, {
      decision: cmd.decision,
      rationale: cmd.rationale,
      old_status: 'deferred',
      new_status: 'pending',
      ...(cmd.decision === 'modify' ? { modification: cmd.rationale } : {}),
      ...(cmd.confidence !== undefined ? { confidence: cmd.confidence } : {}),
      // The reviewed patch, so a modify's follow-up can start from it (reviewFollowUp).
      ...(discards ? { discarded_patch_id: patch.patch_id } : {}),
    }),
  ];
  if (discards) {
    events.push(
      domainEvent('patch.discarded', patch.patch_id, cmd.actor, { task_id: cmd.taskId, reason: `judge ${cmd.decision}: ${cmd.rationale}` }),
    );
  }
  return events;
}

/** Deferral expiry: after `threshold` promoted commits since the deferral. */
export const DEFERRAL_EXPIRY_COMMITS = 20;

export interface DeferredFacts {
  readonly task: Task;
  readonly commitsSinceDeferral: number;
  readonly patch: Patch | undefined;
}

/** expire-stale-deferrals: pending again with the tier lowered by one; stale patch discarded. */
export function decideExpireDeferrals(
  items: readonly DeferredFacts[],
  actor = 'control_plane',
  threshold = DEFERRAL_EXPIRY_COMMITS,
): DomainEvent[] {
  const events: DomainEvent[] = [];
  for (const { task, commitsSinceDeferral, patch } of items) {
    if (task.status !== 'deferred' || commitsSinceDeferral < threshold) continue;
    const oldTier = clampTier(task.risk_tier);
    events.push(
      domainEvent('task.deferral_expired', task.task_id, actor, {
        old_status: 'deferred',
        new_status: 'pending',
        old_tier: oldTier,
        new_tier: Math.max(0, oldTier - 1),
        commits_since: commitsSinceDeferral,
      }),
    );
    if (patch !== undefined && patch.status !== 'promoted' && patch.status !== 'discarded') {
      events.push(
        domainEvent('patch.discarded', patch.patch_id, actor, {
          task_id: task.task_id,
          reason: `deferral expired after ${commitsSinceDeferral} commits`,
        }),
      );
    }
  }
  return events;
}

function clampTier(n: number): 0 | 1 | 2 | 3 {
  return Math.min(3, Math.max(0, Math.trunc(n))) as 0 | 1 | 2 | 3;
}

/** Readiness for pick-ready-task. Dropped deps count as met so a drop cannot wedge the backlog. */
export function depsMet(task: Task, statusOf: (id: string) => TaskStatus | undefined): boolean {
  return (
    formatDeps(task.deps) === '-' ||
    task.deps.split(',').every((d) => {
      const s = statusOf(d.trim());
      return s === 'done' || s === 'dropped';
    })
  );
}

export type PickRole = 'worker' | 'primary';

/** Efforts a worker takes when nothing else is configured (ralph.config.json workers.effort). */
export const DEFAULT_WORKER_EFFORTS: readonly Effort[] = ['S'];

/**
 * pick-ready-task's choice. worker: pending, an allowed effort (default S; a task with no or
 * an unknown effort never goes to a worker), deps met, by wave then id.
 * primary: pending, any effort, deps met, the current (lowest unfinished) wave first.
 */
export function pickReady(
  tasks: readonly Task[],
  role: PickRole,
  exclude: readonly string[] = [],
  efforts: readonly string[] = DEFAULT_WORKER_EFFORTS,
): Task | undefined {
  const status = new Map(tasks.map((t) => [t.task_id, t.status]));
  const workerMayTake = (t: Task): boolean => t.effort !== null && isEffort(t.effort) && efforts.includes(t.effort);
  const candidates = tasks.filter(
    (t) =>
      t.status === 'pending' &&
      // A task whose id breaks the grammar (forged into an old store) can take no event: never offered.
      isId(t.task_id, 'task') &&
      !exclude.includes(t.task_id) &&
      (role === 'primary' || workerMayTake(t)) &&
      depsMet(t, (id) => status.get(id)),
  );
  candidates.sort((a, b) => a.wave - b.wave || (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0));
  return candidates[0];
}

/** The current wave: the lowest wave with unfinished work, else the highest wave (0 when empty). */
export function currentWave(tasks: readonly Task[]): number {
  const open = tasks.filter((t) => t.status !== 'done' && t.status !== 'dropped');
  if (open.length > 0) return Math.min(...open.map((t) => t.wave));
  return tasks.length > 0 ? Math.max(...tasks.map((t) => t.wave)) : 0;
}

// ------------------------------------------------------------------ failed attempts

/** The seed's reflection classes (the primary's reflect phase answers with the same four). */
export type FailureClass = 'transient' | 'recoverable' | 'environment' | 'fundamental';

/** What the harness saw of a failed attempt: the agent's run itself, or a gate it ran after. */
export type AttemptFailure =
  | { readonly kind: 'agent'; readonly status: string; readonly stopReason?: 'abort' | 'timeout' | undefined }
  | { readonly kind: 'gate'; readonly gate: string; readonly status: string; readonly exitCode?: number | null };

/**
 * A worker's failed attempt, classed from machine facts only (a worker has no reflect
 * phase, so no model is paid to classify it):
 * - agent crashed, errored (API error) or timed out: transient, the same prompt may pass;
 * - agent stopped by its turn or budget limit: recoverable, the task needs a tighter pass;
 * - a gate that could not start (status error), or whose shell could not find or run its
 *   command (exit 127 / 126: a tool not installed): environment — no change fixes that;
 * - a gate cancelled under it: transient;
 * - a gate that failed or timed out on the change: recoverable (the gates passed on the
 *   branch tip the worktree started from, so the change is the likeliest cause).
 * `fundamental` is never inferred: only a model's reflection or a task budget says that.
 */
export function classifyAttemptFailure(f: AttemptFailure): FailureClass {
  if (f.kind === 'agent') {
    if (f.status === 'max_turns' || f.status === 'budget') return 'recoverable';
    return 'transient';
  }
  if (f.status === 'error' || (f.status === 'failed' && (f.exitCode === 127 || f.exitCode === 126))) return 'environment';
  if (f.status === 'cancelled') return 'transient';
  return 'recoverable';
}

/**
 * After a failed attempt (1-based): an environment failure releases the task (retrying
 * cannot fix a missing tool, and blocking would keep it from running once it is fixed);
 * otherwise block on a repeated identical failure or when retries are spent.
 */
export function attemptDecision(
  attempt: number,
  maxRetries: number,
  identicalFailure: boolean,
  klass?: FailureClass,
): 'retry' | 'block' | 'release' {
  if (klass === 'environment') return 'release';
  return identicalFailure || attempt > maxRetries ? 'block' : 'retry';
}

const LESSON_LINE_BYTES = 200;
const ERRORISH = /(error|fail|exception|panic|denied|not found|cannot|undefined|timed out|not ok|✗|✖)/i;
const NOISE = /^(at\s|node\.js v\d|\^+$|[{}[\],]+$|error: command failed)/i;

/**
 * The short line a lesson quotes from a failing gate's output tail: the last line that
 * reads like an error (stack frames and runtime banners skipped), else the last line.
 */
export function lessonLine(gate: string, output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !NOISE.test(l));
  const pick = [...lines].reverse().find((l) => ERRORISH.test(l)) ?? lines[lines.length - 1] ?? 'no output';
  const line = pick.length > LESSON_LINE_BYTES ? `${pick.slice(0, LESSON_LINE_BYTES - 1)}…` : pick;
  return `${gate}: ${line}`;
}

// ------------------------------------------------------------------ a reviewer's modify

/** The part of a stored event the follow-up rule reads (a StoredEvent fits). */
export interface HistoryEvent {
  readonly event_id: string;
  readonly event_type: string;
  readonly entity_id: string;
  readonly actor: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** A reviewer's modify still to be done: start from the reviewed patch, change it as asked. */
export interface ReviewFollowUp {
  /** The `task.deferral_resolved` event that asked for the change. */
  readonly resolutionId: string;
  readonly actor: string;
  /** The reviewed patch the modify discarded. */
  readonly patchId: string;
  readonly modification: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

/**
 * A reviewer's modify becomes a follow-up: the task is pending again (as ralphctl leaves
 * it) and its next attempt starts from the reviewed patch with
 * the modification on top. Given the task's review history in append order (its
 * task.deferred, task.deferral_resolved and task.deferral_expired events and the
 * patch.discarded events of its patches), the follow-up still open, or null. Open while the
 * latest review step is a modify that discarded a patch; a later deferral (the follow-up
 * produced the next patch), a reject, an approval or an expiry close it. Events written
 * before `discarded_patch_id` existed name the patch in the discard right after.
 */
export function reviewFollowUp(history: readonly HistoryEvent[]): ReviewFollowUp | null {
  let open: ReviewFollowUp | null = null;
  let awaitingPatch: Omit<ReviewFollowUp, 'patchId'> | null = null;
  for (const e of history) {
    const justResolved = awaitingPatch;
    awaitingPatch = null;
    switch (e.event_type) {
      case 'task.deferred':
      case 'task.deferral_expired':
        open = null;
        break;
      case 'task.deferral_resolved': {
        open = null;
        if (e.payload['decision'] !== 'modify') break;
        const modification = str(e.payload['modification']) ?? str(e.payload['rationale']) ?? '';
        const base = { resolutionId: e.event_id, actor: e.actor, modification };
        const patchId = str(e.payload['discarded_patch_id']);
        if (patchId !== null) open = { ...base, patchId };
        else awaitingPatch = base;
        break;
      }
      case 'patch.discarded': {
        if (justResolved !== null) open = { ...justResolved, patchId: e.entity_id };
        break;
      }
    }
  }
  return open;
}
