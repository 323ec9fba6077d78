// The primary's phases, one invocation or harness step each, reporting the machine fact the
// state machine decides on: assess (inbox, waiting promotions, expiry, the periodic
// override, claim), plan (structured steps), implement (a step, then the build gate), verify
// (the harness's gates), reflect (a classified lesson), commit (promotion by tier). The
// periodic phases are periodicWork.ts. PrimaryWork keeps the current task's working state.
import type { CapturedPatch } from '../git/capture';
import { branchTip } from '../git/repo';
import { ensureWorktree } from '../git/worktrees';
import type { RalphWorktree } from '../git/worktrees';
import type { PhaseOutput } from '../domain/phaseOutputs';
import { startFollowUp } from './followUp';
import type { GateResult } from './gates';
import { IdenticalFailureTracker } from './guards';
import { structuredOutput } from './invocation';
import type { Guardrail } from './lessonFiles';
import type { LoopRun } from './loopRun';
import { runPeriodic } from './periodicWork';
import type { LoopTask } from './ports';
import { periodicOverride } from '../domain/primaryMachine';
import type { CommitOutcome, PhaseFact, PrimaryState, ReflectionClass } from '../domain/primaryMachine';
import type { PromotionOutcome } from './promotion';
import { implementPrompt, planPrompt, reflectPrompt } from './prompts';
import type { FollowUpBrief } from './prompts';

type PlanValue = PhaseOutput<'plan'>;

const COMMIT_OUTCOME: Record<PromotionOutcome['kind'], CommitOutcome> = {
  promoted: 'promoted',
  deferred: 'deferred',
  decomposed: 'decomposed',
  waiting: 'waiting',
  no_change: 'no_change',
  conflict: 'conflict',
  abandoned: 'abandoned',
  blocked: 'blocked',
};

/** Runs one primary phase and reports the machine fact (the machine picks what is next). */
export class PrimaryWork {
  task: LoopTask | null = null;
  private wt: RalphWorktree | null = null;
  private plan: PlanValue | null = null;
  private planError: string | null = null;
  private patch: CapturedPatch | null = null;
  private gates: GateResult[] = [];
  /**
   * The build gate that passed on the worktree as the last implement left it. The machine
   * goes from there straight to verify, which then does not build the same files again; any
   * other phase may change the worktree, so it is forgotten before each.
   */
  private built: GateResult | null = null;
  /** A reviewer's modify this task's attempt builds on (set when its worktree is prepared). */
  private followUp: FollowUpBrief | null = null;
  private readonly tracker = new IdenticalFailureTracker();
  lastLesson: string | null = null;
  lastGuardrail: Guardrail | null = null;

  /**
   * @param started the worktree the run's start made, not yet used: the first phase that
   *   needs a fresh worktree takes it as it is while the branch is still at its base.
   */
  constructor(
    private readonly run: LoopRun,
    private started: Promise<RalphWorktree | null> | null = null,
  ) {}

  async runPhase(s: PrimaryState): Promise<PhaseFact> {
    const built = this.built;
    this.built = null;
    switch (s.phase) {
      case 'assess':
        return this.assess(s);
      case 'plan':
        return this.planPhase(s);
      case 'implement':
        return this.implement(s);
      case 'verify':
        return this.verify(built);
      case 'reflect':
        return this.reflect(s);
      case 'commit':
        return this.commit();
      default:
        return runPeriodic(this.run, s.phase, s, (reset) => this.ensureWt(reset));
    }
  }

  private async assess(s: PrimaryState): Promise<PhaseFact> {
    const { ctx, harness, inbox, specs, current } = this.run;
    const { control, settings, clock } = ctx;
    await inbox.consume();
    await harness.late.retryWaiting();
    const expired = await control.expireStaleDeferrals();
    if (expired > 0) ctx.log('primary', 'info', `expired ${expired} stale deferral(s)`);
    const tasks = control.tasks();
    const deferred = tasks.filter((t) => t.status === 'deferred');
    const oldest = deferred.reduce<number | null>((m, t) => {
      const at = t.deferred_at ? Date.parse(t.deferred_at) : NaN;
      return Number.isNaN(at) ? m : m === null ? at : Math.min(m, at);
    }, null);
    const backlogEmpty = !tasks.some((t) => t.status === 'pending' || t.status === 'claimed' || t.status === 'proposed');
    const specsChanged = (await specs.changed()).length > 0;
    const facts = {
      deferredCount: deferred.length,
      deferredWaitedLong: oldest !== null && clock.now() - oldest > settings.deferredMaxWaitMs,
      backlogEmpty,
      specsChanged,
      evolveHeld: this.run.evolveRetry.held,
      hasUiTests: settings.hasUiTests,
      hasIntegrationTests: settings.integrationGate.command.trim().length > 0,
    };
    const decision = periodicOverride(s.counters, facts, settings.intervals);
    if (decision) return { kind: 'periodic', decision };
    const exclude = [...current.entries()].filter(([n]) => n !== 'primary').map(([, t]) => t);
    const task = await control.claimReadyTask('primary', 'primary', { exclude });
    if (task) {
      this.task = task;
      this.plan = null;
      this.planError = null;
      this.patch = null;
      this.followUp = null;
      return { kind: 'claimed', taskId: task.task_id };
    }
    // Nothing ready: deferred items are judged now rather than waiting (the loop never blocks on a human).
    if (deferred.length > 0) return { kind: 'periodic', decision: { phase: 'review_deferred', reason: 'idle: reviewing deferred items' } };
    return { kind: 'no_work' };
  }

