// The Loop: one engine class both hosts run (the `ralph start/stop/pause/resume` CLI and
// the VS Code extension). It recovers from a dead run, then drives the primary state
// machine and N workers concurrently, each in its own worktree, with the harness running
// gates and promotions, and reports everything as typed events. Stop aborts every agent
// and gate (process groups killed) and leaves claims released and views rendered.
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { AgentBackend } from '../agents/types';
import { ensureWorktree, findOrphanedWorktrees, removeWorktree } from '../git/worktrees';
import type { RalphWorktree } from '../git/worktrees';
import { currentBranch, isClean } from '../git/repo';
import { recoverInterruptedPromotion } from '../git/promote';
import type { CapturedPatch } from '../git/capture';
import { attemptDecision, classifyAttemptFailure, lessonLine } from '../domain/task';
import type { AttemptFailure } from '../domain/task';
import { LoopEmitter } from './events';
import type { AgentName, LoopRunState, LoopSummary } from './events';
import type { GateResult } from './gates';
import { checkRunLimits, countIteration, IdenticalFailureTracker, ZERO_COUNTERS } from './guards';
import type { RunCounters } from './guards';
import { filesTouchedByPatch, touchedPaths } from '../git/patchParse';
import { Harness } from './harness';
import type { PromotionOutcome } from './harness';
import { LATE_VERIFY_WORKTREE } from './lateVerify';
import type { LoopControl, LoopTask, MetricsSink, SpecWatch } from './ports';
import { implementPrompt, periodicPrompt, planPrompt, reflectPrompt, workerPrompt } from './prompts';
import type { FollowUpBrief } from './prompts';
import { initialPrimaryState, periodicOverride, transition } from './primaryMachine';
import type { CommitOutcome, Effect, PeriodicPhase, PhaseFact, PrimaryState, ReflectionClass, Transition } from './primaryMachine';
import type { LoopSettings } from './settings';
import { startFromPatch } from './startFromPatch';
import { backoffDelayMs, idleDelayMs, systemClock, Waker } from './sleep';
import type { Clock } from './sleep';
import type { PhaseOutput } from '../project/phaseOutputs';

export interface LoopOptions {
  readonly projectDir: string;
  readonly ralphDir?: string;
  readonly settings: LoopSettings;
  readonly control: LoopControl;
  readonly backends: { readonly primary: AgentBackend; readonly worker: AgentBackend; readonly judge: AgentBackend };
  readonly metrics: MetricsSink;
  readonly specs?: SpecWatch;
  readonly clock?: Clock;
  /** Run until the backlog is empty or blocked, then stop with a summary. */
  readonly once?: boolean;
  readonly agentEnv?: Readonly<Record<string, string>>;
}

/** A task released for a missing tool this many times is blocked: each attempt is paid for. */
const ENV_RELEASES_BEFORE_BLOCK = 2;

export class LoopAlreadyStartedError extends Error {
  override readonly name = 'LoopAlreadyStartedError';
  constructor() {
    super('the loop is already running');
  }
}

const noSpecs: SpecWatch = { changed: async () => [], markEvolved: async () => undefined };

export class Loop {
  readonly events = new LoopEmitter();
  private runState: LoopRunState = 'idle';
  private readonly abort = new AbortController();
  private harness!: Harness;
  private branch = '';
  private readonly ralphDir: string;
  private readonly clock: Clock;
  private started = 0;
  private stopReason = '';
  private pausedFor: { promise: Promise<void>; resolve: () => void } | null = null;
  private counters: RunCounters = ZERO_COUNTERS;
  private iterations = 0;
  /** Task each agent works on, so the primary and workers never pick the same one. */
  private readonly current = new Map<AgentName, string>();
  private readonly wakers = new Map<AgentName, Waker>();
  /** For --once: the progress generation at which each agent found nothing to do. */
  private readonly idleAt = new Map<AgentName, number>();
  private progressGen = 0;
  private runners: Promise<void>[] = [];
  private finished: Promise<LoopSummary> | null = null;
  private summary: LoopSummary | null = null;

  constructor(private readonly o: LoopOptions) {
    this.ralphDir = o.ralphDir ?? join(o.projectDir, '.ralph');
    this.clock = o.clock ?? systemClock;
  }

  get state(): LoopRunState {
    return this.runState;
  }

  private setState(state: LoopRunState, reason?: string): void {
    this.runState = state;
    this.events.emit({ type: 'loop.state', state, ...(reason !== undefined ? { reason } : {}) });
  }

  private starting: Promise<void> | null = null;

  /** Recovers, then starts the primary and the workers; resolves once they run. */
  start(): Promise<void> {
    if (this.runState !== 'idle') return Promise.reject(new LoopAlreadyStartedError());
    this.starting = this.doStart();
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.started = this.clock.now();
    this.setState('starting');
    const branch = this.o.settings.targetBranch ?? (await currentBranch(this.o.projectDir));
    if (branch === null) throw new Error(`${this.o.projectDir}: HEAD is detached; set target_branch in ralph.config.json`);
    this.branch = branch;
    this.harness = new Harness({
      projectDir: this.o.projectDir,
      ralphDir: this.ralphDir,
      branch,
      settings: this.o.settings,
      control: this.o.control,
      backends: this.o.backends,
      metrics: this.o.metrics,
      emitter: this.events,
      clock: this.clock,
      signal: this.abort.signal,
      ...(this.o.agentEnv ? { agentEnv: this.o.agentEnv } : {}),
    });
    await mkdir(join(this.ralphDir, 'commits', 'pending'), { recursive: true });
    await this.harness.loadSpend();
    // The inbox is read from the start, recovery included (it may re-verify patches for a
    // while), and even while every agent is deep in a long invocation.
    const poll = setInterval(
      () => void this.consumeInbox().catch((e: unknown) => this.harness.log('harness', 'warn', `inbox: ${String(e)}`)),
      1000,
    );
    try {
      await this.recover();
    } catch (e) {
      clearInterval(poll);
      throw e;
    }
    // A stop during recovery: the agents start only to see it and end at once.
    if (!this.signal.aborted) this.setState('running');
    const names: AgentName[] = ['primary', ...Array.from({ length: this.o.settings.workers }, (_, i) => `worker-${i + 1}`)];
    for (const n of names) this.wakers.set(n, new Waker(this.clock));
    this.runners = [
      this.guarded('primary', () => this.runPrimary()),
      ...names.slice(1).map((n) => this.guarded(n, () => this.runWorker(n))),
    ];
    this.finished = Promise.all(this.runners).then(async () => {
      clearInterval(poll);
      await this.draining;
      await this.approvals;
      return this.finish();
    });
  }

