// The primary's driver: one phase at a time, PrimaryWork runs it and reports a machine fact,
// the pure state machine (primaryMachine.ts) decides the next phase and its effects, and
// the driver applies them (block, release, lessons), says what changed (`phase.changed`),
// renders STATE.json and BACKLOG.md, and paces itself (idle waits, back-off, run limits).
import { domainEvent } from '../domain/events';
import type { RalphWorktree } from '../git/worktrees';
import type { LoopControl } from './ports';
import { recordLesson } from './lessonFiles';
import type { LoopRun } from './loopRun';
import { initialPrimaryState, transition } from '../domain/primaryMachine';
import type { Effect, PhaseFact, PrimaryState, ReflectionClass, Transition } from '../domain/primaryMachine';
import { PrimaryWork } from './primaryWork';
import { errorText } from './context';

/** `worktree`: the primary's worktree as the run's start made it (null when that failed). */
export async function runPrimary(run: LoopRun, worktree: Promise<RalphWorktree | null>): Promise<void> {
  const { ctx, lifecycle, current } = run;
  const { control, emitter } = ctx;
  const marks = control.periodicMarks();
  let s = initialPrimaryState({
    commitsTotal: control.commitsTotal(),
    lastEvolveAt: marks.evolve,
    lastDryAt: marks.dry,
    lastIntegAt: marks.integ,
    lastUiAt: marks.ui,
  });
  const work = new PrimaryWork(run, worktree);
  let idleRounds = 0;
  while (await lifecycle.proceed()) {
    if (s.phase === 'assess') {
      // Commits by workers and the judge count too (the seed's counters are per project).
      const total = control.commitsTotal();
      if (total !== s.counters.commitsTotal) s = { ...s, counters: { ...s.counters, commitsTotal: total } };
    }
    const ran = s.phase;
    let fact: PhaseFact;
    try {
      fact = await work.runPhase(s);
    } catch (e) {
      // A harness step that throws (git, store, file system) fails the step, not the loop.
      const msg = errorText(e);
      ctx.log('primary', 'error', `${ran} failed: ${msg}`);
      fact = ran === 'assess' ? { kind: 'no_work' } : { kind: 'agent_failed', error: `harness error: ${msg}` };
    }
    if (lifecycle.signal.aborted) break;
    const t = transition(s, fact);
    const failed = fact.kind === 'agent_failed' || t.state.phase === 'reflect';
    if (fact.kind === 'reflected') await noteReflection(run, s, t, fact.reflection, work);
    for (const e of t.effects) await applyEffect(run, e, work);
    if (ran !== t.state.phase || ran !== 'assess') {
      emitter.emit({
        type: 'phase.changed',
        agent: 'primary',
        from: ran,
        to: t.state.phase,
        reason: t.reason,
        taskId: t.state.taskId ?? s.taskId,
        iteration: t.state.iteration,
      });
    }
    if (t.state.taskId !== null) current.set('primary', t.state.taskId);
    else current.delete('primary');
    s = t.state;
    lifecycle.iterations++;
    await renderRunViews(control, lifecycle.iterations, s).catch(() => undefined);
    if (fact.kind === 'committed' || fact.kind === 'periodic_done') lifecycle.progress();
    const idleNow = t.effects.some((e) => e.type === 'idle');
    if (idleNow) {
      await lifecycle.idle('primary', idleRounds++);
      continue;
    }
    idleRounds = 0;
    lifecycle.busy('primary');
    if (fact.kind !== 'no_work' && !lifecycle.countOutcome(failed)) continue;
    if (t.effects.some((e) => e.type === 'backoff')) await lifecycle.wait('primary', ctx.settings.idle.baseMs);
  }
}

/** STATE.json and BACKLOG.md from the store, with the primary's state when it has one. */
export async function renderRunViews(control: LoopControl, iterations: number, s: PrimaryState | null): Promise<void> {
  const c = s?.counters;
  const marks = control.periodicMarks();
  await control.renderViews({
    iteration: iterations,
    phase: s?.phase ?? 'assess',
    current_item: s?.taskId ?? null,
    current_sub_step: s?.subStep ?? 0,
    retry_count: s?.retryCount ?? 0,
    commits_total: c?.commitsTotal ?? control.commitsTotal(),
    last_evolve_at: c?.lastEvolveAt ?? marks.evolve,
    last_dry_at: c?.lastDryAt ?? marks.dry,
    last_integ_at: c?.lastIntegAt ?? marks.integ,
    last_ui_at: c?.lastUiAt ?? marks.ui,
  });
}

/** What the machine decided after a reflection: block, release (environment), replan or retry. */
export function reflectionDecision(origin: string, t: Transition): 'retry' | 'replan' | 'block' | 'release' {
  if (t.effects.some((e) => e.type === 'block_task')) return 'block';
  if (t.effects.some((e) => e.type === 'release_task')) return 'release';
  if (t.state.phase === 'plan' && origin !== 'plan') return 'replan';
  return 'retry';
}

/**
 * Retries are visible in ralph.db: one `task.reflected` note per reflection, with the
 * machine's decision (not the model's). Not a lifecycle event: the task's status is unchanged.
 */
async function noteReflection(run: LoopRun, s: PrimaryState, t: Transition, klass: ReflectionClass, work: PrimaryWork): Promise<void> {
  const failure = s.lastFailure;
  const taskId = s.taskId;
  if (failure === null || taskId === null) return;
  const decision = reflectionDecision(failure.origin, t);
  const payload = {
    attempt: s.retryCount + 1,
    gate: failure.gate,
    origin: failure.origin,
    class: klass,
    decision,
    ...(work.lastLesson !== null ? { lesson: work.lastLesson } : {}),
  };
  await run.ctx.control
    .record([domainEvent('task.reflected', taskId, 'primary', payload)])
    .catch((e: unknown) => run.ctx.log('primary', 'warn', `task.reflected not recorded: ${String(e)}`));
}

async function applyEffect(run: LoopRun, e: Effect, work: PrimaryWork): Promise<void> {
  const { ctx } = run;
  const { control } = ctx;
  switch (e.type) {
    case 'block_task': {
      const t = control.task(e.taskId);
      if (t && t.status !== 'done' && t.status !== 'dropped' && t.status !== 'blocked') {
        await control.blockTask(e.taskId, 'primary', e.reason);
        run.lifecycle.progress();
      }
      return;
    }
    case 'release_task': {
      const t = control.task(e.taskId);
      // The harness may already have released or blocked it (no change, conflict).
      if (t && t.status === 'claimed') {
        await control.releaseTask(e.taskId, 'primary', e.reason);
      }
      return;
    }
    case 'record_lesson':
      await recordLesson(
        ctx,
        work.task,
        e.failure.gate,
        e.reflection,
        work.lastLesson ?? `${e.failure.gate} failed in ${e.failure.origin}`,
        work.lastGuardrail,
      );
      return;
    case 'idle':
    case 'backoff':
      ctx.log('primary', 'info', e.reason);
      return;
  }
}
