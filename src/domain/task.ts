// The task lifecycle as pure functions: evolveTask folds an event into a task row;
// the decide* functions turn a command and the current state into events or a typed error.
import { formatDeps, isEffort, isTaskStatus, newTask, type Effort, type Patch, type Task, type TaskStatus } from './model';
import { domainEvent, type DomainEvent, type RecordedEvent, type TransitionData } from './events';
import { DoneWithoutPromotedPatchError, InvalidArgumentError, InvalidStateError, TaskAlreadyClaimedError, TaskNotFoundError } from './errors';

/** Statuses that end a deferral (reference: pending/done/claimed clear deferred_*). */
const CLEARS_DEFERRAL: readonly TaskStatus[] = ['pending', 'done', 'claimed'];

/** A task row after one event; `undefined` in and out when the event does not create it. */
export function evolveTask(task: Task | undefined, e: RecordedEvent): Task | undefined {
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
    default:
      return task;
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
  if (!isTaskStatus(cmd.to)) throw new InvalidArgumentError(`unknown task status '${cmd.to}' (expected one of pending, claimed, proposed, done, deferred, blocked, dropped)`);
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
  if (ctx.task.status !== 'pending') throw new InvalidStateError(taskId, ctx.task.status, `task ${taskId} is ${ctx.task.status}, not pending`);
  return [domainEvent('task.claimed', taskId, owner, { old_status: 'pending', new_status: 'claimed', claimed_by: owner })];
}

export type ResolveDecision = 'approve' | 'reject' | 'modify';

export interface ResolveDeferredCommand {
  readonly taskId: string;
  readonly decision: ResolveDecision;
  readonly actor: string;
  readonly rationale: string;
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
 * the event for the next attempt) and its unpromoted patch is discarded.
 */
export function decideResolveDeferred(ctx: TaskContext, cmd: ResolveDeferredCommand): DomainEvent[] {
  const task = ctx.task;
  if (task === undefined) throw new TaskNotFoundError(cmd.taskId);
  if (task.status !== 'deferred') throw new InvalidStateError(cmd.taskId, task.status, `task ${cmd.taskId} is ${task.status}, not deferred`);
  const patch = currentPatch(ctx);
  if (cmd.decision === 'approve') {
    if (patch === undefined) throw new DoneWithoutPromotedPatchError(cmd.taskId, 'resolve-deferred approve (the task has no patch to promote)');
    const newStatus: TaskStatus = patch.status === 'promoted' ? 'done' : 'proposed';
    return [
      domainEvent('task.deferral_resolved', cmd.taskId, cmd.actor, {
        decision: 'approve',
        rationale: cmd.rationale,
        old_status: 'deferred',
        new_status: newStatus,
        patch_id: patch.patch_id,
        approved: true,
      }),
    ];
  }
  const events: DomainEvent[] = [
    domainEvent('task.deferral_resolved', cmd.taskId, cmd.actor, {
      decision: cmd.decision,
      rationale: cmd.rationale,
      old_status: 'deferred',
      new_status: 'pending',
      ...(cmd.decision === 'modify' ? { modification: cmd.rationale } : {}),
    }),
  ];
  if (patch !== undefined && patch.status !== 'promoted') {
    events.push(domainEvent('patch.discarded', patch.patch_id, cmd.actor, { task_id: cmd.taskId, reason: `judge ${cmd.decision}: ${cmd.rationale}` }));
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
export function decideExpireDeferrals(items: readonly DeferredFacts[], actor = 'control_plane', threshold = DEFERRAL_EXPIRY_COMMITS): DomainEvent[] {
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
      events.push(domainEvent('patch.discarded', patch.patch_id, actor, { task_id: task.task_id, reason: `deferral expired after ${commitsSinceDeferral} commits` }));
    }
  }
  return events;
}

function clampTier(n: number): 0 | 1 | 2 | 3 {
  return Math.min(3, Math.max(0, Math.trunc(n))) as 0 | 1 | 2 | 3;
}

/** Readiness for pick-ready-task. Dropped deps count as met so a drop cannot wedge the backlog. */
export function depsMet(task: Task, statusOf: (id: string) => TaskStatus | undefined): boolean {
  return formatDeps(task.deps) === '-' || task.deps.split(',').every((d) => {
    const s = statusOf(d.trim());
    return s === 'done' || s === 'dropped';
  });
}

export type PickRole = 'worker' | 'primary';

/** Efforts a worker takes when nothing else is configured (ralph.config.json workers.effort). */
export const DEFAULT_WORKER_EFFORTS: readonly Effort[] = ['S'];

/**
 * pick-ready-task's choice. worker: pending, an allowed effort (default S; a task with no or
 * an unknown effort never goes to a worker), deps met, by wave then id.
 * primary: pending, any effort, deps met, the current (lowest unfinished) wave first.
 */
export function pickReady(tasks: readonly Task[], role: PickRole, exclude: readonly string[] = [], efforts: readonly string[] = DEFAULT_WORKER_EFFORTS): Task | undefined {
  const status = new Map(tasks.map((t) => [t.task_id, t.status]));
  const workerMayTake = (t: Task): boolean => t.effort !== null && isEffort(t.effort) && efforts.includes(t.effort);
  const candidates = tasks.filter(
    (t) => t.status === 'pending' && !exclude.includes(t.task_id) && (role === 'primary' || workerMayTake(t)) && depsMet(t, (id) => status.get(id)),
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
