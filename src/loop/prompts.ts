// Prompt assembly for the loop's invocations: the phase file (.ralph/phases/<phase>.md),
// core.md, recent guardrails, the task, and only the facts the phase needs (plan step,
// failing gate tail, judge notes). The judge's prompt deliberately holds only the task,
// the diff, the gate results and the rules (generator/judge separation, defect 11).
// Each prompt starts with machine-readable markers (`RALPH-PHASE:`, `RALPH-TASK:`) so
// scripted scenarios and logs can tell invocations apart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoopTask } from './ports';

export interface PromptContext {
  readonly ralphDir: string;
  readonly domainConstraints: readonly string[];
}

function readOr(file: string, fallback = ''): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

/** The last `max` bytes of a text, from a line start. */
function tailText(text: string, max: number): string {
  if (text.length <= max) return text;
  const t = text.slice(-max);
  const nl = t.indexOf('\n');
  return nl >= 0 ? t.slice(nl + 1) : t;
}

function taskBlock(t: LoopTask): string {
  return [`Task ${t.task_id}: ${t.title ?? '(untitled)'}`, `source ${t.source ?? '-'} · effort ${t.effort ?? '-'} · wave ${t.wave} · deps ${t.deps ?? '-'}`].join('\n');
}

/** `RALPH-KEY: <phase>/<task>/<step>/` names the invocation exactly (scenarios match on it). */
function header(phase: string, task: LoopTask | null, agent: string, step = ''): string {
  const id = task?.task_id ?? '-';
  return `RALPH-PHASE: ${phase}\nRALPH-AGENT: ${agent}\nRALPH-TASK: ${id}\nRALPH-KEY: ${phase}/${id}/${step ? `${step}/` : ''}\n`;
}

function common(ctx: PromptContext, phase: string): string {
  const parts: string[] = [];
  const core = readOr(join(ctx.ralphDir, 'core.md')).trim();
  if (core) parts.push(core);
  if (ctx.domainConstraints.length > 0) parts.push(`Domain constraints:\n${ctx.domainConstraints.map((c) => `- ${c}`).join('\n')}`);
  const guard = tailText(readOr(join(ctx.ralphDir, 'GUARDRAILS.md')).trim(), 1200);
  if (guard && guard.split('\n').length > 1) parts.push(`Guardrails (recent):\n${guard}`);
  const phaseFile = readOr(join(ctx.ralphDir, 'phases', `${phase}.md`)).trim();
  if (phaseFile) parts.push(phaseFile);
  return parts.join('\n\n');
}

function failureBlock(gate: string, output: string): string {
  return `The ${gate} check failed. Output (tail):\n\`\`\`\n${tailText(output, 2500)}\n\`\`\``;
}

function notesBlock(notes: readonly string[]): string {
  return notes.length === 0 ? '' : `Notes from earlier reviews of this task (address them):\n${notes.map((n) => `- ${n}`).join('\n')}`;
}

const joinParts = (parts: readonly string[]): string => parts.filter((p) => p.trim().length > 0).join('\n\n') + '\n';

export function planPrompt(ctx: PromptContext, task: LoopTask, notes: readonly string[], previousError: string | null): string {
  return joinParts([
    header('plan', task, 'primary'),
    common(ctx, 'plan'),
    taskBlock(task),
    notesBlock(notes),
    previousError ? `Your previous plan was rejected by the harness:\n${previousError}` : '',
    'End with the plan JSON block (task_id, summary, steps[{id, description, files, acceptance}], files).',
  ]);
}

export function implementPrompt(
  ctx: PromptContext,
  task: LoopTask,
  step: { index: number; total: number; description: string; files: readonly string[]; acceptance: string } | null,
  failure: { gate: string; output: string } | null,
  notes: readonly string[],
  attempt = 0,
): string {
  return joinParts([
    header('implement', task, 'primary', step ? `step-${step.index + 1}` : `fix-${attempt}`),
    common(ctx, 'implement'),
    taskBlock(task),
    notesBlock(notes),
    step
      ? `Sub-step ${step.index + 1}/${step.total}: ${step.description}\nFiles: ${step.files.join(', ') || '-'}\nAcceptance: ${step.acceptance}`
      : 'Fix pass: make the failing check below pass without weakening tests.',
    failure ? failureBlock(failure.gate, failure.output) : '',
  ]);
}

export function reflectPrompt(ctx: PromptContext, task: LoopTask, failure: { gate: string; output: string; origin: string }, retry: number, maxRetries: number): string {
  return joinParts([
    header('reflect', task, 'primary', String(retry)),
    common(ctx, 'reflect'),
    taskBlock(task),
    `Failure in ${failure.origin} (retry ${retry}/${maxRetries}).`,
    failureBlock(failure.gate, failure.output),
    'Classify it (transient | recoverable | environment | fundamental) and end with the reflect JSON block.',
  ]);
}

export function workerPrompt(ctx: PromptContext, task: LoopTask, agent: string, failure: { gate: string; output: string } | null, notes: readonly string[], attempt = 1): string {
  return joinParts([
    header('worker', task, agent, `attempt-${attempt}`),
    readOr(join(ctx.ralphDir, 'core.md')).trim(),
    ctx.domainConstraints.length > 0 ? `Domain constraints:\n${ctx.domainConstraints.map((c) => `- ${c}`).join('\n')}` : '',
    taskBlock(task),
    notesBlock(notes),
    'Plan, implement and verify this task in this working directory, in one pass. Do not commit; the harness captures your change, runs the build, tests, lint and forbidden-pattern gates itself and promotes it.',
    failure ? `Your previous attempt failed a gate; fix it.\n${failureBlock(failure.gate, failure.output)}` : '',
  ]);
}

/** Only the task, the diff, the gate results and the rules: nothing the generator saw. */
export function judgePrompt(ctx: PromptContext, task: LoopTask, diff: string, gates: readonly { readonly gate: string; readonly status: string }[], rules: readonly string[]): string {
  const maxDiff = 40_000;
  const shown = diff.length > maxDiff ? `${diff.slice(0, maxDiff)}\n[diff truncated: ${diff.length - maxDiff} more bytes]` : diff;
  return joinParts([
    header('review_deferred', task, 'judge'),
    readOr(join(ctx.ralphDir, 'phases', 'review_deferred.md')).trim() ||
      'You are an independent reviewer. Decide whether this change may land on the main branch.',
    taskBlock(task),
    `Why it was deferred: ${task.deferred_reason ?? 'sensitive files (risk tier 2)'}`,
    `Gate results: ${gates.map((g) => `${g.gate}=${g.status}`).join(', ') || 'none recorded'}`,
    rules.length > 0 ? `Rules:\n${rules.map((r) => `- ${r}`).join('\n')}` : '',
    `Diff:\n\`\`\`diff\n${shown}\n\`\`\``,
    'End with the verdict JSON block: {"task_id", "verdict": "approve"|"reject"|"modify", "rationale", "confidence", "modification"?}.',
  ]);
}

export function decomposePrompt(ctx: PromptContext, task: LoopTask, files: readonly string[]): string {
  return joinParts([
    header('decompose', task, 'primary'),
    common(ctx, 'evolve_goals'),
    taskBlock(task),
    `This change touched restricted files (risk tier 3): ${files.join(', ')}. Split the task into smaller tasks, each touching no restricted file where possible.`,
    `End with the evolve_goals JSON block whose proposals hold one "decompose" proposal with parent_task "${task.task_id}".`,
  ]);
}

export function periodicPrompt(ctx: PromptContext, phase: string, extra: string): string {
  return joinParts([header(phase, null, 'primary'), common(ctx, phase), extra]);
}
