// The primary's periodic phases (the seed's cadence, decided by periodicOverride):
// review_deferred (the judge on the oldest deferred items), evolve_goals (proposals from
// changed specs), test_integration (the harness runs the suite; an agent is paid only when
// it fails), refactor_dry and test_ui. A phase that changed files gets a maintenance task of
// its own, so the change passes the same gates and the same risk-tiered promotion.
import { isClean } from '../git/repo';
import type { RalphWorktree } from '../git/worktrees';
import { structuredOutput } from './invocation';
import type { LoopRun } from './loopRun';
import type { LoopTask } from './ports';
import type { PeriodicPhase, PhaseFact, PrimaryState } from './primaryMachine';
import { periodicPrompt } from './prompts';
import { writeProposals } from './proposalFiles';

export async function runPeriodic(
  run: LoopRun,
  phase: PeriodicPhase,
  s: PrimaryState,
  ensureWt: (reset: boolean) => Promise<RalphWorktree>,
): Promise<PhaseFact> {
  const { ctx, harness, specs } = run;
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
    const changed = await specs.changed();
    const backlog = control
      .tasks()
      .map((t) => `${t.task_id} ${t.status} ${t.title ?? ''}`)
      .slice(0, 60)
      .join('\n');
    const prompt = periodicPrompt(
      ctx.promptContext,
      phase,
      `Specs changed since the last evolve: ${changed.join(', ') || 'none'}\nBacklog:\n${backlog || '(empty)'}`,
    );
    const out = await harness.invocation.invoke(
      { agent: 'primary', role: 'primary', phase, task: null, prompt, cwd: wt.path, iteration: s.iteration },
      signal,
    );
    if (out.kind === 'ran' && out.result.status === 'success') {
      const v = structuredOutput('evolve_goals', out.result);
      if (v.ok) {
        await writeProposals(ctx, v.value.proposals, 'evolve');
        const counts = await control.processProposals();
        ctx.log('primary', 'info', `evolve_goals: ${counts.accepted} accepted, ${counts.deferred} deferred, ${counts.rejected} rejected`);
        await specs.markEvolved([...new Set([...changed, ...v.value.specs_read])]);
      } else {
        ctx.log('primary', 'warn', `evolve_goals output rejected: ${v.message}`);
        await specs.markEvolved(changed);
      }
    } else {
      await specs.markEvolved(changed);
    }
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
  await control.note('run', 'loop', 'loop.periodic_done', 'primary', { phase, at: s.counters.commitsTotal });
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
