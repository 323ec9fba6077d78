// Tier 3: a patch too risky to promote or to judge is not landed; an agent proposes
// smaller tasks instead (decompose proposals, through processProposals and its policy).
// The parent is dropped only when they are accepted; otherwise it is blocked with why.
import type { HarnessContext } from './context';
import { structuredOutput } from './invocation';
import type { Invocation } from './invocation';
import type { LoopTask } from './ports';
import { decomposePrompt } from './prompts';
import { writeProposals } from './proposalFiles';

export class Decomposition {
  constructor(
    private readonly ctx: HarnessContext,
    private readonly invocation: Invocation,
  ) {}

  /** Returns how many sub-tasks the control plane accepted. */
  async decompose(task: LoopTask, files: readonly string[], cwd: string, signal: AbortSignal): Promise<number> {
    const { control } = this.ctx;
    const out = await this.invocation.invoke(
      {
        agent: 'primary',
        role: 'primary',
        phase: 'decompose',
        task,
        prompt: decomposePrompt(this.ctx.promptContext, task, files),
        cwd,
        iteration: 0,
      },
      signal,
    );
    let accepted = 0;
    if (out.kind === 'incident') {
      const now = control.task(task.task_id);
      if (now && now.status !== 'done' && now.status !== 'dropped' && now.status !== 'blocked') {
        await control.blockTask(task.task_id, 'primary', out.message);
      }
      return 0;
    }
    if (out.kind === 'ran' && out.result.status === 'success') {
      const parsed = structuredOutput('evolve_goals', out.result);
      if (parsed.ok) {
        await writeProposals(
          this.ctx,
          parsed.value.proposals.filter((p) => p.proposal_type === 'decompose'),
          `decompose_${task.task_id}`,
        );
        accepted = (await control.processProposals()).accepted;
      } else {
        this.ctx.log('primary', 'warn', `decompose output for ${task.task_id} invalid: ${parsed.message}`);
      }
    }
    const now = control.task(task.task_id);
    if (now && now.status !== 'done' && now.status !== 'dropped') {
      const why = `risk tier 3 (${files.join(', ')}): decomposition not accepted yet`;
      await control.blockTask(task.task_id, 'primary', why);
    }
    return accepted;
  }
}
