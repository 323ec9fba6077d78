// The workers: each claims a small ready task atomically and works it in its own worktree,
// one full-cycle invocation per attempt, the harness's gates after each, promotion by tier
// when they pass. Each failed attempt is a `task.reflected` note with the decision taken
// from the machine facts (domain attemptDecision): retry, block, or release when a tool the
// gates need is missing (no model call can fix that; the worker backs off before claiming).
import { attemptDecision, classifyAttemptFailure, lessonLine } from '../domain/task';
import type { AttemptFailure } from '../domain/task';
import { domainEvent } from '../domain/events';
import { ensureWorktree } from '../git/worktrees';
import { errorText } from './context';
import type { AgentName } from './events';
import { startFollowUp } from './followUp';
import { IdenticalFailureTracker } from './guards';
import { recordLesson } from './lessonFiles';
import type { LoopRun } from './loopRun';
import type { LoopTask } from './ports';
import { workerPrompt } from './prompts';
import { backoffDelayMs } from './sleep';

/** A task released for a missing tool this many times is blocked: each attempt is paid for. */
const ENV_RELEASES_BEFORE_BLOCK = 2;

export class WorkerCycle {
  /** Environment failures in a row, per worker (back-off before the next claim). */
  private readonly envBackoff = new Map<AgentName, number>();
  /** Environment releases per task this run (blocked at ENV_RELEASES_BEFORE_BLOCK). */
  private readonly envReleases = new Map<string, number>();

  /** @param worktreesAfter settled once the primary's worktree is made: workers' come after it. */
  constructor(
    private readonly run: LoopRun,
    private readonly worktreesAfter: Promise<unknown> = Promise.resolve(),
  ) {}

  /** One worker's loop: claim, work, repeat until the run stops. */
  async runWorker(name: AgentName): Promise<void> {
    const { ctx, lifecycle, inbox, current } = this.run;
    const { control, settings } = ctx;
    let idleRounds = 0;
    while (await lifecycle.proceed()) {
      await inbox.consume();
      const task = await control.claimReadyTask(name, 'worker', { exclude: [...current.values()], efforts: settings.workerEfforts });
      if (task === null) {
        await lifecycle.idle(name, idleRounds++);
        continue;
      }
      idleRounds = 0;
      lifecycle.busy(name);
      current.set(name, task.task_id);
      const envFailures = this.envBackoff.get(name) ?? 0;
      try {
        const ok = await this.workTask(name, task);
        if (ok) this.envBackoff.delete(name);
        if (lifecycle.countOutcome(!ok) && (this.envBackoff.get(name) ?? 0) > envFailures) {
          // Released for a missing tool: claiming again at once would only fail again.
          const ms = backoffDelayMs(envFailures);
          ctx.log(name, 'info', `environment failure: waiting ${Math.round(ms / 1000)} s before claiming again`);
          await ctx.clock.sleep(ms, lifecycle.signal).catch(() => undefined);
        }
      } catch (e) {
        const msg = errorText(e);
        ctx.log(name, 'error', `${task.task_id} failed in the harness: ${msg}`);
        const now = control.task(task.task_id);
        if (now?.status === 'claimed') await control.releaseTask(task.task_id, name, `harness error: ${msg}`).catch(() => undefined);
        lifecycle.countOutcome(true);
      } finally {
        current.delete(name);
        lifecycle.progress();
      }
    }
  }

