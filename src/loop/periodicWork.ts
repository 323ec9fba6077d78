// The primary's periodic phases (the seed's cadence, decided by periodicOverride):
// review_deferred (the judge on the oldest deferred items), evolve_goals (proposals from
// changed specs), test_integration (the harness runs the suite; an agent is paid only when
// it fails), refactor_dry and test_ui. A phase that changed files gets a maintenance task of
// its own, so the change passes the same gates and the same risk-tiered promotion.
import { domainEvent } from '../domain/events';
import { isClean } from '../git/repo';
import { resetWorktree } from '../git/worktrees';
import type { RalphWorktree } from '../git/worktrees';
import { structuredOutput } from './invocation';
import type { LoopRun } from './loopRun';
import type { LoopTask } from './ports';
import type { PeriodicPhase, PhaseFact, PrimaryState } from '../domain/primaryMachine';
import { periodicPrompt } from './prompts';
import { writeProposals } from './proposalFiles';
import { errorText } from './context';
import type { PhaseOutput } from '../domain/phaseOutputs';

export async function runPeriodic(
  run: LoopRun,
  phase: PeriodicPhase,
  s: PrimaryState,
  ensureWt: (reset: boolean) => Promise<RalphWorktree>,
): Promise<PhaseFact> {
  const { ctx, harness } = run;
  const { control, settings, branch } = ctx;
  const signal = run.lifecycle.signal;
  if (phase === 'review_deferred') {
    const deferred = control
      .tasks()
      .filter((t) => t.status === 'deferred')
      .sort((a, b) => (a.deferred_at ?? '').localeCompare(b.deferred_at ?? ''));
    for (const t of deferred.slice(0, 5)) {
      if (signal.aborted) break;
      await harness.judge.review(t, signal);
    }
    return { kind: 'periodic_done', phase };
  }
  const wt = await ensureWt(true);
  if (phase === 'evolve_goals') {
    await evolveGoals(run, s, wt);
  } else {
    let extra = `Recent work is on ${branch}.`;
    let runAgent = true;
    if (phase === 'test_integration') {
      // The harness runs the suite itself; an agent is only paid for when it fails.
      const [r] = await harness.verification.gates('primary', null, [settings.integrationGate], wt.path, signal);
      runAgent = r !== undefined && !r.ok;
      if (r && !r.ok)
        extra = `The full test suite fails on ${branch}. Fix it.\nOutput (tail):\n\`\`\`\n${r.outputTail.slice(-2500)}\n\`\`\``;
    }
    if (runAgent && !signal.aborted) {
      const prompt = periodicPrompt(ctx.promptContext, phase, extra);
      const out = await harness.invocation.invoke(
        { agent: 'primary', role: 'primary', phase, task: null, prompt, cwd: wt.path, iteration: s.iteration },
        signal,
      );
      if (out.kind === 'ran' && out.result.status === 'success' && !signal.aborted) await maintenance(run, phase, wt, out.result.text);
    }
  }
  await control.record([domainEvent('loop.periodic_done', 'loop', 'primary', { phase, at: s.counters.commitsTotal })]);
  return { kind: 'periodic_done', phase };
}

/**
 * A periodic phase that changed files (refactor_dry, a test fix) gets a task of its own,
 * so its change goes through the same gates and the same risk-tiered promotion.
 */