  /** start() and wait for the end (the CLI's `ralph start [--once]`). */
  async run(): Promise<LoopSummary> {
    await this.start();
    return this.whenStopped();
  }

  whenStopped(): Promise<LoopSummary> {
    if (this.finished === null) return Promise.reject(new Error('the loop was not started'));
    return this.finished;
  }

  /** Stops every agent and gate (process groups killed) and returns the summary. */
  async stop(reason = 'stopped by request'): Promise<LoopSummary> {
    if (this.runState === 'idle') throw new Error('the loop was not started');
    this.requestStop(reason);
    // Stopped while still recovering: start() ends quickly once aborted, then the agents do.
    if (this.finished === null) await this.starting?.catch(() => undefined);
    return this.whenStopped();
  }

  pause(reason = 'paused by request'): void {
    if (this.runState !== 'running' || this.pausedFor !== null) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.pausedFor = { promise, resolve };
    this.setState('paused', reason);
  }

  resume(): void {
    if (this.pausedFor === null) return;
    const p = this.pausedFor;
    this.pausedFor = null;
    this.setState('running', 'resumed');
    p.resolve();
    this.wakeAll();
  }

  /** New work or a human decision: cut idle waits short. */
  wakeAll(): void {
    for (const w of this.wakers.values()) w.wake();
  }

  private requestStop(reason: string): void {
    if (this.abort.signal.aborted) return;
    this.stopReason = reason;
    this.setState('stopping', reason);
    this.abort.abort();
    this.pausedFor?.resolve();
  }

  private guarded(agent: AgentName, fn: () => Promise<void>): Promise<void> {
    return fn().catch((e: unknown) => {
      const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      this.harness.log(agent, 'error', `${agent} crashed: ${msg}`);
      this.requestStop(`${agent} crashed: ${msg}`);
    });
  }

  private async finish(): Promise<LoopSummary> {
    const { control } = this.o;
    // Consistent state on the way out: nothing stays claimed by this run's agents.
    for (const t of control.tasks()) {
      if (t.status === 'claimed' && t.claimed_by !== null && this.wakers.has(t.claimed_by)) {
        await control.releaseTask(t.task_id, t.claimed_by, `loop stopped: ${this.stopReason}`).catch(() => undefined);
      }
    }
    await this.renderViews(null).catch(() => undefined);
    const t = this.harness.totals;
    this.summary = {
      iterations: this.iterations,
      invocations: t.invocations,
      promoted: t.promoted,
      deferred: t.deferred,
      blocked: t.blocked,
      released: t.released,
      costUsd: Math.round(t.costUsd * 1e6) / 1e6,
      wallMs: this.clock.now() - this.started,
      modelMs: t.modelMs,
      gateMs: t.gateMs,
      stopReason: this.stopReason || 'stopped',
    };
    await control.note('run', 'loop', 'loop.stopped', 'harness', { ...this.summary }).catch(() => undefined);
    this.setState('stopped', this.stopReason);
    this.events.emit({ type: 'summary', summary: this.summary });
    return this.summary;
  }

  // ---------------------------------------------------------------- shared helpers

  private get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Waits while paused; checks the day's budget (pause on reaching it). False = stop. */
  private async proceed(): Promise<boolean> {
    for (;;) {
      if (this.signal.aborted) return false;
      if (this.pausedFor !== null) {
        await this.pausedFor.promise;
        continue;
      }
      const day = this.harness.dayBudget();
      if (!day.ok) {
        if (this.o.once === true) {
          this.requestStop(day.message);
          return false;
        }
        this.pause(day.message);
        continue;
      }
      return true;
    }
  }

  private progress(): void {
    this.progressGen++;
    this.wakeAll();
  }

  /** Idle: in --once mode, stop when every agent is idle since the last progress. */
  private async idle(agent: AgentName, rounds: number): Promise<void> {
    if (this.o.once === true) {
      this.idleAt.set(agent, this.progressGen);
      const all = [...this.wakers.keys()].every((n) => this.idleAt.get(n) === this.progressGen);
      // An approved patch still being promoted is work in progress: wait for it.
      if (all && this.approvalsInFlight > 0) {
        await this.wakers.get(agent)?.wait(2000, this.signal);
        return;
      }
      if (all && this.harness.waiting.size === 0) {
        this.requestStop('backlog empty or blocked');
        return;
      }
      if (all && this.harness.waiting.size > 0) {
        this.requestStop(`backlog done except ${this.harness.waiting.size} promotion(s) waiting on the user's checkout`);
        return;
      }
    }
    await this.wakers.get(agent)?.wait(this.o.once === true ? 2000 : idleDelayMs(rounds, this.o.settings.idle), this.signal);
  }

  private busy(agent: AgentName): void {
    this.idleAt.delete(agent);
  }

