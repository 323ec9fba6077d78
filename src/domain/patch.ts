// The patch lifecycle as pure functions (queue, promote, discard). What a patch touches is
// read by the one patch parser, src/domain/patchText.ts.
import type { Patch, Task } from './model';
import { domainEvent, type DomainEvent, type RecordedEvent } from './events';
import { InvalidStateError, PatchNotFoundError, TaskNotFoundError } from './errors';
import { unhandled } from './exhaustive';

/** The events about patches: evolvePatch folds each one or lists it as one it ignores. */
export type PatchEvent = Extract<RecordedEvent, { readonly type: `patch.${string}` }>;

export function isPatchEvent(e: RecordedEvent): e is PatchEvent {
  return e.type.startsWith('patch.');
}

/** A patch row after one event; `undefined` in and out when the event does not create it. */
export function evolvePatch(patch: Patch | undefined, e: RecordedEvent): Patch | undefined {
  if (!isPatchEvent(e)) return patch;
  switch (e.type) {
    case 'patch.queued':
      return {
        patch_id: e.entity_id,
        task_id: e.data.task_id,
        status: 'queued',
        patch_path: e.data.patch_path,
        created_by: e.data.created_by,
        created_at: e.ts,
        applied_at: null,
        commit_hash: null,
      };
    case 'patch.applied':
      return patch && { ...patch, status: 'applied' };
    case 'patch.verified':
      return patch && { ...patch, status: 'verified' };
    case 'patch.promoted':
      return patch && { ...patch, status: 'promoted', commit_hash: e.data.commit_hash, applied_at: e.ts };
    case 'patch.discarded':
      return patch && { ...patch, status: 'discarded' };
    case 'patch.archived':
      return patch && { ...patch, patch_path: e.data.patch_path };
    // For promotion_view (gates, waiting) and the event log (a failed archive): the row stays.
    case 'patch.gates':
    case 'patch.waiting':
    case 'patch.archive_failed':
      return patch;
    default:
      // A new patch event type does not compile until it is folded or ignored above.
      return unhandled(e, patch);
  }
}

/** `patch_<task>_<UTC yyyymmddHHMMSSmmm>`, suffixed `_2`, `_3`… if taken. */
export function newPatchId(taskId: string, now: Date, taken: (id: string) => boolean): string {
  const stamp = now.toISOString().replace(/[-:TZ.]/g, '');
  const base = `patch_${taskId}_${stamp}`;
  if (!taken(base)) return base;
  for (let i = 2; ; i++) if (!taken(`${base}_${i}`)) return `${base}_${i}`;
}

const LIVE: readonly string[] = ['queued', 'applied', 'verified'];

export function isLivePatch(p: Patch): boolean {
  return LIVE.includes(p.status);
}

/** queue-patch: the patch is queued and its task becomes `proposed`. */
export function decideQueuePatch(
  task: Task | undefined,
  cmd: { taskId: string; patchId: string; path: string; createdBy: string },
): DomainEvent[] {
  if (task === undefined) throw new TaskNotFoundError(cmd.taskId);
  if (task.status === 'done' || task.status === 'dropped')
    throw new InvalidStateError(cmd.taskId, task.status, `task ${cmd.taskId} is ${task.status}; it takes no more patches`);
  return [
    domainEvent('patch.queued', cmd.patchId, cmd.createdBy, { task_id: cmd.taskId, patch_path: cmd.path, created_by: cmd.createdBy }),
    domainEvent('task.proposed', cmd.taskId, cmd.createdBy, { old_status: task.status, new_status: 'proposed', patch_id: cmd.patchId }),
  ];
}

/**
 * promote-patch: patch promoted, task done and `task.completed`, in one decision. A task
 * still deferred to the judge cannot be promoted around it; approval comes first.
 */
export function decidePromotePatch(
  patch: Patch | undefined,
  task: Task | undefined,
  cmd: { patchId: string; commitHash: string; actor: string },
): DomainEvent[] {
  if (patch === undefined) throw new PatchNotFoundError(cmd.patchId);
  if (!isLivePatch(patch))
    throw new InvalidStateError(
      cmd.patchId,
      patch.status,
      `patch ${cmd.patchId} is ${patch.status}; only a queued, applied or verified patch can be promoted`,
    );
  if (task === undefined) throw new TaskNotFoundError(patch.task_id);
  if (task.status === 'deferred') {
    throw new InvalidStateError(
      task.task_id,
      task.status,
      `task ${task.task_id} is deferred to the judge; approve it with resolve-deferred before promoting ${cmd.patchId}`,
    );
  }
  if (task.status === 'dropped') throw new InvalidStateError(task.task_id, task.status, `task ${task.task_id} is dropped`);
  return [
    domainEvent('patch.promoted', cmd.patchId, cmd.actor, { task_id: task.task_id, commit_hash: cmd.commitHash }),
    domainEvent('task.done', task.task_id, cmd.actor, { old_status: task.status, new_status: 'done', patch_id: cmd.patchId }),
    domainEvent('task.completed', task.task_id, cmd.actor, { patch_id: cmd.patchId, commit_hash: cmd.commitHash }),
  ];
}

/** discard-patch: patch discarded; its task back to pending unless it is already finished. */
export function decideDiscardPatch(
  patch: Patch | undefined,
  task: Task | undefined,
  cmd: { patchId: string; reason: string; actor: string },
): DomainEvent[] {
  if (patch === undefined) throw new PatchNotFoundError(cmd.patchId);
  if (!isLivePatch(patch))
    throw new InvalidStateError(
      cmd.patchId,
      patch.status,
      `patch ${cmd.patchId} is ${patch.status}; only a queued, applied or verified patch can be discarded`,
    );
  const events = [domainEvent('patch.discarded', cmd.patchId, cmd.actor, { task_id: patch.task_id, reason: cmd.reason })];
  // A patch the task has moved on from (a newer one is its current patch) closes alone.
  const superseded = task?.patch_id != null && task.patch_id !== cmd.patchId;
  if (task !== undefined && !superseded && task.status !== 'done' && task.status !== 'dropped' && task.status !== 'pending') {
    events.push(
      domainEvent('task.pending', task.task_id, cmd.actor, { old_status: task.status, new_status: 'pending', reason: cmd.reason }),
    );
  }
  return events;
}
