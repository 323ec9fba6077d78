// propose-task: a new task asked for by a person or a client (an MCP client, VS Code's chat)
// rather than read from a proposal file. It is a `new_task` proposal decided by the same
// policy as evolve_goals' files — auto-accept thresholds, backlog and wave limits, unknown
// deps — so a chat cannot add what an agent could not; the outcome is a proposal.* event
// under the proposal's id (resolve-proposal takes it like a file's name). The task id is
// chosen here, in the writer, when the asker left it out, so two askers never race for one.
import { domainEvent, type DomainEvent } from '../domain/events';
import { evaluateProposal, type Proposal } from '../domain/proposals';
import { InvalidArgumentError } from '../domain/errors';
import type { Effort, Task } from '../domain/model';
import type { SqlReader } from '../store/types';
import type { ControlContext } from './context';
import { decideAndAppend } from './tasks';
import { allTasks } from './views';

/** What the asker gives; `id` may be left to the control plane. */
export interface TaskDraft {
  readonly id?: string;
  readonly title: string;
  readonly source?: string;
  readonly effort: Effort;
  readonly wave: number;
  readonly deps?: string;
}

export interface ProposeTaskCommand {
  /** The proposal's id (entity of its proposal.* events); unique per request. */
  readonly proposalId: string;
  readonly task: TaskDraft;
  readonly confidence: number;
  readonly rationale: string;
  readonly actor: string;
}

export interface ProposeTaskResult {
  readonly proposalId: string;
  readonly outcome: 'accepted' | 'deferred' | 'rejected';
  /** The task id decided (given or chosen), also for a deferred or rejected proposal. */
  readonly taskId: string;
  /** The reason it was deferred or rejected; the created task ids when accepted. */
  readonly detail: string;
}

/** `W<wave>-NNN`: one past the highest number already used in that wave's ids of this shape. */
export function nextTaskId(tasks: readonly Pick<Task, 'task_id'>[], wave: number): string {
  const prefix = `W${wave}-`;
  let highest = 0;
  for (const t of tasks) {
    if (!t.task_id.startsWith(prefix)) continue;
    const n = Number(t.task_id.slice(prefix.length));
    if (Number.isInteger(n) && n > highest) highest = n;
  }
  return `${prefix}${String(highest + 1).padStart(3, '0')}`;
}

/** The outcome recorded for a proposal id, if any (a command applied twice is told the first answer). */
export function proposalOutcome(db: SqlReader, proposalId: string): ProposeTaskResult | undefined {
  const row = db.get<{ event_type: string; payload: string }>(
    "SELECT event_type, payload FROM events WHERE entity_type = 'proposal' AND entity_id = ? ORDER BY event_id LIMIT 1",
    [proposalId],
  );
  if (row === undefined) return undefined;
  const p = JSON.parse(row.payload) as { task_id?: string; tasks?: string[]; reason?: string; error?: string };
  const taskId = p.task_id ?? '';
  if (row.event_type === 'proposal.accepted') return { proposalId, outcome: 'accepted', taskId, detail: (p.tasks ?? []).join(', ') };
  if (row.event_type === 'proposal.deferred') return { proposalId, outcome: 'deferred', taskId, detail: p.reason ?? '' };
  return { proposalId, outcome: 'rejected', taskId, detail: p.error ?? '' };
}

/** Decides a proposed task through the policy, in one transaction with its task events. */
export async function proposeTask(ctx: ControlContext, cmd: ProposeTaskCommand): Promise<ProposeTaskResult> {
  if (!(cmd.confidence >= 0 && cmd.confidence <= 1)) throw new InvalidArgumentError(`confidence must be 0..1, not ${cmd.confidence}`);
  if (cmd.proposalId.trim() === '') throw new InvalidArgumentError('proposal id must not be empty');
  const { result } = await decideAndAppend(ctx, (db): { events: DomainEvent[]; result: ProposeTaskResult } => {
    const prior = proposalOutcome(db, cmd.proposalId);
    if (prior !== undefined) return { events: [], result: prior };
    const tasks = allTasks(db);
    const taskId = cmd.task.id ?? nextTaskId(tasks, cmd.task.wave);
    const proposal: Proposal = {
      proposal_type: 'new_task',
      confidence: cmd.confidence,
      rationale: cmd.rationale,
      task: {
        id: taskId,
        title: cmd.task.title,
        source: cmd.task.source ?? '-',
        effort: cmd.task.effort,
        wave: cmd.task.wave,
        deps: cmd.task.deps ?? '-',
      },
    };
    const base = { file: cmd.proposalId, proposal_type: 'new_task', task_id: taskId };
    const o = evaluateProposal(proposal, { tasks: new Map(tasks.map((t): [string, Task] => [t.task_id, t])) }, cmd.actor);
    if (o.outcome === 'accepted') {
      return {
        events: [
          ...o.events,
          domainEvent('proposal.accepted', cmd.proposalId, cmd.actor, { ...base, tasks: o.tasks, confidence: cmd.confidence }),
        ],
        result: { proposalId: cmd.proposalId, outcome: 'accepted', taskId, detail: o.tasks.join(', ') },
      };
    }
    if (o.outcome === 'deferred') {
      return {
        events: [domainEvent('proposal.deferred', cmd.proposalId, cmd.actor, { ...base, reason: o.reason, proposal })],
        result: { proposalId: cmd.proposalId, outcome: 'deferred', taskId, detail: o.reason },
      };
    }
    return {
      events: [domainEvent('proposal.rejected', cmd.proposalId, cmd.actor, { ...base, error: o.error })],
      result: { proposalId: cmd.proposalId, outcome: 'rejected', taskId, detail: o.error },
    };
  });
  return result;
}
