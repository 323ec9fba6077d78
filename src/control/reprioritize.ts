// reprioritize-task: a human moves a task to another wave (the backlog's order). The same
// `task.reprioritized` event an accepted `reprioritize` proposal writes; through the inbox
// it works beside a running loop too.
import { domainEvent } from '../domain/events';
import { InvalidArgumentError, InvalidStateError, TaskNotFoundError } from '../domain/errors';
import type { ControlContext } from './context';
import { decideAndAppend } from './tasks';
import { getTask } from './views';

export interface ReprioritizeCommand {
  readonly taskId: string;
  readonly newWave: number;
  readonly actor: string;
  readonly rationale?: string;
}

/** Moves the task to `newWave`; a no-op (no event) when it is already there. Returns whether it moved. */
export async function reprioritizeTask(ctx: ControlContext, cmd: ReprioritizeCommand): Promise<boolean> {
  if (!Number.isInteger(cmd.newWave) || cmd.newWave < 0)
    throw new InvalidArgumentError(`wave must be a whole number ≥ 0, not '${cmd.newWave}'`);
  const { result } = await decideAndAppend(ctx, (db) => {
    const t = getTask(db, cmd.taskId);
    if (!t) throw new TaskNotFoundError(cmd.taskId);
    if (t.status === 'done' || t.status === 'dropped')
      throw new InvalidStateError(cmd.taskId, t.status, `task ${cmd.taskId} is ${t.status}; only open tasks move between waves`);
    if (t.wave === cmd.newWave) return { events: [], result: false };
    const payload = { old_wave: t.wave, new_wave: cmd.newWave, ...(cmd.rationale ? { rationale: cmd.rationale } : {}) };
    return { events: [domainEvent('task.reprioritized', cmd.taskId, cmd.actor, payload)], result: true };
  });
  return result;
}