  /**
   * One worker task: one full-cycle invocation per attempt, gates by the harness, promotion.
   * Each failed attempt is a `task.reflected` note (origin worker, the class from the
   * machine facts: domain classifyAttemptFailure); giving up records the lesson too.
   */
  private async workTask(name: AgentName, task: LoopTask): Promise<boolean> {
    const { ctx, harness } = this.run;
    const { control, settings } = ctx;
    const signal = this.run.lifecycle.signal;
    await this.worktreesAfter;
    const wt = await ensureWorktree(ctx.projectDir, { name, branch: ctx.branch });
    const followUp = await startFollowUp(ctx, name, task, wt);
    const tracker = new IdenticalFailureTracker();
    let failure: { gate: string; output: string } | null = null;
    for (let attempt = 1; ; attempt++) {
      if (signal.aborted) return false;
      const prompt = workerPrompt(ctx.promptContext, task, name, failure, control.retryNotes(task.task_id), attempt, followUp);
      const out = await harness.invocation.invoke(
        { agent: name, role: 'worker', phase: 'worker', task, prompt, cwd: wt.path, iteration: attempt - 1 },
        signal,
      );
      if (signal.aborted || out.kind === 'stopped') return false;
      if (out.kind === 'budget') {
        await control.releaseTask(task.task_id, name, out.message);
        if (out.scope === 'task') await control.blockTask(task.task_id, name, out.message);
        return false;
      }
      if (out.kind === 'incident') {
        // Its work is gone (the worktree was removed): no retry, the task waits for a human.
        await control.releaseTask(task.task_id, name, out.message);
        return this.blockTask(name, task.task_id, out.message);
      }
      let facts: AttemptFailure;
      if (out.result.status !== 'success') {
        failure = { gate: 'agent', output: `${out.result.status}: ${out.result.errors.join('; ') || out.result.stderrTail}` };
        facts = { kind: 'agent', status: out.result.status, stopReason: out.result.stopReason };
      } else {
        const v = await harness.verification.verify(name, task, wt.path, wt.base, signal);
        if (signal.aborted) return false;
        if (v.restricted !== undefined) {
          await harness.promotion.refuse(task, name, v.restricted.risk, v.restricted.files, { worktree: wt.path, base: wt.base }, signal);
          return false;
        }
        const failed = v.gates.find((g) => !g.ok);
        if (!failed && v.patch !== null) {
          const r = await harness.promotion.promote(
            { agent: name, task, worktree: wt.path, base: wt.base, patch: v.patch, gates: v.gates },
            signal,
          );
          return r.kind !== 'conflict' && r.kind !== 'no_change';
        }
        failure = { gate: failed?.gate ?? 'verify', output: failed?.outputTail ?? '' };
        facts = { kind: 'gate', gate: failure.gate, status: failed?.status ?? 'failed', exitCode: failed?.exitCode ?? null };
      }
      const identical = tracker.record(task.task_id, failure.gate, failure.output);
      const klass = classifyAttemptFailure(facts);
      const decision = attemptDecision(attempt, settings.maxRetries, identical, klass);
      const lesson = lessonLine(failure.gate, failure.output);
      await control
        .record([
          domainEvent('task.reflected', task.task_id, name, {
            attempt,
            gate: failure.gate,
            origin: 'worker',
            class: klass,
            decision,
            lesson,
          }),
        ])
        .catch((e: unknown) => ctx.log(name, 'warn', `task.reflected not recorded: ${String(e)}`));
      if (decision === 'release' && (this.envReleases.get(task.task_id) ?? 0) + 1 >= ENV_RELEASES_BEFORE_BLOCK) {
        // Every agent that took it hit the same missing tool: stop paying for attempts.
        const reason = `${failure.gate} could not run (${lesson}) in ${ENV_RELEASES_BEFORE_BLOCK} attempts; fix the environment, then unblock the task`;
        await recordLesson(ctx, task, failure.gate, klass, reason, null);
        return this.blockTask(name, task.task_id, reason);
      }
      if (decision === 'release') {
        // A tool the gates need is missing: no model call can fix that. The task goes back
        // for when the environment is fixed; this worker backs off before claiming again.
        this.envReleases.set(task.task_id, (this.envReleases.get(task.task_id) ?? 0) + 1);
        const reason = `${failure.gate} could not run in ${wt.path} (${lesson}); fix the environment — released, not retried`;
        await recordLesson(ctx, task, failure.gate, klass, reason, null);
        await control.releaseTask(task.task_id, name, reason);
        this.envBackoff.set(name, (this.envBackoff.get(name) ?? 0) + 1);
        return false;
      }
      if (decision === 'block') {
        const reason = identical
          ? `identical ${failure.gate} failure twice; not retrying the same way`
          : `${settings.maxRetries} retries exhausted: ${failure.gate} failed`;
        await recordLesson(ctx, task, failure.gate, klass, `${reason} (worker ${name}, attempt ${attempt}).\nLast output: ${lesson}`, null);
        return this.blockTask(name, task.task_id, reason);
      }
      ctx.log(name, 'info', `${task.task_id}: ${failure.gate} failed (attempt ${attempt}/${settings.maxRetries + 1}, ${klass}); retrying`);
    }
  }

  private async blockTask(name: AgentName, taskId: string, reason: string): Promise<boolean> {
    await this.run.ctx.control.blockTask(taskId, name, reason);
    return false;
  }
}
