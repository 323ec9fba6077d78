// Backlog proposals (`.ralph/proposals/prop_*.json`): their schema and the seed's
// auto-accept table. A proposal is accepted (task events), deferred to the judge (it
// qualifies but needs a second opinion, or would exceed a limit) or rejected with the
// reason it is invalid — never silently deferred.
import { z } from 'zod';
import { EFFORTS, formatDeps, type Task } from './model';
import { domainEvent, formatZodIssues, type DomainEvent } from './events';
import { MAX_CELL_LENGTH, textProblem, titleProblem } from './text';
import { idSchema } from './ids';

export const MAX_BACKLOG = 300;
export const MAX_PENDING_PER_WAVE = 50;
/** The largest proposal file read (a proposal is a few hundred bytes; sub-task lists a few KiB). */
export const MAX_PROPOSAL_BYTES = 256 * 1024;
/** The longest rationale kept in an event. */
export const MAX_RATIONALE_LENGTH = 4000;

/** Waves are small numbers (the reference names 0..8); a huge one is a mistake, not a plan. */
const MAX_WAVE = 999;

// Built on first use (see events.ts: schema construction costs start-up time).
function buildSchemas() {
  // A source reference or a dependency list: one line of text of bounded length.
  const line = z
    .string()
    .trim()
    .max(MAX_CELL_LENGTH)
    .superRefine((t, c) => {
      const problem = textProblem(t);
      if (problem) c.addIssue({ code: 'custom', message: problem });
    });
  const cell = line.pipe(z.string().min(1));
  const deps = z.union([line, z.array(line).max(100)]).transform((d) => formatDeps(d));

  const proposedTaskSchema = z.object({
    id: idSchema('task'),
    title: z
      .string()
      .trim()
      .min(1)
      .refine((t) => !/[\r\n]/.test(t), 'title must be one line')
      .superRefine((t, c) => {
        const problem = /[\r\n]/.test(t) ? undefined : titleProblem(t);
        if (problem) c.addIssue({ code: 'custom', message: problem });
      }),
    source: cell.default('-'),
    effort: z.enum(EFFORTS),
    wave: z.number().int().min(0).max(MAX_WAVE),
    deps: deps.default('-'),
  });

  const confidence = z.number().min(0).max(1);
  const rationale = z.string().max(MAX_RATIONALE_LENGTH).default('');
  const taskRef = z.object({
    task_id: idSchema('task').optional(),
    task: z
      .object({ id: idSchema('task') })
      .passthrough()
      .optional(),
  });

  const proposalSchema = z.discriminatedUnion('proposal_type', [
    z.object({ proposal_type: z.literal('new_task'), confidence, task: proposedTaskSchema, rationale }),
    z.object({
      proposal_type: z.literal('decompose'),
      confidence: confidence.default(1),
      parent_task: idSchema('task'),
      sub_tasks: z
        .array(proposedTaskSchema.extend({ wave: z.number().int().min(0).max(MAX_WAVE).optional() }))
        .min(1)
        .max(MAX_PENDING_PER_WAVE),
      rationale,
    }),
    z
      .object({ proposal_type: z.literal('drop_task'), confidence: confidence.default(1), rationale, ...taskRef.shape })
      .refine((p) => p.task_id ?? p.task?.id, 'drop_task needs task_id (or task.id)'),
    z
      .object({
        proposal_type: z.literal('reprioritize'),
        confidence: confidence.default(1),
        rationale,
        old_wave: z.number().int().min(0).max(MAX_WAVE).optional(),
        new_wave: z.number().int().min(0).max(MAX_WAVE),
        ...taskRef.shape,
      })
      .refine((p) => p.task_id ?? p.task?.id, 'reprioritize needs task_id (or task.id)'),
  ]);
  return { proposedTask: proposedTaskSchema, proposal: proposalSchema };
}

type Schemas = ReturnType<typeof buildSchemas>;
let schemas: Schemas | undefined;

