// The loop's prompts: a thin adapter that gathers the file inputs (core.md, the phase file
// .ralph/phases/<phase>.md, GUARDRAILS.md, review_deferred.md) and the loop's task, and calls
// the builders in src/agents/prompts, which own the content, the `RALPH-*` markers scripted
// scenarios match on, and the byte budgets. The judge gets only the task, the diff, the gate
// results and the rules: it never sees the generator's reasoning, so it judges the change, not the story.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildDecomposePrompt, buildJudgePrompt, buildPrimaryPrompt, buildWorkerPrompt } from '../agents/prompts';
import type { PromptBase, PromptTask } from '../agents/prompts';
import type { LoopTask } from './ports';

export interface PromptContext {
  readonly ralphDir: string;
  readonly domainConstraints: readonly string[];
}

/** The loop's judge keeps the diff budget it had before the builders were unified. */
const JUDGE_DIFF_BYTES = 40_000;

/**
 * A reviewer's modify, as the follow-up attempt starts: from the reviewed patch (applied in
 * the worktree) or, when it no longer applies, from scratch (`reason` says why).
 */
export type FollowUpBrief =
  | { readonly modification: string; readonly from: 'patch' }
  | { readonly modification: string; readonly from: 'scratch'; readonly reason: string };

/** A judge's modify carries its rationale too; the request is kept whole up to this size. */
const MODIFICATION_CHARS = 2000;

/** The section that tells the agent plainly what the reviewer asked and where it starts from. */
export function followUpSection(f: FollowUpBrief): string {
  const raw = f.modification.trim();
  const mod = raw.length > MODIFICATION_CHARS ? `${raw.slice(0, MODIFICATION_CHARS)}…` : raw;
  if (f.from === 'patch') {
    return `## Reviewer's change\nA reviewer asked for this change on top of the patch already in your worktree: ${mod}\nThat reviewed patch is applied (uncommitted) in your working directory: keep its work and make this change on top of it.`;
  }
  return `## Reviewer's change\nA reviewer asked for this change to this task's previous patch: ${mod}\nThat patch could not be restored in your worktree (${f.reason}), so you start from scratch: redo the task with this change included.`;
}

function withFollowUp(text: string, f: FollowUpBrief | null): string {
  return f === null ? text : `${text.replace(/\n*$/, '')}\n\n${followUpSection(f)}\n`;
}

function readOr(file: string, fallback = ''): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function base(ctx: PromptContext): PromptBase {
  return {
    core: readOr(join(ctx.ralphDir, 'core.md')),
    guardrails: readOr(join(ctx.ralphDir, 'GUARDRAILS.md')),
    constraints: ctx.domainConstraints,
  };
}

const phaseText = (ctx: PromptContext, phase: string): string => readOr(join(ctx.ralphDir, 'phases', `${phase}.md`));

function promptTask(t: LoopTask): PromptTask {
  return {
    id: t.task_id,
    title: t.title,
    status: t.status,
    source: t.source,
    effort: t.effort,
    deps: t.deps,
    wave: t.wave,
    risk_tier: t.risk_tier,
  };
}

function primary(
  ctx: PromptContext,
  phase: string,
  task: LoopTask | null,
  rest: Omit<Parameters<typeof buildPrimaryPrompt>[0], keyof PromptBase | 'phase' | 'phaseText' | 'backlog' | 'taskId'>,
): string {
  return buildPrimaryPrompt({
    ...base(ctx),
    phase,
    phaseText: phaseText(ctx, phase),
    ...(task !== null ? { backlog: [promptTask(task)], taskId: task.task_id } : {}),
    ...rest,
  }).text;
}

export function planPrompt(
  ctx: PromptContext,
  task: LoopTask,
  notes: readonly string[],
  previousError: string | null,
  followUp: FollowUpBrief | null = null,
): string {
  return withFollowUp(
    primary(ctx, 'plan', task, {
      notes,
      ...(previousError ? { rejection: previousError } : {}),
      extra: 'End with the plan JSON block (task_id, summary, steps[{id, description, files, acceptance}], files).',
    }),
    followUp,
  );
}

export function implementPrompt(
  ctx: PromptContext,
  task: LoopTask,
  step: { index: number; total: number; description: string; files: readonly string[]; acceptance: string } | null,
  failure: { gate: string; output: string } | null,
  notes: readonly string[],
  attempt = 0,
  followUp: FollowUpBrief | null = null,
): string {
  return withFollowUp(
    primary(ctx, 'implement', task, {
      key: step ? `step-${step.index + 1}` : `fix-${attempt}`,
      ...(step ? { step } : { extra: 'Fix pass: make the failing check above pass without weakening tests.' }),
      ...(failure ? { failure: { gate: failure.gate, status: 'failed', output: failure.output } } : {}),
      notes,
    }),
    followUp,
  );
}

export function reflectPrompt(
  ctx: PromptContext,
  task: LoopTask,
  failure: { gate: string; output: string; origin: string },
  retry: number,
  maxRetries: number,
): string {
  return primary(ctx, 'reflect', task, {
    key: String(retry),
    failure: { gate: failure.gate, status: 'failed', output: failure.output },
    extra: `Failure in ${failure.origin} (retry ${retry}/${maxRetries}). Classify it (transient | recoverable | environment | fundamental) and end with the reflect JSON block.`,
  });
}

export function workerPrompt(
  ctx: PromptContext,
  task: LoopTask,
  agent: string,
  failure: { gate: string; output: string } | null,
  notes: readonly string[],
  attempt = 1,
  followUp: FollowUpBrief | null = null,
): string {
  return withFollowUp(
    buildWorkerPrompt({
      ...base(ctx),
      task: promptTask(task),
      agent,
      attempt,
      notes,
      ...(failure ? { failure: { gate: failure.gate, status: 'failed', output: failure.output } } : {}),
    }).text,
    followUp,
  );
}

/** Only the task, the diff, the gate results and the rules: nothing the generator saw. */
export function judgePrompt(
  ctx: PromptContext,
  task: LoopTask,
  diff: string,
  gates: readonly { readonly gate: string; readonly status: string }[],
  rules: readonly string[],
): string {
  const instructions = readOr(join(ctx.ralphDir, 'phases', 'review_deferred.md')).trim();
  return buildJudgePrompt({
    task: promptTask(task),
    diff,
    gates,
    rules,
    deferredReason: task.deferred_reason ?? 'sensitive files (risk tier 2)',
    diffBytes: JUDGE_DIFF_BYTES,
    ...(instructions ? { instructions } : {}),
  }).text;
}

export function decomposePrompt(ctx: PromptContext, task: LoopTask, files: readonly string[]): string {
  return buildDecomposePrompt({ ...base(ctx), task: promptTask(task), files }).text;
}

export function periodicPrompt(ctx: PromptContext, phase: string, extra: string): string {
  return primary(ctx, phase, null, { extra });
}