  private draining: Promise<void> | null = null;
  /**
   * Promotions of approved patches, one after another on their own chain: a re-verification
   * runs gates for a while, and the inbox must stay readable meanwhile (a stop after an
   * approval is honoured at once; the stop signal cancels the gates).
   */
  private approvals: Promise<void> = Promise.resolve();
  private approvalsInFlight = 0;
  /** Environment failures in a row, per worker (back-off before the next claim). */
  private readonly envBackoff = new Map<AgentName, number>();
  /** Environment releases per task this run (blocked at ENV_RELEASES_BEFORE_BLOCK). */
  private readonly envReleases = new Map<string, number>();

  /** Human decisions override the judge at any time; host commands stop/pause/resume. */
  private consumeInbox(): Promise<void> {
    this.draining ??= this.drainOnce().finally(() => {
      this.draining = null;
    });
    return this.draining;
  }

  private async drainOnce(): Promise<void> {
    const { processed, decisions, host } = await this.o.control.takeInbox();
    for (const c of host) {
      if (c.command === 'stop') this.requestStop(c.reason ?? `stopped by ${c.actor}`);
      else if (c.command === 'pause') this.pause(c.reason ?? `paused by ${c.actor}`);
      else this.resume();
    }
    for (const d of decisions) {
      // The human overrides the judge: one still reviewing this task is ended now.
      this.harness.cancelJudge(d.taskId, `${d.actor} decided ${d.decision}`);
      this.events.emit({ type: 'verdict', taskId: d.taskId, verdict: d.decision, rationale: d.rationale, confidence: null, by: 'human' });
      if (d.decision === 'approve') {
        this.approvalsInFlight++;
        this.approvals = this.approvals
          .then(() => this.harness.promoteApproved(d.taskId, d.actor, this.signal))
          .then(
            () => undefined,
            (e: unknown) => this.harness.log('harness', 'warn', `promoting the approved ${d.taskId} failed: ${String(e)}`),
          )
          .finally(() => {
            this.approvalsInFlight--;
            this.progress();
          });
      }
    }
    if (processed > 0) this.progress();
  }

  private async renderViews(s: PrimaryState | null): Promise<void> {
    const c = s?.counters;
    const marks = this.o.control.periodicMarks();
    await this.o.control.renderViews({
      iteration: this.iterations,
      phase: s?.phase ?? 'assess',
      current_item: s?.taskId ?? null,
      current_sub_step: s?.subStep ?? 0,
      retry_count: s?.retryCount ?? 0,
      commits_total: c?.commitsTotal ?? this.o.control.commitsTotal(),
      last_evolve_at: c?.lastEvolveAt ?? marks.evolve,
      last_dry_at: c?.lastDryAt ?? marks.dry,
      last_integ_at: c?.lastIntegAt ?? marks.integ,
      last_ui_at: c?.lastUiAt ?? marks.ui,
    });
  }

  private countOutcome(failed: boolean): boolean {
    this.counters = countIteration(this.counters, failed);
    const v = checkRunLimits(this.counters, {
      maxIterations: this.o.settings.maxIterations,
      maxConsecutiveFailures: this.o.settings.maxConsecutiveFailures,
    });
    if (!v.stop) return true;
    if (v.reason.startsWith('max iterations') || this.o.once === true) this.requestStop(v.reason);
    else {
      this.counters = { ...this.counters, consecutiveFailures: 0 };
      this.pause(v.reason);
    }
    return false;
  }

  // ---------------------------------------------------------------- recovery

  /**
   * After a crash: half-done promotions repaired, stale claims released (we hold the writer
   * lock, so any claim is from a dead run), orphaned worktrees removed, and patches left
   * queued re-evaluated — promotion is idempotent by the patch's trailer, so a run killed
   * between the branch update and promote-patch neither loses nor duplicates the commit.
   */
  private async recover(): Promise<void> {
    const { control } = this.o;
    // First the agents and gates a killed run left running: they would keep writing into
    // worktrees this run is about to reset and reuse.
    for (const g of await this.harness.ledger.reap()) {
      if (g.killed)
        this.harness.log('harness', 'warn', `ended ${g.what} (process group ${g.pid}) left running by a killed run in ${g.cwd}`);
      // A killed judge's empty review folder is ours to remove.
      if (dirname(g.cwd) === tmpdir() && basename(g.cwd).startsWith('ralph-judge-')) await rm(g.cwd, { recursive: true, force: true });
    }
    for (const r of await recoverInterruptedPromotion(this.o.projectDir)) {
      this.harness.log('harness', 'warn', `recovered an interrupted promotion in ${r.worktree}: ${r.action}`);
    }
    for (const t of control.tasks()) {
      if (t.status === 'claimed') {
        await control.releaseTask(t.task_id, 'harness', `stale claim by ${t.claimed_by ?? '?'} from a dead run`);
        this.events.emit({ type: 'task.released', taskId: t.task_id, reason: 'stale claim from a dead run' });
      }
    }
    // The late-verification worktree is kept too: its installed dependencies are a cache.
    const active = ['primary', LATE_VERIFY_WORKTREE, ...Array.from({ length: this.o.settings.workers }, (_, i) => `worker-${i + 1}`)];
    for (const w of await findOrphanedWorktrees(this.o.projectDir, active)) {
      await removeWorktree(this.o.projectDir, w.name).catch(() => undefined);
      this.harness.log('harness', 'info', `removed orphaned worktree ${w.name}`);
    }
    for (const t of control.tasks()) {
      if (t.status !== 'proposed') continue;
      const live = control.patches(t.task_id).filter((p) => p.status === 'queued' || p.status === 'applied' || p.status === 'verified');
      const patch = live.find((p) => p.patch_id === t.patch_id) ?? live[live.length - 1];
      if (!patch?.patch_path) {
        await control.releaseTask(t.task_id, 'harness', 'proposed without a live patch after restart');
        continue;
      }
      // A run killed between queueing a patch and deferring it left a sensitive patch
      // looking ready: it goes to the judge (tier 2) or back to be decomposed (tier 3).
      const tier = this.harness.classifyFiles(t, await this.patchFiles(patch.patch_path));
      if (tier >= 2 && !control.approvedSinceDeferral(t.task_id)) {
        if (tier === 2) {
          const why = `risk tier 2, found unreviewed after a restart: deferred to the judge`;
          await control.deferTask(t.task_id, 'harness', why, tier, patch.patch_id);
          this.events.emit({ type: 'patch.deferred', taskId: t.task_id, patchId: patch.patch_id, reason: why });
        } else {
          const why = `risk tier 3, found undecomposed after a restart: back to pending to be decomposed`;
          await control.discardPatch(patch.patch_id, why, 'harness');
          this.events.emit({ type: 'task.released', taskId: t.task_id, reason: why });
        }
        continue;
      }
      // Onto the commit its gates ran on, or verified again on the moved tip (promoteLate
      // finds a commit a killed run already made, and discards and releases by itself).
      await this.harness
        .promoteLate(t.task_id, patch.patch_id, patch.patch_path, 'harness', 'recovered', this.signal)
        .catch((e: unknown) => this.harness.log('harness', 'warn', `re-evaluating ${patch.patch_id} after restart failed: ${String(e)}`));
    }
  }