/** The proposal file schema and the proposed-task schema (also used by the inbox). */
export function proposalSchemas(): Schemas {
  return (schemas ??= buildSchemas());
}

export type ProposedTask = z.infer<Schemas['proposedTask']>;
export type Proposal = z.infer<Schemas['proposal']>;

export type ParsedProposal = { ok: true; proposal: Proposal } | { ok: false; error: string };

/** Parses a proposal file's text; the error names the file and what is wrong. */
export function parseProposal(text: string, file: string): ParsedProposal {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `${file}: not valid JSON: ${(e as Error).message}` };
  }
  const r = proposalSchemas().proposal.safeParse(json);
  if (!r.success) return { ok: false, error: `${file}: ${formatZodIssues(r.error)}` };
  return { ok: true, proposal: r.data };
}

export type ProposalOutcome =
  | { readonly outcome: 'accepted'; readonly events: DomainEvent[]; readonly tasks: string[] }
  | { readonly outcome: 'deferred'; readonly reason: string }
  | { readonly outcome: 'rejected'; readonly error: string };

/** The backlog as proposals see it; processProposals updates it between files. */
export interface BacklogFacts {
  readonly tasks: ReadonlyMap<string, Task>;
}

function live(tasks: ReadonlyMap<string, Task>): Task[] {
  return [...tasks.values()].filter((t) => t.status !== 'dropped');
}

function limitProblem(tasks: ReadonlyMap<string, Task>, adding: readonly { wave: number }[]): string | undefined {
  const size = live(tasks).length;
  if (size + adding.length > MAX_BACKLOG) return `backlog limit: ${size} + ${adding.length} tasks would exceed ${MAX_BACKLOG}`;
  const perWave = new Map<number, number>();
  for (const t of tasks.values()) if (t.status === 'pending') perWave.set(t.wave, (perWave.get(t.wave) ?? 0) + 1);
  for (const a of adding) {
    const n = (perWave.get(a.wave) ?? 0) + 1;
    perWave.set(a.wave, n);
    if (n > MAX_PENDING_PER_WAVE) return `wave limit: wave ${a.wave} would have more than ${MAX_PENDING_PER_WAVE} pending tasks`;
  }
  return undefined;
}

function unknownDeps(t: { deps: string }, known: (id: string) => boolean): string[] {
  return t.deps === '-' ? [] : t.deps.split(',').filter((d) => !known(d));
}

/**
 * Applies the seed's auto-accept table to one valid proposal. With `judged` (the judge
 * approved a deferred proposal) the "needs the judge" conditions are lifted; validity and
 * the backlog limits still hold (over a limit, a judged proposal is rejected).
 */
