// The tools a chat model may call, one catalogue for the MCP server and VS Code's
// language-model tools: name, description, input schema (zod; the JSON Schema in
// package.json's languageModelTools is generated from it and a test keeps them equal), whether
// it decides (changes the store: left out with --read-only, confirmed by the user in VS Code),
// and how it runs over the operations. Every input is hostile: ids are checked against the
// task id grammar, text is bounded and one line where it lands in a table.
import { z } from 'zod';
import { EFFORTS, TASK_STATUSES } from '../domain/model';
import { proposalSchemas } from '../domain/proposals';
import type { OperationResult, RalphOperations } from './operations';

/** A task id as the backlog writes them (W1-003, CALC-4): the proposal grammar, bounded. */
export const taskIdSchema = (): z.ZodString => proposalSchemas().proposedTask.shape.id.max(64);

/** True when `s` holds a control character (a newline included). */
export function hasControlChars(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

const oneLine = (max: number, what: string): z.ZodString =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((s) => !hasControlChars(s), `${what} must be one line of text`);

export interface ToolSpec<S extends z.ZodRawShape = z.ZodRawShape> {
  /** The MCP name; VS Code's tool is `ralph_<name>`. */
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** Changes the store (a decision, a new task, a loop request). */
  readonly decides: boolean;
  readonly input: () => S;
  run(ops: RalphOperations, args: z.infer<z.ZodObject<S>>): Promise<OperationResult>;
  /** The confirmation VS Code shows before a deciding tool runs. */
  confirm?(args: z.infer<z.ZodObject<S>>): { readonly title: string; readonly message: string };
}

function tool<S extends z.ZodRawShape>(spec: ToolSpec<S>): ToolSpec {
  return spec as unknown as ToolSpec;
}

const reason = (): { reason: z.ZodOptional<z.ZodString> } => ({
  reason: z.string().max(500).optional().describe('Why (recorded with the request).'),
});

export const TOOLS: readonly ToolSpec[] = [
  tool({
    name: 'status',
    title: 'Ralph status',
    description:
      "The Ralph loop's status for this project: phase, iteration, commits, current task and wave, task and patch counts, events, deferred patches waiting for a decision, whether a loop is running (and the spend forecast when there is one).",
    decides: false,
    input: () => ({}),
    run: (ops) => ops.status(),
  }),
  tool({
    name: 'list_tasks',
    title: 'List Ralph tasks',
    description:
      "Lists the backlog's tasks (id, status, wave, effort, risk tier, title), optionally only those with given statuses, one wave or one risk tier.",
    decides: false,
    input: () => ({
      status: z.array(z.enum(TASK_STATUSES)).max(TASK_STATUSES.length).optional().describe('Only tasks with one of these statuses.'),
      wave: z.number().int().min(0).max(1000).optional().describe('Only tasks of this wave.'),
      tier: z.number().int().min(0).max(3).optional().describe('Only tasks of this risk tier (0 trivial … 3 restricted).'),
      limit: z.number().int().min(1).max(500).optional().describe('At most this many (default 100).'),
    }),
    run: (ops, a) => ops.listTasks(a),
  }),
  tool({
    name: 'show_task',
    title: "A Ralph task's story",
    description:
      "Why a task is where it is: its spec source, every event in order with actor and time, each attempt (reflections, patches with gate results and risk tier), the judge's and humans' decisions, and the commit it landed as.",
    decides: false,
    input: () => ({ task_id: taskIdSchema().describe('The task id, e.g. W1-003.') }),
    run: (ops, a) => ops.showTask(a.task_id),
  }),
  tool({
    name: 'deferred_queue',
    title: 'Deferred Ralph patches',
    description:
      'The patches deferred to the judge (risky ones: tier 2) that wait for a decision, with their tier and reason, and the task proposals waiting for the judge.',
    decides: false,
    input: () => ({}),
    run: (ops) => ops.deferred(),
  }),
  tool({
    name: 'add_task',
    title: 'Add a Ralph task',
    description:
      "Proposes a new backlog task. It goes through the same policy as the agents' proposals: small tasks are accepted, large ones (effort L/XL) or over the backlog limits are deferred to the judge. Without an id the next free one of the wave is chosen (W<wave>-NNN).",
    decides: true,
    input: () => ({
      title: oneLine(200, 'title').describe('What to do, one line.'),
      effort: z.enum(EFFORTS).optional().describe('S (one iteration) … XL; default S.'),
      wave: z.number().int().min(0).max(1000).optional().describe('Priority batch; default the current wave.'),
      id: taskIdSchema().optional().describe('An id for the task; default the next free W<wave>-NNN.'),
      deps: z.array(taskIdSchema()).max(20).optional().describe('Ids of tasks that must be done first.'),
      source: oneLine(200, 'source').optional().describe('The spec reference, e.g. specs/api.md:12.'),
      rationale: z.string().max(2000).optional().describe('Why the task is needed.'),
      confidence: z.number().min(0).max(1).optional().describe('How sure the asker is (0..1, default 0.9); below 0.7 the judge decides.'),
    }),
    run: (ops, a) =>
      ops.addTask({
        title: a.title,
        ...(a.effort ? { effort: a.effort } : {}),
        ...(a.wave !== undefined ? { wave: a.wave } : {}),
        ...(a.id ? { id: a.id } : {}),
        ...(a.deps ? { deps: a.deps } : {}),
        ...(a.source ? { source: a.source } : {}),
        ...(a.rationale ? { rationale: a.rationale } : {}),
        ...(a.confidence !== undefined ? { confidence: a.confidence } : {}),
      }),
    confirm: (a) => ({
      title: 'Add a task to the Ralph backlog?',
      message: `"${a.title}" (effort ${a.effort ?? 'S'}${a.wave !== undefined ? `, wave ${a.wave}` : ''}) goes to the backlog's policy as a proposal.`,
    }),
  }),
  tool({
    name: 'decide',
    title: 'Decide on a deferred Ralph patch',
    description:
      'A human decision on a deferred patch, overriding the judge: approve (the patch is promoted; its gates run again if the branch moved), reject with a note saying why (the patch is discarded, the task goes back to the agents with the note), or modify with an instruction (the next attempt starts from the patch and makes the change).',
    decides: true,
    input: () => ({
      task_id: taskIdSchema().describe('The deferred task, e.g. W1-003.'),
      decision: z.enum(['approve', 'reject', 'modify']),
      note: z.string().max(4000).optional().describe('reject: why (required); modify: what to change (required); approve: optional.'),
    }),
    run: (ops, a) => ops.decide(a.task_id, a.decision, a.note),
    confirm: (a) => ({
      title: `${a.decision === 'approve' ? 'Approve' : a.decision === 'reject' ? 'Reject' : 'Modify'} ${a.task_id}'s patch?`,
      message:
        a.decision === 'approve'
          ? `The deferred patch of ${a.task_id} is promoted onto the branch, overriding the judge.`
          : a.decision === 'reject'
            ? `The deferred patch of ${a.task_id} is discarded${a.note ? `: "${a.note}"` : ''}.`
            : `The deferred patch of ${a.task_id} goes back with the instruction${a.note ? ` "${a.note}"` : ''}.`,
    }),
  }),
  ...(['pause', 'resume', 'stop'] as const).map((verb) =>
    tool({
      name: verb,
      title: `${verb[0]?.toUpperCase()}${verb.slice(1)} the Ralph loop`,
      description: {
        pause: 'Pauses the running loop: agents finish their current invocation, nothing new starts.',
        resume: 'Resumes a paused loop.',
        stop: "Stops the running loop; its agents' processes are ended within seconds.",
      }[verb],
      decides: true,
      input: reason,
      run: (ops, a) => ops.loop(verb, a.reason),
      confirm: () => ({
        title: `${verb[0]?.toUpperCase()}${verb.slice(1)} the Ralph loop?`,
        message: `The running loop is asked to ${verb}.`,
      }),
    }),
  ),
];

export const READING_TOOLS = TOOLS.filter((t) => !t.decides);

/** VS Code's name for a tool (language-model tool names are global across extensions). */
export const vscodeToolName = (t: Pick<ToolSpec, 'name'>): string => `ralph_${t.name}`;

/** The JSON Schema of a tool's input, as package.json declares it for VS Code. */
export function inputJsonSchema(t: ToolSpec): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(z.object(t.input()), { io: 'input' }) as Record<string, unknown>;
  return rest;
}

/** Validates raw arguments (VS Code hands them unchecked); the error names the field. */
export function parseToolInput(t: ToolSpec, raw: unknown): { ok: true; args: Record<string, unknown> } | { ok: false; error: string } {
  const r = z.strictObject(t.input()).safeParse(raw ?? {});
  if (r.success) return { ok: true, args: r.data as Record<string, unknown> };
  return { ok: false, error: r.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`).join('; ') };
}
