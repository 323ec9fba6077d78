// Task commands: emit-event, transition-task, pick-ready-task and the atomic
// claim-ready-task (pick and claim in one append, so two agents never take one task).
import type { NewEvent, SqlReader, StoredEvent } from '../store/types';
import { isDomainEventType, toNewEvent, type DomainEvent } from '../domain/events';
import { InvalidArgumentError, ReservedEventTypeError } from '../domain/errors';
import { checkId, hasControlCharacter } from '../domain/ids';
import { decideClaim, decideTransition, DEFAULT_WORKER_EFFORTS, pickReady, type PickRole } from '../domain/task';
import { EFFORTS, isEffort, type Effort, type Task, type TaskStatus } from '../domain/model';
import type { ControlContext } from './context';
import { allTasks, getTask, patchesOf } from './views';

/**
 * Runs a domain decision through the store: its events are appended atomically, each
 * stamped with the context's relaying client when there is one.
 */
export async function decideAndAppend<T>(
  ctx: ControlContext,
  decide: (db: SqlReader) => { events: readonly DomainEvent[]; result: T },
): Promise<{ result: T; events: StoredEvent[] }> {
  const client = ctx.client;
  const stamp = (e: NewEvent): NewEvent =>
    client === undefined
      ? e
      : {
          ...e,
          payload: { ...e.payload, client: client.name, ...(client.version !== undefined ? { client_version: client.version } : {}) },
        };
  return ctx.store.execute((db) => {
    const d = decide(db);
    return { events: d.events.map((e) => stamp(toNewEvent(e))), result: d.result };
  });
}

/**
 * emit-event: appends a free-form event and returns its id. Event types that the
 * domain owns (task.*, patch.*, proposal.* of the lifecycle) are refused: appending them
 * raw would bypass the lifecycle rules, e.g. `done` without a promoted patch.
 */
export async function emitEvent(
  ctx: ControlContext,
  e: { entityType: string; entityId: string; eventType: string; actor: string; payload?: Record<string, unknown> },
): Promise<string> {
  for (const [k, v] of Object.entries({ entity_type: e.entityType, entity_id: e.entityId, event_type: e.eventType, actor: e.actor })) {
    if (v.trim() === '') throw new InvalidArgumentError(`${k} must not be empty`);
  }
  if (isDomainEventType(e.eventType)) throw new ReservedEventTypeError(e.eventType);
  // A free-form event about a task or patch names it by its id; no entity id is a line break.
  if (e.entityType === 'task' || e.entityType === 'patch') checkId(e.entityType, e.entityId, 'entity_id');
  else if (hasControlCharacter(e.entityId))
    throw new InvalidArgumentError(`entity_id ${JSON.stringify(e.entityId)} contains a control character`);
  const ev: NewEvent = {
    entity_type: e.entityType,
    entity_id: e.entityId,
    event_type: e.eventType,
    actor: e.actor,
    payload: e.payload ?? {},
  };
  const [stored] = await ctx.store.append([ev]);
  if (stored === undefined) throw new Error('the store appended nothing');
  return stored.event_id;
}

export interface TransitionResult {
  readonly taskId: string;
  readonly oldStatus: TaskStatus | null;
  readonly newStatus: TaskStatus;
  readonly eventId: string;
}

/** transition-task: payload keys claimed_by, patch_id, risk_tier update those columns. */
export async function transitionTask(
  ctx: ControlContext,
  cmd: { taskId: string; status: string; actor: string; payload?: Record<string, unknown>; via?: string },
): Promise<TransitionResult> {
  const { result, events } = await decideAndAppend(ctx, (db) => {
    const task = getTask(db, cmd.taskId);
    const evs = decideTransition(
      { task, patches: patchesOf(db, cmd.taskId) },
      {
        taskId: cmd.taskId,
        to: cmd.status,
        actor: cmd.actor,
        ...(cmd.payload ? { payload: cmd.payload } : {}),
        ...(cmd.via ? { via: cmd.via } : {}),
      },
    );
    return { events: evs, result: { oldStatus: task?.status ?? null, newStatus: cmd.status as TaskStatus } };
  });
  return { taskId: cmd.taskId, ...result, eventId: events[0]?.event_id ?? '' };
}

export function parseRole(role: string): PickRole {
  if (role !== 'worker' && role !== 'primary') throw new InvalidArgumentError(`role must be worker or primary, not '${role}'`);
  return role;
}

/** `S,M` (a CLI flag or a config list joined) as efforts; an unknown one is an error naming it. */
export function parseEfforts(text: string): Effort[] {
  const items = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  if (items.length === 0) throw new InvalidArgumentError(`efforts must list at least one of ${EFFORTS.join(', ')}`);
  for (const e of items) if (!isEffort(e)) throw new InvalidArgumentError(`unknown effort '${e}' (expected one of ${EFFORTS.join(', ')})`);
  return items as Effort[];
}

/** pick-ready-task: the next ready task for the role, without claiming it (a query). */
export function pickReadyTask(
  ctx: ControlContext,
  role: PickRole,
  exclude: readonly string[] = [],
  efforts: readonly string[] = DEFAULT_WORKER_EFFORTS,
): Task | undefined {
  return pickReady(allTasks(ctx.store), role, exclude, efforts);
}

/**
 * claim-ready-task: picks and claims in one transaction, so two agents can never take
 * the same task. `efforts` limits a worker to those efforts (default S; ignored for the
 * primary). Returns the claimed task, or undefined when nothing is ready.
 */
export async function claimReadyTask(
  ctx: ControlContext,
  role: PickRole,
  owner: string = role,
  exclude: readonly string[] = [],
  efforts: readonly string[] = DEFAULT_WORKER_EFFORTS,
): Promise<Task | undefined> {
  const { result } = await decideAndAppend(ctx, (db) => {
    const task = pickReady(allTasks(db), role, exclude, efforts);
    if (task === undefined) return { events: [], result: undefined };
    return { events: decideClaim({ task, patches: [] }, task.task_id, owner), result: task.task_id };
  });
  return result === undefined ? undefined : getTask(ctx.store, result);
}

/**
 * Returns claimed tasks to pending, each with a `task.pending` event (repair and the
 * loop's crash recovery use it, so a reset claim is in the log like any other change).
 * `owner` limits it to one owner's claims; `except` keeps the named tasks.
 */
export async function releaseClaims(
  ctx: ControlContext,
  opts: { owner?: string; except?: readonly string[]; actor: string; reason: string },
): Promise<string[]> {
  const { result } = await decideAndAppend(ctx, (db) => {
    const claimed = db.all<Task>("SELECT * FROM task_view WHERE status = 'claimed' ORDER BY task_id");
    const release = claimed.filter(
      (t) => (opts.owner === undefined || t.claimed_by === opts.owner) && !(opts.except ?? []).includes(t.task_id),
    );
    const events = release.flatMap((t) =>
      decideTransition(
        { task: t, patches: [] },
        { taskId: t.task_id, to: 'pending', actor: opts.actor, payload: { reason: opts.reason, released_owner: t.claimed_by } },
      ),
    );
    return { events, result: release.map((t) => t.task_id) };
  });
  return result;
}