  private notes(): string[] {
    return this.task ? this.run.ctx.control.retryNotes(this.task.task_id) : [];
  }

  private async ensureWt(reset: boolean): Promise<RalphWorktree> {
    const { projectDir, branch } = this.run.ctx;
    const started = this.started;
    this.started = null;
    const wt = started !== null ? await started : null;
    // Nothing ran in it since it was made: at the branch's tip still, it is as a reset leaves it.
    if (wt !== null && (!reset || (await branchTip(projectDir, branch)) === wt.base)) this.wt = wt;
    else if (this.wt === null || reset) this.wt = await ensureWorktree(projectDir, { name: 'primary', branch });
    return this.wt;
  }

  private agentFailed(status: string, errors: readonly string[], stderr: string): PhaseFact {
    return { kind: 'agent_failed', error: `${status}: ${errors.join('; ') || stderr || 'no detail'}` };
  }

  private async planPhase(s: PrimaryState): Promise<PhaseFact> {
    const { ctx, harness, lifecycle } = this.run;
    const task = this.task;
    if (!task) return { kind: 'agent_failed', error: 'plan without a task' };
    const wt = await this.ensureWt(true);
    // Every (re)plan starts from a fresh worktree: a follow-up's reviewed patch goes back in.
    this.followUp = await startFollowUp(ctx, 'primary', task, wt);
    const prompt = planPrompt(
      ctx.promptContext,
      task,
      this.notes(),
      this.planError ?? (s.lastFailure?.origin === 'plan' ? s.lastFailure.output : null),
      this.followUp,
    );
    const out = await harness.invocation.invoke(
      { agent: 'primary', role: 'primary', phase: 'plan', phaseTo: 'implement', task, prompt, cwd: wt.path, iteration: s.iteration },
      lifecycle.signal,
    );
    if (out.kind === 'stopped') return { kind: 'agent_failed', error: 'stopped' };
    if (out.kind === 'budget') return this.budgetStop(out.scope, out.message);
    if (out.kind === 'incident') return this.incidentStop(out.message);
    if (out.result.status !== 'success') return this.agentFailed(out.result.status, out.result.errors, out.result.stderrTail);
    const v = structuredOutput('plan', out.result);
    if (!v.ok) {
      this.planError = v.message;
      return { kind: 'plan_invalid', error: v.message };
    }
    this.planError = null;
    // Risk is known before the work: a plan that would touch tier-3 files or Ralph's control
    // files is decomposed (or blocked) now, before any code is written. The patch's real
    // files are classified again when it is captured.
    const planFiles = [...new Set([...v.value.files, ...v.value.steps.flatMap((st) => st.files)])];
    const risk = harness.promotion.assess(
      task,
      planFiles.map((path) => ({ path })),
    );
    if (risk.tier === 3 || risk.controlFiles.length > 0) {
      ctx.log('primary', 'info', `${task.task_id}: the plan is restricted (${risk.reasons.join('; ')}); not implementing it`);
      const r = await harness.promotion.refuse(task, 'primary', risk, planFiles, { worktree: wt.path, base: wt.base }, lifecycle.signal);
      this.task = null;
      return { kind: 'restricted', reason: r.kind === 'blocked' ? r.reason : `plan is tier 3: ${risk.reasons.join('; ')}` };
    }
    this.plan = v.value;
    return { kind: 'planned', plan: { subSteps: v.value.steps.map((st) => ({ title: st.description, files: st.files })) } };
  }

  /** The integrity check caught the agent: reflect blocks the task with the incident (`incident:`), no retry. */
  private incidentStop(message: string): PhaseFact {
    this.wt = null;
    this.patch = null;
    return { kind: 'agent_failed', error: `incident: ${message}` };
  }

  private async budgetStop(scope: 'day' | 'task', message: string): Promise<PhaseFact> {
    // Task cap: the task is blocked with the reason (reflect sees `budget-task:`). Day cap:
    // the task is released (`budget-day:` reflects as environment) and proceed() pauses the
    // loop. Not `budget:`: that is an invocation the CLI stopped at its own cap (agentFailed
    // with status budget), a recoverable failure the reflection and the retries handle.
    return { kind: 'agent_failed', error: `${scope === 'task' ? 'budget-task' : 'budget-day'}: ${message}` };
  }

