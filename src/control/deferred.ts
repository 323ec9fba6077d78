// The deferred queue: listing it for the judge, deciding when a review is due, the
// judge's verdicts (an approve counts only once its patch is promoted) and expiry after 20
// promoted commits (commits, not events, which a busy loop makes by the hundred) with the
// tier lowered by one.
import {
  decideExpireDeferrals,
  decideResolveDeferred,
  currentPatch,
  DEFERRAL_EXPIRY_COMMITS,
  type DeferredFacts,
  type ResolveDecision,
} from '../domain/task';
import { decidePromotePatch } from '../domain/patch';
import { renderDeferredPrompt, REVIEW_THRESHOLD } from '../domain/views';
import { InvalidArgumentError } from '../domain/errors';
import type { Task, TaskStatus } from '../domain/model';
import { CONTROL_ACTOR, type ControlContext } from './context';
import { decideAndAppend } from './tasks';
import { requireCommit } from './patches';
import { getTask, lastEventId, patchesOf, promotedSince } from './views';
import { deferredTasksIn } from './eventQueries';

/** Deferred tasks, oldest deferral first. */
export function deferredTasks(ctx: ControlContext): Task[] {
  return deferredTasksIn(ctx.store);
}

export type DeferredFormat = 'prompt' | 'json';

/** get-deferred-queue: the text the CLI prints for either format. */
export function getDeferredQueue(ctx: ControlContext, format: DeferredFormat = 'prompt'): string {
  const items = deferredTasks(ctx);
  if (format === 'json') return `${JSON.stringify(items, null, 2)}\n`;
  return renderDeferredPrompt(items);
}

/** Review is due at >= 3 deferred, or when one has waited this many promoted commits. */
export const REVIEW_MAX_WAIT_COMMITS = 10;

export interface ReviewDue {
  readonly review: boolean;
  readonly deferred: number;
  readonly longestWaitCommits: number;
}

export function shouldReviewDeferred(ctx: ControlContext, opts: { threshold?: number; maxWaitCommits?: number } = {}): ReviewDue {
  const items = deferredTasks(ctx);
  const waits = items.map((t) => promotedSince(ctx.store, lastEventId(ctx.store, t.task_id, 'task.deferred')));
  const longest = waits.length ? Math.max(...waits) : 0;
  const review =
    items.length >= (opts.threshold ?? REVIEW_THRESHOLD) ||
    (items.length > 0 && longest >= (opts.maxWaitCommits ?? REVIEW_MAX_WAIT_COMMITS));
  return { review, deferred: items.length, longestWaitCommits: longest };
}

export function parseDecision(d: string): ResolveDecision {
  if (d !== 'approve' && d !== 'reject' && d !== 'modify')
    throw new InvalidArgumentError(`decision must be approve, reject or modify, not '${d}'`);
  return d;
}

export interface ResolveResult {
  readonly taskId: string;
  readonly decision: ResolveDecision;
  readonly newStatus: TaskStatus;
  /** The patch approved (approve) or discarded (reject/modify). */
  readonly patchId: string | null;
  readonly promoted: boolean;
}

/**
 * resolve-deferred. approve returns the task to `proposed` with its patch approved for
 * promotion; given `commitHash` (the patch's commit, checked through git), the patch is
 * promoted in the same transaction and the task is done. Never done without a patch.
 */
export async function resolveDeferred(
  ctx: ControlContext,
  cmd: { taskId: string; decision: ResolveDecision; actor: string; rationale: string; commitHash?: string; confidence?: number },
): Promise<ResolveResult> {
  if (cmd.commitHash !== undefined) {
    if (cmd.decision !== 'approve') throw new InvalidArgumentError('a commit can only accompany approve');
    await requireCommit(ctx, cmd.commitHash);
  }
  const { result } = await decideAndAppend(ctx, (db) => {
    const task = getTask(db, cmd.taskId);
    const patches = patchesOf(db, cmd.taskId);
    const events = decideResolveDeferred({ task, patches }, cmd);
    const patch = currentPatch({ task, patches });
    let newStatus: TaskStatus = cmd.decision === 'approve' ? (patch?.status === 'promoted' ? 'done' : 'proposed') : 'pending';
    let promoted = false;
    if (cmd.commitHash !== undefined && patch !== undefined && patch.status !== 'promoted' && task !== undefined) {
      events.push(
        ...decidePromotePatch(
          patch,
          { ...task, status: 'proposed' },
          { patchId: patch.patch_id, commitHash: cmd.commitHash, actor: cmd.actor },
        ),
      );
      newStatus = 'done';
      promoted = true;
    }
    return { events, result: { taskId: cmd.taskId, decision: cmd.decision, newStatus, patchId: patch?.patch_id ?? null, promoted } };
  });
  return result;
}

/** expire-stale-deferrals: returns the expired task ids. */
export async function expireStaleDeferrals(ctx: ControlContext, opts: { threshold?: number; actor?: string } = {}): Promise<string[]> {
  const { result } = await decideAndAppend(ctx, (db) => {
    const deferred = db.all<Task>("SELECT * FROM task_view WHERE status = 'deferred' ORDER BY deferred_at, task_id");
    const facts: DeferredFacts[] = deferred.map((task) => {
      const patches = patchesOf(db, task.task_id);
      return {
        task,
        patch: currentPatch({ task, patches }),
        commitsSinceDeferral: promotedSince(db, lastEventId(db, task.task_id, 'task.deferred')),
      };
    });
    const events = decideExpireDeferrals(facts, opts.actor ?? CONTROL_ACTOR, opts.threshold ?? DEFERRAL_EXPIRY_COMMITS);
    return { events, result: events.filter((e) => e.type === 'task.deferral_expired').map((e) => e.entity_id) };
  });
  return result;
}
