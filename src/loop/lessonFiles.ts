// Lessons from failed attempts, for the agents' next prompts: every reflection appends to
// `.ralph/REFLECTIONS.md`, and one that names a guardrail to `.ralph/GUARDRAILS.md` (which
// the prompt builders include). Best effort: a lesson that cannot be written never fails a task.
// An agent's words may quote a secret: what is written is redacted first.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redactText } from '../shared/redaction';
import type { HarnessContext } from './context';
import type { LoopTask } from './ports';

export interface Guardrail {
  readonly trigger: string;
  readonly instruction: string;
}

/** Lessons: REFLECTIONS.md always, GUARDRAILS.md when the reflection names one. */
export async function recordLesson(
  ctx: Pick<HarnessContext, 'ralphDir' | 'clock'>,
  task: LoopTask | null,
  gate: string,
  klass: string,
  lesson: string,
  guardrail: Guardrail | null,
): Promise<void> {
  const ts = new Date(ctx.clock.now()).toISOString();
  const id = task?.task_id ?? '-';
  await appendFile(join(ctx.ralphDir, 'REFLECTIONS.md'), redactText(`\n## ${ts} ${id} (${gate}, ${klass})\n${lesson.trim()}\n`)).catch(
    () => undefined,
  );
  if (guardrail) {
    await appendFile(
      join(ctx.ralphDir, 'GUARDRAILS.md'),
      redactText(`\n- **${guardrail.trigger.trim()}** → ${guardrail.instruction.trim()} (${id}, ${ts.slice(0, 10)})\n`),
    ).catch(() => undefined);
  }
}