  /** The files a patch file touches; none when it cannot be read (promoteLate reports that). */
  private async patchFiles(patchPath: string): Promise<string[]> {
    try {
      return touchedPaths(filesTouchedByPatch(await readFile(patchPath, 'utf8')));
    } catch {
      return [];
    }
  }

  // ---------------------------------------------------------------- primary

  private async runPrimary(): Promise<void> {
    const marks = this.o.control.periodicMarks();
    let s = initialPrimaryState({
      commitsTotal: this.o.control.commitsTotal(),
      lastEvolveAt: marks.evolve,
      lastDryAt: marks.dry,
      lastIntegAt: marks.integ,
      lastUiAt: marks.ui,
    });
    const p = new PrimaryWork(this, s);
    let idleRounds = 0;
    while (await this.proceed()) {
      if (s.phase === 'assess') {
        // Commits by workers and the judge count too (the seed's counters are per project).
        const total = this.o.control.commitsTotal();
        if (total !== s.counters.commitsTotal) s = { ...s, counters: { ...s.counters, commitsTotal: total } };
      }
      const ran = s.phase;
      let fact: PhaseFact;
      try {
        fact = await p.run(s);
      } catch (e) {
        // A harness step that throws (git, store, file system) fails the step, not the loop.
        const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        this.harness.log('primary', 'error', `${ran} failed: ${msg}`);
        fact = ran === 'assess' ? { kind: 'no_work' } : { kind: 'agent_failed', error: `harness error: ${msg}` };
      }
      if (this.signal.aborted) break;
      const t = transition(s, fact);
      const failed = fact.kind === 'agent_failed' || t.state.phase === 'reflect';
      if (fact.kind === 'reflected') await this.noteReflection(s, t, fact.reflection, p);
      for (const e of t.effects) await this.applyEffect(e, p);
      if (ran !== t.state.phase || ran !== 'assess') {
        this.events.emit({
          type: 'phase.changed',
          agent: 'primary',
          from: ran,
          to: t.state.phase,
          reason: t.reason,
          taskId: t.state.taskId ?? s.taskId,
          iteration: t.state.iteration,
        });
      }
      if (t.state.taskId !== null) this.current.set('primary', t.state.taskId);
      else this.current.delete('primary');
      s = t.state;
      this.iterations++;
      await this.renderViews(s).catch(() => undefined);
      if (fact.kind === 'committed' || fact.kind === 'periodic_done') this.progress();
      const idleNow = t.effects.some((e) => e.type === 'idle');
      if (idleNow) {
        await this.idle('primary', idleRounds++);
        continue;
      }
      idleRounds = 0;
      this.busy('primary');
      if (fact.kind !== 'no_work' && !this.countOutcome(failed)) continue;
      if (t.effects.some((e) => e.type === 'backoff')) await this.wakers.get('primary')?.wait(this.o.settings.idle.baseMs, this.signal);
    }
  }