  private async implement(s: PrimaryState): Promise<PhaseFact> {
    const { ctx, harness, lifecycle } = this.run;
    const task = this.task;
    if (!task) return { kind: 'agent_failed', error: 'implement without a task' };
    const wt = await this.ensureWt(false);
    const steps = this.plan?.steps ?? [];
    const st = steps[s.subStep];
    const step =
      s.fixing || st === undefined
        ? null
        : { index: s.subStep, total: steps.length, description: st.description, files: st.files, acceptance: st.acceptance };
    const failure = s.lastFailure && (s.fixing || s.retryCount > 0) ? { gate: s.lastFailure.gate, output: s.lastFailure.output } : null;
    const prompt = implementPrompt(ctx.promptContext, task, step, failure, this.notes(), s.retryCount, this.followUp);
    const out = await harness.invocation.invoke(
      { agent: 'primary', role: 'primary', phase: 'implement', task, prompt, cwd: wt.path, iteration: s.iteration },
      lifecycle.signal,
    );
    if (out.kind === 'stopped') return { kind: 'agent_failed', error: 'stopped' };
    if (out.kind === 'budget') return this.budgetStop(out.scope, out.message);
    if (out.kind === 'incident') return this.incidentStop(out.message);
    if (out.result.status !== 'success') return this.agentFailed(out.result.status, out.result.errors, out.result.stderrTail);
    const [build] = await harness.verification.gates('primary', task.task_id, [ctx.settings.buildGate], wt.path, lifecycle.signal);
    if (build?.status === 'passed') this.built = build;
    return { kind: 'implemented', build: { gate: 'build', ok: build?.ok ?? true, output: build?.outputTail ?? '' } };
  }

  private async verify(built: GateResult | null): Promise<PhaseFact> {
    const task = this.task;
    const wt = this.wt;
    if (!task || !wt) return { kind: 'agent_failed', error: 'verify without a task' };
    const v = await this.run.harness.verification.verify(
      'primary',
      task,
      wt.path,
      wt.base,
      this.run.lifecycle.signal,
      built ? [built] : [],
    );
    if (v.restricted !== undefined) {
      const r = await this.run.harness.promotion.refuse(
        task,
        'primary',
        v.restricted.risk,
        v.restricted.files,
        { worktree: wt.path, base: wt.base },
        this.run.lifecycle.signal,
      );
      this.task = null;
      this.patch = null;
      return { kind: 'restricted', reason: r.kind === 'blocked' ? r.reason : `change is tier 3: ${v.restricted.risk.reasons.join('; ')}` };
    }
    this.patch = v.patch;
    this.gates = v.gates;
    return { kind: 'verified', gates: v.gates.map((g) => ({ gate: g.gate, ok: g.ok, output: g.outputTail })) };
  }

  private async reflect(s: PrimaryState): Promise<PhaseFact> {
    const { ctx, harness, lifecycle } = this.run;
    const task = this.task;
    const failure = s.lastFailure;
    if (!task || !failure) return { kind: 'reflected', reflection: 'recoverable', identicalFailure: false };
    const identical = this.tracker.record(task.task_id, failure.gate, failure.output);
    this.lastLesson = null;
    this.lastGuardrail = null;
    let reflection: ReflectionClass = 'recoverable';
    if (failure.output.startsWith('budget-task:') || failure.output.startsWith('incident:')) {
      reflection = 'fundamental';
      this.lastLesson = failure.output;
    } else if (failure.output.startsWith('budget-day:') || failure.output === 'stopped') {
      reflection = 'environment';
      this.lastLesson = failure.output;
    } else {
      const wt = await this.ensureWt(false);
      const prompt = reflectPrompt(ctx.promptContext, task, failure, s.retryCount + 1, ctx.settings.maxRetries);
      const out = await harness.invocation.invoke(
        { agent: 'primary', role: 'primary', phase: 'reflect', task, prompt, cwd: wt.path, iteration: s.iteration },
        lifecycle.signal,
      );
      if (out.kind === 'ran' && out.result.status === 'success') {
        const v = structuredOutput('reflect', out.result);
        if (v.ok) {
          reflection = v.value.class;
          this.lastLesson = `${v.value.diagnosis}\nLesson: ${v.value.lesson}`;
          this.lastGuardrail = v.value.guardrail;
        }
      }
    }
    return { kind: 'reflected', reflection, identicalFailure: identical };
  }

  private async commit(): Promise<PhaseFact> {
    const task = this.task;
    const wt = this.wt;
    if (!task || !wt || !this.patch) return { kind: 'committed', outcome: 'no_change' };
    const fresh = this.run.ctx.control.task(task.task_id) ?? task;
    const r = await this.run.harness.promotion.promote(
      { agent: 'primary', task: fresh, worktree: wt.path, base: wt.base, patch: this.patch, gates: this.gates },
      this.run.lifecycle.signal,
    );
    this.task = null;
    this.patch = null;
    return { kind: 'committed', outcome: COMMIT_OUTCOME[r.kind] };
  }
}
