// The independent judge for a deferred (tier-2) patch: a separate invocation, in an empty
// folder, that sees only the task, the diff, the gate results and the rules, and returns a
// verdict the harness validates with zod. Approve promotes the patch (late promotion),
// reject and modify go back to the task with the rationale. A human deciding the same task
// meanwhile ends the judge's process and the human's word stands.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { judgeRoot } from '../git/repoCache';
import { join } from 'node:path';
import type { HarnessContext } from './context';
import { structuredOutput } from './invocation';
import type { Invocation } from './invocation';
import type { LatePromotion } from './latePromotion';
import type { LoopTask } from './ports';
import { judgePrompt } from './prompts';

export type JudgeOutcome = 'approve' | 'reject' | 'modify' | 'invalid' | 'skipped';

export interface ReviewOptions {
  /** The diff to judge when the patch's recorded file is on another machine (team mode: fetched from its ref). */
  readonly patchFile?: string;
  /** False: an approval only resolves the deferral; the caller promotes (team mode's promoter does, on the remote). */
  readonly promote?: boolean;
}

export class Judge {
  /** Judge invocations in flight (taskId -> its abort), so a human decision can end them. */
  private readonly judging = new Map<string, AbortController>();

  constructor(
    private readonly ctx: HarnessContext,
    private readonly invocation: Invocation,
    private readonly late: LatePromotion,
  ) {}

  /**
   * A human decided a deferred item: a judge still reviewing it is aborted (its process
   * group ends) and its verdict, if any arrives, is ignored. True when one was running.
   */
  cancel(taskId: string, reason: string): boolean {
    const c = this.judging.get(taskId);
    if (c === undefined || c.signal.aborted) return false;
    this.ctx.log('judge', 'info', `judge for ${taskId} cancelled: ${reason}`);
    c.abort(new Error(reason));
    return true;
  }

  /** Reviews one deferred task; the verdict is resolved in the store before it returns. */
  async review(task: LoopTask, signal: AbortSignal, o: ReviewOptions = {}): Promise<JudgeOutcome> {
    const { control } = this.ctx;
    const patch =
      control.patches(task.task_id).find((p) => p.patch_id === task.patch_id) ??
      control
        .patches(task.task_id)
        .filter((p) => p.status === 'queued')
        .pop();
    const file = o.patchFile ?? patch?.patch_path;
    if (!patch || !file) {
      this.ctx.log('judge', 'warn', `deferred ${task.task_id} has no patch to review`);
      return 'skipped';
    }
    let diff: string;
    try {
      diff = await readFile(file, 'utf8');
    } catch {
      await control.resolveDeferred(task.task_id, 'reject', 'judge', `the patch file ${file} is missing; redo the task`);
      return 'reject';
    }
    const gates = control.gateResults(patch.patch_id);
    const rules = [...this.ctx.settings.domainConstraints, 'Sensitive paths (auth, migrations, data) need tests and no weakened checks.'];
    // The judge works in an empty folder: it reviews the diff it is given, nothing else.
    const root = await judgeRoot(this.ctx.projectDir);
    await mkdir(root, { recursive: true });
    const cwd = await mkdtemp(join(root, 'review-'));
    // Its own abort, tied to the loop's: a human decision on this task ends only this judge.
    const own = new AbortController();
    const onStop = (): void => own.abort(signal.reason);
    if (signal.aborted) own.abort(signal.reason);
    else signal.addEventListener('abort', onStop, { once: true });
    this.judging.set(task.task_id, own);
    const out = await this.invocation
      .invoke(
        {
          agent: 'judge',
          role: 'judge',
          phase: 'review_deferred',
          task,
          prompt: judgePrompt(this.ctx.promptContext, task, diff, gates, rules),
          cwd,
          iteration: 0,
        },
        own.signal,
      )
      .finally(() => {
        signal.removeEventListener('abort', onStop);
        if (this.judging.get(task.task_id) === own) this.judging.delete(task.task_id);
        return rm(cwd, { recursive: true, force: true });
      });
    // Cancelled for a human's decision: the human's word stands, whatever the judge said.
    if (own.signal.aborted && !signal.aborted) return 'skipped';
    if (out.kind === 'incident') {
      // The verdict of a judge that reached outside its folder is not taken.
      if (control.task(task.task_id)?.status === 'deferred') {
        await control.blockTask(task.task_id, 'judge', out.message);
      }
      return 'invalid';
    }
    if (out.kind !== 'ran' || out.result.status !== 'success') return 'invalid';
    const v = structuredOutput('review_deferred', out.result);
    if (!v.ok || v.value.task_id !== task.task_id) {
      this.ctx.log(
        'judge',
        'warn',
        `judge verdict for ${task.task_id} rejected by the harness: ${v.ok ? `task_id ${v.value.task_id}` : v.message}`,
      );
      return 'invalid';
    }
    // A human may have decided while the judge ran: the human wins.
    if (control.task(task.task_id)?.status !== 'deferred') return 'skipped';
    const { verdict, rationale, confidence } = v.value;
    const text = verdict === 'modify' ? `${rationale}\nRequired change: ${v.value.modification ?? ''}` : rationale;
    await control.resolveDeferred(task.task_id, verdict, 'judge', text, confidence);
    if (verdict === 'approve' && o.promote !== false) await this.late.promoteApproved(task.task_id, 'judge', signal);
    return verdict;
  }
}