  /**
   * Retries are visible in ralph.db: one `task.reflected` note per reflection, with the
   * machine's decision (not the model's). Not a lifecycle event: the task's status is unchanged.
   */
  private async noteReflection(s: PrimaryState, t: Transition, klass: ReflectionClass, p: PrimaryWork): Promise<void> {
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
      ...(p.lastLesson !== null ? { lesson: p.lastLesson } : {}),
    };
    await this.o.control
      .note('task', taskId, 'task.reflected', 'primary', payload)
      .catch((e: unknown) => this.harness.log('primary', 'warn', `task.reflected not recorded: ${String(e)}`));
  }

  private async applyEffect(e: Effect, p: PrimaryWork): Promise<void> {
    const { control } = this.o;
    switch (e.type) {
      case 'block_task': {
        const t = control.task(e.taskId);
        if (t && t.status !== 'done' && t.status !== 'dropped' && t.status !== 'blocked') {
          await control.blockTask(e.taskId, 'primary', e.reason);
          this.harness.totals.blocked++;
          this.events.emit({ type: 'task.blocked', taskId: e.taskId, reason: e.reason });
          this.progress();
        }
        return;
      }
      case 'release_task': {
        const t = control.task(e.taskId);
        // The harness may already have released or blocked it (no change, conflict).
        if (t && t.status === 'claimed') {
          await control.releaseTask(e.taskId, 'primary', e.reason);
          this.harness.totals.released++;
          this.events.emit({ type: 'task.released', taskId: e.taskId, reason: e.reason });
        }
        return;
      }
      case 'record_lesson':
        await this.harness.recordLesson(
          p.task,
          e.failure.gate,
          e.reflection,
          p.lastLesson ?? `${e.failure.gate} failed in ${e.failure.origin}`,
          p.lastGuardrail,
        );
        return;
      case 'idle':
      case 'backoff':
        this.harness.log('primary', 'info', e.reason);
        return;
    }
  }

  // ---------------------------------------------------------------- workers

  private async runWorker(name: AgentName): Promise<void> {
    const { control, settings } = this.o;
    let idleRounds = 0;
    while (await this.proceed()) {
      await this.consumeInbox();
      const task = await control.claimReadyTask(name, 'worker', { exclude: [...this.current.values()], efforts: settings.workerEfforts });
      if (task === null) {
        await this.idle(name, idleRounds++);
        continue;
      }
      idleRounds = 0;
      this.busy(name);
      this.current.set(name, task.task_id);
      const envFailures = this.envBackoff.get(name) ?? 0;
      try {
        const ok = await this.workerCycle(name, task);
        if (ok) this.envBackoff.delete(name);
        if (this.countOutcome(!ok) && (this.envBackoff.get(name) ?? 0) > envFailures) {
          // Released for a missing tool: claiming again at once would only fail again.
          const ms = backoffDelayMs(envFailures);
          this.harness.log(name, 'info', `environment failure: waiting ${Math.round(ms / 1000)} s before claiming again`);
          await this.clock.sleep(ms, this.signal).catch(() => undefined);
        }
      } catch (e) {
        const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        this.harness.log(name, 'error', `${task.task_id} failed in the harness: ${msg}`);
        const now = control.task(task.task_id);
        if (now?.status === 'claimed') await control.releaseTask(task.task_id, name, `harness error: ${msg}`).catch(() => undefined);
        this.countOutcome(true);
      } finally {
        this.current.delete(name);
        this.progress();
      }
    }
  }

  /**
   * One worker task: one full-cycle invocation per attempt, gates by the harness, promotion.
   * Each failed attempt is a `task.reflected` note (origin worker, the class from the
   * machine facts: domain classifyAttemptFailure); giving up records the lesson too.
   */
  private async workerCycle(name: AgentName, task: LoopTask): Promise<boolean> {
    const { control, settings } = this.o;
    const wt = await ensureWorktree(this.o.projectDir, { name, branch: this.branch });
    const followUp = await this.startFollowUp(name, task, wt);
    const tracker = new IdenticalFailureTracker();
    let failure: { gate: string; output: string } | null = null;
    for (let attempt = 1; ; attempt++) {
      if (this.signal.aborted) return false;
      const prompt = workerPrompt(this.harness.promptContext, task, name, failure, control.retryNotes(task.task_id), attempt, followUp);
      const out = await this.harness.invoke(
        { agent: name, role: 'worker', phase: 'worker', task, prompt, cwd: wt.path, iteration: attempt - 1 },
        this.signal,
      );
      if (this.signal.aborted || out.kind === 'stopped') return false;
      if (out.kind === 'budget') {
        await control.releaseTask(task.task_id, name, out.message);
        if (out.scope === 'task') await control.blockTask(task.task_id, name, out.message);
        return false;
      }
      let facts: AttemptFailure;
      if (out.result.status !== 'success') {
        failure = { gate: 'agent', output: `${out.result.status}: ${out.result.errors.join('; ') || out.result.stderrTail}` };
        facts = { kind: 'agent', status: out.result.status, stopReason: out.result.stopReason };
      } else {
        const v = await this.harness.verify(name, task, wt.path, wt.base, this.signal);
        if (this.signal.aborted) return false;
        const failed = v.gates.find((g) => !g.ok);
        if (!failed && v.patch !== null) {
          const r = await this.harness.promote(
            { agent: name, task, worktree: wt.path, base: wt.base, patch: v.patch, gates: v.gates },
            this.signal,
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
        .note('task', task.task_id, 'task.reflected', name, {
          attempt,
          gate: failure.gate,
          origin: 'worker',
          class: klass,
          decision,
          lesson,
        })
        .catch((e: unknown) => this.harness.log(name, 'warn', `task.reflected not recorded: ${String(e)}`));
      if (decision === 'release' && (this.envReleases.get(task.task_id) ?? 0) + 1 >= ENV_RELEASES_BEFORE_BLOCK) {
        // Every agent that took it hit the same missing tool: stop paying for attempts.
        const reason = `${failure.gate} could not run (${lesson}) in ${ENV_RELEASES_BEFORE_BLOCK} attempts; fix the environment, then unblock the task`;
        await this.harness.recordLesson(task, failure.gate, klass, reason, null);
        return this.blockWorkerTask(name, task.task_id, reason);
      }
      if (decision === 'release') {
        // A tool the gates need is missing: no model call can fix that. The task goes back
        // for when the environment is fixed; this worker backs off before claiming again.
        this.envReleases.set(task.task_id, (this.envReleases.get(task.task_id) ?? 0) + 1);
        const reason = `${failure.gate} could not run in ${wt.path} (${lesson}); fix the environment — released, not retried`;
        await this.harness.recordLesson(task, failure.gate, klass, reason, null);
        await control.releaseTask(task.task_id, name, reason);
        this.harness.totals.released++;
        this.events.emit({ type: 'task.released', taskId: task.task_id, reason });
        this.envBackoff.set(name, (this.envBackoff.get(name) ?? 0) + 1);
        return false;
      }
      if (decision === 'block') {
        const reason = identical
          ? `identical ${failure.gate} failure twice; not retrying the same way`
          : `${settings.maxRetries} retries exhausted: ${failure.gate} failed`;
        await this.harness.recordLesson(
          task,
          failure.gate,
          klass,
          `${reason} (worker ${name}, attempt ${attempt}).\nLast output: ${lesson}`,
          null,
        );
        return this.blockWorkerTask(name, task.task_id, reason);
      }
      this.harness.log(
        name,
        'info',
        `${task.task_id}: ${failure.gate} failed (attempt ${attempt}/${settings.maxRetries + 1}, ${klass}); retrying`,
      );
    }
  }

  /**
   * A reviewer's modify (ARCHITECTURE.md "modify -> follow-up task"): the attempt starts from
   * the reviewed patch, applied onto the fresh worktree; when it no longer applies, from
   * scratch. Either way a `task.follow_up` note records which patch it started from.
   */
  private async startFollowUp(agent: AgentName, task: LoopTask, wt: RalphWorktree): Promise<FollowUpBrief | null> {
    const { control } = this.o;
    const f = control.followUp(task.task_id);
    if (f === null) return null;
    const r =
      f.patchPath === null
        ? { applied: false as const, reason: `patch ${f.patchId} has no file` }
        : await startFromPatch(wt.path, wt.base, f.patchPath);
    const payload = {
      reviewed_patch_id: f.patchId,
      patch_path: f.patchPath,
      started_from: r.applied ? 'patch' : 'scratch',
      base: wt.base,
      requested_by: f.actor,
      ...(r.applied ? {} : { reason: r.reason }),
    };
    await control
      .note('task', task.task_id, 'task.follow_up', agent, payload)
      .catch((e: unknown) => this.harness.log(agent, 'warn', `task.follow_up not recorded: ${String(e)}`));
    this.harness.log(
      agent,
      r.applied ? 'info' : 'warn',
      `${task.task_id}: follow-up of ${f.actor}'s modify ${r.applied ? `starts from patch ${f.patchId}` : `starts from scratch: patch ${f.patchId} ${r.reason}`}`,
    );
    return r.applied
      ? { modification: f.modification, from: 'patch' }
      : { modification: f.modification, from: 'scratch', reason: r.reason };
  }

  private async blockWorkerTask(name: AgentName, taskId: string, reason: string): Promise<boolean> {
    await this.o.control.blockTask(taskId, name, reason);
    this.harness.totals.blocked++;
    this.events.emit({ type: 'task.blocked', taskId, reason });
    return false;
  }

  // ---------------------------------------------------------------- accessors for PrimaryWork

  /** @internal */
  get internals(): {
    harness: Harness;
    options: LoopOptions;
    branch: string;
    signal: AbortSignal;
    current: ReadonlyMap<AgentName, string>;
    consumeInbox: () => Promise<void>;
    clock: Clock;
    specs: SpecWatch;
    iterations: number;
    startFollowUp: (agent: AgentName, task: LoopTask, wt: RalphWorktree) => Promise<FollowUpBrief | null>;
  } {
    return {
      harness: this.harness,
      options: this.o,
      branch: this.branch,
      signal: this.signal,
      current: this.current,
      consumeInbox: () => this.consumeInbox(),
      clock: this.clock,
      specs: this.o.specs ?? noSpecs,
      iterations: this.iterations,
      startFollowUp: (agent, task, wt) => this.startFollowUp(agent, task, wt),
    };
  }
}

type PlanValue = PhaseOutput<'plan'>;

/** What the machine decided after a reflection: block, release (environment), replan or retry. */
export function reflectionDecision(origin: string, t: Transition): 'retry' | 'replan' | 'block' | 'release' {
  if (t.effects.some((e) => e.type === 'block_task')) return 'block';
  if (t.effects.some((e) => e.type === 'release_task')) return 'release';
  if (t.state.phase === 'plan' && origin !== 'plan') return 'replan';
  return 'retry';
}

/** Runs one primary phase and reports the machine fact (the machine picks what is next). */
class PrimaryWork {
  task: LoopTask | null = null;
  private wt: RalphWorktree | null = null;
  private plan: PlanValue | null = null;
  private planError: string | null = null;
  private patch: CapturedPatch | null = null;
  private gates: GateResult[] = [];
  /** A reviewer's modify this task's attempt builds on (set when its worktree is prepared). */
  private followUp: FollowUpBrief | null = null;
  private readonly tracker = new IdenticalFailureTracker();
  lastLesson: string | null = null;
  lastGuardrail: { trigger: string; instruction: string } | null = null;

  constructor(
    private readonly loop: Loop,
    _s: PrimaryState,
  ) {}

  private get i(): Loop['internals'] {
    return this.loop.internals;
  }

  async run(s: PrimaryState): Promise<PhaseFact> {
    switch (s.phase) {
      case 'assess':
        return this.assess(s);
      case 'plan':
        return this.planPhase(s);
      case 'implement':
        return this.implement(s);
      case 'verify':
        return this.verify();
      case 'reflect':
        return this.reflect(s);
      case 'commit':
        return this.commit();
      default:
        return this.periodic(s.phase, s);
    }
  }

  private async assess(s: PrimaryState): Promise<PhaseFact> {
    const { options, harness, clock } = this.i;
    const { control, settings } = options;
    await this.i.consumeInbox();
    await harness.retryWaiting();
    const expired = await control.expireStaleDeferrals();
    if (expired > 0) harness.log('primary', 'info', `expired ${expired} stale deferral(s)`);
    const tasks = control.tasks();
    const deferred = tasks.filter((t) => t.status === 'deferred');
    const oldest = deferred.reduce<number | null>((m, t) => {
      const at = t.deferred_at ? Date.parse(t.deferred_at) : NaN;
      return Number.isNaN(at) ? m : m === null ? at : Math.min(m, at);
    }, null);
    const backlogEmpty = !tasks.some((t) => t.status === 'pending' || t.status === 'claimed' || t.status === 'proposed');
    const specsChanged = (await this.i.specs.changed()).length > 0;
    const facts = {
      deferredCount: deferred.length,
      deferredWaitedLong: oldest !== null && clock.now() - oldest > settings.deferredMaxWaitMs,
      backlogEmpty,
      specsChanged,
      hasUiTests: settings.hasUiTests,
      hasIntegrationTests: settings.integrationGate.command.trim().length > 0,
    };
    const decision = periodicOverride(s.counters, facts, settings.intervals);
    if (decision) return { kind: 'periodic', decision };
    const exclude = [...this.i.current.entries()].filter(([n]) => n !== 'primary').map(([, t]) => t);
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
    return this.task ? this.i.options.control.retryNotes(this.task.task_id) : [];
  }

  private async ensureWt(reset: boolean): Promise<RalphWorktree> {
    if (this.wt === null || reset) {
      this.wt = await ensureWorktree(this.i.options.projectDir, { name: 'primary', branch: this.i.branch });
    }
    return this.wt;
  }

  private agentFailed(status: string, errors: readonly string[], stderr: string): PhaseFact {
    return { kind: 'agent_failed', error: `${status}: ${errors.join('; ') || stderr || 'no detail'}` };
  }

  private async planPhase(s: PrimaryState): Promise<PhaseFact> {
    const task = this.task;
    if (!task) return { kind: 'agent_failed', error: 'plan without a task' };
    const wt = await this.ensureWt(true);
    // Every (re)plan starts from a fresh worktree: a follow-up's reviewed patch goes back in.
    this.followUp = await this.i.startFollowUp('primary', task, wt);
    const prompt = planPrompt(
      this.i.harness.promptContext,
      task,
      this.notes(),
      this.planError ?? (s.lastFailure?.origin === 'plan' ? s.lastFailure.output : null),
      this.followUp,
    );
    const out = await this.i.harness.invoke(
      { agent: 'primary', role: 'primary', phase: 'plan', phaseTo: 'implement', task, prompt, cwd: wt.path, iteration: s.iteration },
      this.i.signal,
    );
    if (out.kind === 'stopped') return { kind: 'agent_failed', error: 'stopped' };
    if (out.kind === 'budget') return this.budgetStop(out.scope, out.message);
    if (out.result.status !== 'success') return this.agentFailed(out.result.status, out.result.errors, out.result.stderrTail);
    const v = this.i.harness.structured('plan', out.result);
    if (!v.ok) {
      this.planError = v.message;
      return { kind: 'plan_invalid', error: v.message };
    }
    this.planError = null;
    this.plan = v.value;
    return { kind: 'planned', plan: { subSteps: v.value.steps.map((st) => ({ title: st.description, files: st.files })) } };
  }

  private async budgetStop(scope: 'day' | 'task', message: string): Promise<PhaseFact> {
    // Task cap: the task is blocked with the reason (reflect sees `budget:`). Day cap: the
    // task is released (`budget-day:` reflects as environment) and proceed() pauses the loop.
    return { kind: 'agent_failed', error: `${scope === 'task' ? 'budget' : 'budget-day'}: ${message}` };
  }

  private async implement(s: PrimaryState): Promise<PhaseFact> {
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
    const prompt = implementPrompt(this.i.harness.promptContext, task, step, failure, this.notes(), s.retryCount, this.followUp);
    const out = await this.i.harness.invoke(
      { agent: 'primary', role: 'primary', phase: 'implement', task, prompt, cwd: wt.path, iteration: s.iteration },
      this.i.signal,
    );
    if (out.kind === 'stopped') return { kind: 'agent_failed', error: 'stopped' };
    if (out.kind === 'budget') return this.budgetStop(out.scope, out.message);
    if (out.result.status !== 'success') return this.agentFailed(out.result.status, out.result.errors, out.result.stderrTail);
    const [build] = await this.i.harness.gates('primary', task.task_id, [this.i.options.settings.buildGate], wt.path, this.i.signal);
    return { kind: 'implemented', build: { gate: 'build', ok: build?.ok ?? true, output: build?.outputTail ?? '' } };
  }

  private async verify(): Promise<PhaseFact> {
    const task = this.task;
    const wt = this.wt;
    if (!task || !wt) return { kind: 'agent_failed', error: 'verify without a task' };
    const v = await this.i.harness.verify('primary', task, wt.path, wt.base, this.i.signal);
    this.patch = v.patch;
    this.gates = v.gates;
    return { kind: 'verified', gates: v.gates.map((g) => ({ gate: g.gate, ok: g.ok, output: g.outputTail })) };
  }

  private async reflect(s: PrimaryState): Promise<PhaseFact> {
    const task = this.task;
    const failure = s.lastFailure;
    if (!task || !failure) return { kind: 'reflected', reflection: 'recoverable', identicalFailure: false };
    const identical = this.tracker.record(task.task_id, failure.gate, failure.output);
    this.lastLesson = null;
    this.lastGuardrail = null;
    let reflection: ReflectionClass = 'recoverable';
    if (failure.output.startsWith('budget:')) {
      reflection = 'fundamental';
      this.lastLesson = failure.output;
    } else if (failure.output.startsWith('budget-day:') || failure.output === 'stopped') {
      reflection = 'environment';
      this.lastLesson = failure.output;
    } else {
      const wt = await this.ensureWt(false);
      const prompt = reflectPrompt(this.i.harness.promptContext, task, failure, s.retryCount + 1, this.i.options.settings.maxRetries);
      const out = await this.i.harness.invoke(
        { agent: 'primary', role: 'primary', phase: 'reflect', task, prompt, cwd: wt.path, iteration: s.iteration },
        this.i.signal,
      );
      if (out.kind === 'ran' && out.result.status === 'success') {
        const v = this.i.harness.structured('reflect', out.result);
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
    const fresh = this.i.options.control.task(task.task_id) ?? task;
    const r: PromotionOutcome = await this.i.harness.promote(
      { agent: 'primary', task: fresh, worktree: wt.path, base: wt.base, patch: this.patch, gates: this.gates },
      this.i.signal,
    );
    this.task = null;
    this.patch = null;
    const map: Record<PromotionOutcome['kind'], CommitOutcome> = {
      promoted: 'promoted',
      deferred: 'deferred',
      decomposed: 'decomposed',
      waiting: 'waiting',
      no_change: 'no_change',
      conflict: 'conflict',
      abandoned: 'abandoned',
    };
    return { kind: 'committed', outcome: map[r.kind] };
  }

  private async periodic(phase: PeriodicPhase, s: PrimaryState): Promise<PhaseFact> {
    const { harness, options, signal } = this.i;
    const { control, settings } = options;
    if (phase === 'review_deferred') {
      const deferred = control
        .tasks()
        .filter((t) => t.status === 'deferred')
        .sort((a, b) => (a.deferred_at ?? '').localeCompare(b.deferred_at ?? ''));
      for (const t of deferred.slice(0, 5)) {
        if (signal.aborted) break;
        await harness.judge(t, signal);
      }
      return { kind: 'periodic_done', phase };
    }
    const wt = await this.ensureWt(true);
    if (phase === 'evolve_goals') {
      const changed = await this.i.specs.changed();
      const backlog = control
        .tasks()
        .map((t) => `${t.task_id} ${t.status} ${t.title ?? ''}`)
        .slice(0, 60)
        .join('\n');
      const prompt = periodicPrompt(
        harness.promptContext,
        phase,
        `Specs changed since the last evolve: ${changed.join(', ') || 'none'}\nBacklog:\n${backlog || '(empty)'}`,
      );
      const out = await harness.invoke(
        { agent: 'primary', role: 'primary', phase, task: null, prompt, cwd: wt.path, iteration: s.iteration },
        signal,
      );
      if (out.kind === 'ran' && out.result.status === 'success') {
        const v = harness.structured('evolve_goals', out.result);
        if (v.ok) {
          await harness.writeProposals(v.value.proposals, 'evolve');
          const counts = await control.processProposals();
          harness.log(
            'primary',
            'info',
            `evolve_goals: ${counts.accepted} accepted, ${counts.deferred} deferred, ${counts.rejected} rejected`,
          );
          await this.i.specs.markEvolved([...new Set([...changed, ...v.value.specs_read])]);
        } else {
          harness.log('primary', 'warn', `evolve_goals output rejected: ${v.message}`);
          await this.i.specs.markEvolved(changed);
        }
      } else {
        await this.i.specs.markEvolved(changed);
      }
    } else {
      let extra = `Recent work is on ${this.i.branch}.`;
      let run = true;
      if (phase === 'test_integration') {
        // The harness runs the suite itself; an agent is only paid for when it fails.
        const [r] = await harness.gates('primary', null, [settings.integrationGate], wt.path, signal);
        run = r !== undefined && !r.ok;
        if (r && !r.ok)
          extra = `The full test suite fails on ${this.i.branch}. Fix it.\nOutput (tail):\n\`\`\`\n${r.outputTail.slice(-2500)}\n\`\`\``;
      }
      if (run && !signal.aborted) {
        const prompt = periodicPrompt(harness.promptContext, phase, extra);
        const out = await harness.invoke(
          { agent: 'primary', role: 'primary', phase, task: null, prompt, cwd: wt.path, iteration: s.iteration },
          signal,
        );
        if (out.kind === 'ran' && out.result.status === 'success' && !signal.aborted) await this.maintenance(phase, wt, out.result.text);
      }
    }
    await control.note('run', 'loop', 'loop.periodic_done', 'primary', { phase, at: s.counters.commitsTotal });
    return { kind: 'periodic_done', phase };
  }

  /**
   * A periodic phase that changed files (refactor_dry, a test fix) gets a task of its own,
   * so its change goes through the same gates and the same risk-tiered promotion.
   */
  private async maintenance(phase: PeriodicPhase, wt: RalphWorktree, text: string): Promise<void> {
    const { harness, options, signal } = this.i;
    const { control } = options;
    const summary = (text.split('\n').find((l) => l.trim().length > 0) ?? phase).replace(/[`{}"]/g, '').slice(0, 80);
    const id = `MAINT-${new Date(this.i.clock.now())
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
    const v = await harness.verify('primary', probe, wt.path, wt.base, signal);
    if (v.patch?.isEmpty === true) return;
    await control.createTask({ id, title: probe.title ?? phase, source: 'harness', effort: 'S', wave: 0 }, 'primary');
    await control.claimTask(id, 'primary');
    const failed = v.gates.find((g) => !g.ok);
    if (failed || v.patch === null) {
      const why = `${phase} change fails the ${failed?.gate ?? 'verify'} gate; left for a later attempt`;
      await control.releaseTask(id, 'primary', why);
      harness.log('primary', 'warn', `${id}: ${why}`);
      return;
    }
    const task = control.task(id) ?? probe;
    await harness.promote({ agent: 'primary', task, worktree: wt.path, base: wt.base, patch: v.patch, gates: v.gates }, signal);
  }
}