export function evaluateProposal(
  p: Proposal,
  facts: BacklogFacts,
  actor = 'control_plane',
  opts: { judged?: boolean } = {},
): ProposalOutcome {
  const { tasks } = facts;
  const judged = opts.judged === true;
  const overLimit = (reason: string): ProposalOutcome =>
    judged ? { outcome: 'rejected', error: reason } : { outcome: 'deferred', reason };
  switch (p.proposal_type) {
    case 'new_task': {
      const t = p.task;
      if (tasks.has(t.id)) return { outcome: 'rejected', error: `task ${t.id} already exists` };
      const missing = unknownDeps(t, (id) => tasks.has(id));
      if (missing.length) return { outcome: 'rejected', error: `task ${t.id} depends on unknown task(s) ${missing.join(', ')}` };
      const limit = limitProblem(tasks, [t]);
      if (limit) return overLimit(limit);
      const accept =
        judged ||
        (t.effort === 'S' && t.deps === '-' && p.confidence >= 0.7) ||
        ((t.effort === 'S' || t.effort === 'M') && p.confidence >= 0.8);
      if (!accept)
        return {
          outcome: 'deferred',
          reason: `new ${t.effort}-effort task with confidence ${p.confidence}${t.deps === '-' ? '' : ` and deps ${t.deps}`} needs the judge`,
        };
      return {
        outcome: 'accepted',
        tasks: [t.id],
        events: [domainEvent('task.created', t.id, actor, { ...t, provenance: 'auto', confidence: p.confidence, rationale: p.rationale })],
      };
    }
    case 'decompose': {
      const parent = tasks.get(p.parent_task);
      if (!parent) return { outcome: 'rejected', error: `parent task ${p.parent_task} does not exist` };
      if (parent.status === 'done' || parent.status === 'dropped')
        return { outcome: 'rejected', error: `parent task ${p.parent_task} is ${parent.status}` };
      const subs = p.sub_tasks.map((s) => ({ ...s, wave: s.wave ?? parent.wave }));
      const ids = new Set<string>();
      for (const s of subs) {
        if (tasks.has(s.id) || ids.has(s.id)) return { outcome: 'rejected', error: `sub-task id ${s.id} is not unique` };
        ids.add(s.id);
      }
      for (const s of subs) {
        const missing = unknownDeps(s, (id) => tasks.has(id) || ids.has(id));
        if (missing.length) return { outcome: 'rejected', error: `sub-task ${s.id} depends on unknown task(s) ${missing.join(', ')}` };
      }
      const limit = limitProblem(tasks, subs);
      if (limit) return overLimit(limit);
      const notS = subs.filter((s) => s.effort !== 'S');
      if (notS.length && !judged)
        return { outcome: 'deferred', reason: `decomposition has non-S sub-tasks (${notS.map((s) => s.id).join(', ')}); needs the judge` };
      return {
        outcome: 'accepted',
        tasks: subs.map((s) => s.id),
        events: [
          ...subs.map((s) =>
            domainEvent('task.created', s.id, actor, {
              ...s,
              provenance: 'auto',
              confidence: p.confidence,
              rationale: p.rationale,
              parent_task: parent.task_id,
            }),
          ),
          domainEvent('task.dropped', parent.task_id, actor, {
            old_status: parent.status,
            new_status: 'dropped',
            reason: `decomposed into ${subs.map((s) => s.id).join(', ')}`,
          }),
        ],
      };
    }
    case 'drop_task': {
      const id = (p.task_id ?? p.task?.id) as string;
      const t = tasks.get(id);
      if (!t) return { outcome: 'rejected', error: `task ${id} does not exist` };
      if (!judged) return { outcome: 'deferred', reason: `dropping ${id} always needs the judge` };
      if (t.status === 'done' || t.status === 'dropped') return { outcome: 'rejected', error: `task ${id} is already ${t.status}` };
      return {
        outcome: 'accepted',
        tasks: [id],
        events: [
          domainEvent('task.dropped', id, actor, {
            old_status: t.status,
            new_status: 'dropped',
            reason: p.rationale || 'dropped by proposal',
          }),
        ],
      };
    }
    case 'reprioritize': {
      const id = (p.task_id ?? p.task?.id) as string;
      const t = tasks.get(id);
      if (!t) return { outcome: 'rejected', error: `task ${id} does not exist` };
      if (p.old_wave !== undefined && p.old_wave !== t.wave)
        return { outcome: 'rejected', error: `task ${id} is in wave ${t.wave}, not ${p.old_wave} (stale proposal)` };
      if (p.new_wave === t.wave) return { outcome: 'rejected', error: `task ${id} is already in wave ${t.wave}` };
      if (Math.abs(p.new_wave - t.wave) > 1 && !judged)
        return { outcome: 'deferred', reason: `moving ${id} from wave ${t.wave} to ${p.new_wave} (more than one wave) needs the judge` };
      if (t.status === 'pending') {
        const limit = limitProblem(new Map([...tasks].filter(([k]) => k !== id)), [{ wave: p.new_wave }]);
        if (limit) return overLimit(limit);
      }
      return {
        outcome: 'accepted',
        tasks: [id],
        events: [domainEvent('task.reprioritized', id, actor, { old_wave: t.wave, new_wave: p.new_wave, rationale: p.rationale })],
      };
    }
  }
}
