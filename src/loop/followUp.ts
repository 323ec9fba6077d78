// A reviewer's modify (judge or human) is a follow-up: the task's next attempt starts from
// the reviewed patch, applied onto the fresh worktree, with the requested change stated;
// when the patch no longer applies, from scratch. A `task.follow_up` note records which.
import { domainEvent } from '../domain/events';
import type { RalphWorktree } from '../git/worktrees';
import type { HarnessContext } from './context';
import type { AgentName } from './events';
import type { LoopTask } from './ports';
import type { FollowUpBrief } from './prompts';
import { startFromPatch } from './startFromPatch';

/** Prepares the worktree for a follow-up and says how the attempt starts; null when there is none. */
export async function startFollowUp(
  ctx: Pick<HarnessContext, 'control' | 'log'>,
  agent: AgentName,
  task: LoopTask,
  wt: RalphWorktree,
): Promise<FollowUpBrief | null> {
  const { control } = ctx;
  const f = control.followUp(task.task_id);
  if (f === null) return null;
  const r =
    f.patchPath === null
      ? { applied: false as const, reason: `patch ${f.patchId} has no file` }
      : await startFromPatch(wt.path, wt.base, f.patchPath);
  const payload = {
    reviewed_patch_id: f.patchId,
    patch_path: f.patchPath,
    started_from: r.applied ? ('patch' as const) : ('scratch' as const),
    base: wt.base,
    requested_by: f.actor,
    ...(r.applied ? {} : { reason: r.reason }),
  };
  await control
    .record([domainEvent('task.follow_up', task.task_id, agent, payload)])
    .catch((e: unknown) => ctx.log(agent, 'warn', `task.follow_up not recorded: ${String(e)}`));
  ctx.log(
    agent,
    r.applied ? 'info' : 'warn',
    `${task.task_id}: follow-up of ${f.actor}'s modify ${r.applied ? `starts from patch ${f.patchId}` : `starts from scratch: patch ${f.patchId} ${r.reason}`}`,
  );
  return r.applied ? { modification: f.modification, from: 'patch' } : { modification: f.modification, from: 'scratch', reason: r.reason };
}