async function maintenance(run: LoopRun, phase: PeriodicPhase, wt: RalphWorktree, text: string): Promise<void> {
  const { ctx, harness } = run;
  const { control } = ctx;
  const signal = run.lifecycle.signal;
  const summary = (text.split('\n').find((l) => l.trim().length > 0) ?? phase).replace(/[`{}"]/g, '').slice(0, 80);
  const id = `MAINT-${new Date(ctx.clock.now())
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14)}`;
  const probe: LoopTask = {
    task_id: id,
    status: 'claimed',
    title: `${phase}: ${summary}`,
    source: 'harness',
    effort: 'S',
    deps: '-',
    wave: 0,
    risk_tier: 1,
    claimed_by: 'primary',
    patch_id: null,
    deferred_reason: null,
    deferred_at: null,
  };
  if (await isClean(wt.path)) return;
  const v = await harness.verification.verify('primary', probe, wt.path, wt.base, signal);
  if (v.patch?.isEmpty === true) return;
  if (v.restricted !== undefined) {
    // A maintenance change may not touch secrets or Ralph's own files: dropped, nothing kept.
    await resetWorktree(wt.path, wt.base);
    ctx.log('primary', 'warn', `${phase} change dropped: ${v.restricted.risk.reasons.join('; ')}`);
    return;
  }
  await control.createTask({ id, title: probe.title ?? phase, source: 'harness', effort: 'S', wave: 0 }, 'primary');
  await control.claimTask(id, 'primary');
  const failed = v.gates.find((g) => !g.ok);
  if (failed || v.patch === null) {
    const why = `${phase} change fails the ${failed?.gate ?? 'verify'} gate; left for a later attempt`;
    await control.releaseTask(id, 'primary', why);
    ctx.log('primary', 'warn', `${id}: ${why}`);
    return;
  }
  const task = control.task(id) ?? probe;
  await harness.promotion.promote({ agent: 'primary', task, worktree: wt.path, base: wt.base, patch: v.patch, gates: v.gates }, signal);
}

/** Why an evolve_goals run did not give a valid answer, or null when it did (with the answer). */
type EvolveAnswer = { ok: true; value: PhaseOutput<'evolve_goals'> } | { ok: false; reason: string } | { ok: false; stopped: true };

async function askEvolve(run: LoopRun, s: PrimaryState, wt: RalphWorktree, changed: readonly string[]): Promise<EvolveAnswer> {
  const { ctx, harness } = run;
  const backlog = ctx.control
    .tasks()
    .map((t) => `${t.task_id} ${t.status} ${t.title ?? ''}`)
    .slice(0, 60)
    .join('\n');
  const prompt = periodicPrompt(
    ctx.promptContext,
    'evolve_goals',
    `Specs changed since the last evolve: ${changed.join(', ') || 'none'}\nBacklog:\n${backlog || '(empty)'}`,
  );
  const out = await harness.invocation.invoke(
    { agent: 'primary', role: 'primary', phase: 'evolve_goals', task: null, prompt, cwd: wt.path, iteration: s.iteration },
    run.lifecycle.signal,
  );
  if (out.kind === 'stopped' || run.lifecycle.signal.aborted) return { ok: false, stopped: true };
  if (out.kind === 'budget') return { ok: false, reason: `budget: ${out.message}` };
  if (out.kind === 'incident') return { ok: false, reason: out.message };
  const r = out.result;
  if (r.status !== 'success') {
    const detail = r.errors[0] ?? r.stderrTail.trim().split('\n').pop() ?? '';
    return {
      ok: false,
      reason: `the agent ${r.status}${r.exitCode !== null ? ` (exit ${r.exitCode})` : ''}${detail ? `: ${detail}` : ''}`,
    };
  }
  const v = structuredOutput('evolve_goals', r);
  return v.ok ? v : { ok: false, reason: `its answer is not valid: ${v.message}` };
}

/**
 * evolve_goals: the agent reads the changed specs and answers with proposals, which the
 * control plane processes. Only a valid answer marks the specs read (`spec.evolved`); a
 * failed run leaves them unread, is recorded with its reason (`spec.evolve_failed`, a
 * warning in the log) and is tried again after a back-off.
 */
async function evolveGoals(run: LoopRun, s: PrimaryState, wt: RalphWorktree): Promise<void> {
  const { ctx, specs, evolveRetry } = run;
  const { control } = ctx;
  const changed = await specs.changed();
  let answer: EvolveAnswer;
  try {
    answer = await askEvolve(run, s, wt, changed);
  } catch (e) {
    answer = { ok: false, reason: `harness error: ${errorText(e)}` };
  }
  if ('stopped' in answer) return;
  if (answer.ok) {
    try {
      await writeProposals(ctx, answer.value.proposals, 'evolve');
      const counts = await control.processProposals();
      const read = [...new Set([...changed, ...answer.value.specs_read])];
      await specs.markEvolved(read);
      await control.record([domainEvent('spec.evolved', 'evolve', 'primary', { specs: read, ...counts })]);
      evolveRetry.succeeded();
      ctx.log('primary', 'info', `evolve_goals: ${counts.accepted} accepted, ${counts.deferred} deferred, ${counts.rejected} rejected`);
      return;
    } catch (e) {
      answer = { ok: false, reason: `its proposals could not be processed: ${errorText(e)}` };
    }
  }
  // One bounded line: validation messages come one issue per line, and an answer can be huge.
  const oneLine = answer.reason.replace(/\s*\n\s*/g, '; ');
  const reason = oneLine.length > 1000 ? `${oneLine.slice(0, 1000)}…` : oneLine;
  const failures = (control.evolveFailures?.() ?? 0) + 1;
  const delayMs = evolveRetry.failed(failures);
  const retryAt = new Date(ctx.clock.now() + delayMs).toISOString();
  await control
    .record([domainEvent('spec.evolve_failed', 'evolve', 'primary', { reason, attempt: failures, specs: [...changed], retry_at: retryAt })])
    .catch((e: unknown) => ctx.log('primary', 'warn', `spec.evolve_failed not recorded: ${errorText(e)}`));
  ctx.log(
    'primary',
    'warn',
    `evolve_goals failed (attempt ${failures}): ${reason}; ${changed.length ? `${changed.join(', ')} stay unread` : 'nothing is marked read'}; next attempt in ${delayMs < 1000 ? `${delayMs} ms` : `${Math.round(delayMs / 1000)} s`}`,
  );
}
