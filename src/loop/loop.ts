// The Loop: one engine class both hosts run (the `ralph start/stop/pause/resume` CLI and
// the VS Code extension). It recovers from a dead run, then drives the primary state
// machine and N workers concurrently, each in its own worktree, with the harness running
// gates and promotions, and reports everything as typed events. Stop aborts every agent
// and gate (process groups killed) and leaves claims released and views rendered.
// The parts are modules of their own: runLifecycle.ts (state, pause, stop, --once),
// inboxConsumer.ts, recovery.ts, primaryDriver.ts + primaryWork.ts + periodicWork.ts,
// workerCycle.ts, and the harness (harness.ts); this class composes one run of them.
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { AgentBackend } from '../agents/types';
import { domainEvent } from '../domain/events';
import type { AgentEnding } from '../domain/agentFailure';
import { currentBranch } from '../git/repo';
import { ensureWorktree } from '../git/worktrees';
import { ralphPaths } from '../control/context';
import { errorText } from './context';
import { EvolveRetry } from './evolveRetry';
import { LoopEmitter } from './events';
import type { AgentName, LoopRunState, LoopSummary } from './events';
import { Harness } from './harness';
import { InboxConsumer } from './inboxConsumer';
import type { LoopRun } from './loopRun';
import type { LoopControl, MetricsSink, SpecWatch } from './ports';
import { renderRunViews, runPrimary } from './primaryDriver';
import { recover } from './recovery';
import { RunLifecycle } from './runLifecycle';
import type { LoopSettings } from './settings';
import { systemClock } from './sleep';
import type { Clock } from './sleep';
import { emptyTally, notificationsOf, tallyOf } from './storeFeed';
import { BusyClock } from './busyClock';
import { WorkerCycle } from './workerCycle';
import { enableSpawnRelay } from '../shared/spawnRelay';

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
  /** How often the inbox is read besides when a file lands in it (1 s; a test sets it long to see the watch at work). */
  readonly inboxPollMs?: number;
}

export class LoopAlreadyStartedError extends Error {
  override readonly name = 'LoopAlreadyStartedError';
  constructor() {
    super('the loop is already running');
  }
}

const noSpecs: SpecWatch = { changed: async () => [], markEvolved: async () => undefined };

export class Loop {
  readonly events = new LoopEmitter();
  private readonly lifecycle: RunLifecycle;
  private active: LoopRun | null = null;
  private readonly ralphDir: string;
  private readonly clock: Clock;
  private started = 0;
  private starting: Promise<void> | null = null;
  private finished: Promise<LoopSummary> | null = null;
  private summary: LoopSummary | null = null;
  private readonly tally = emptyTally();
  private feed: { dispose(): void } | null = null;
  private busy: BusyClock | null = null;
  private busyFeed: { dispose(): void } | null = null;

  constructor(private readonly options: LoopOptions) {
    this.ralphDir = options.ralphDir ?? join(options.projectDir, '.ralph');
    this.clock = options.clock ?? systemClock;
    this.lifecycle = new RunLifecycle({
      emitter: this.events,
      clock: this.clock,
      settings: options.settings,
      once: options.once === true,
      record: (e) =>
        void options.control
          .record([e])
          .catch((err: unknown) =>
            this.events.emit({ type: 'log', level: 'warn', agent: 'harness', message: `${e.type} not recorded: ${String(err)}` }),
          ),
    });
  }

  get state(): LoopRunState {
    return this.lifecycle.state;
  }

  /** Recovers, then starts the primary and the workers; resolves once they run. */
  start(): Promise<void> {
    if (this.lifecycle.state !== 'idle') return Promise.reject(new LoopAlreadyStartedError());
    this.starting = this.doStart();
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const { options, lifecycle } = this;
    // A run starts hundreds of processes: from here on they are forked by a small helper.
    enableSpawnRelay();
    this.started = this.clock.now();
    const busy = new BusyClock(this.clock);
    this.busy = busy;
    this.busyFeed = this.events.on((e) => busy.note(e));
    lifecycle.setState('starting');
    const branch = options.settings.targetBranch ?? (await currentBranch(options.projectDir));
    if (branch === null) throw new Error(`${options.projectDir}: HEAD is detached; set target_branch in ralph.config.json`);
    const harness = new Harness({
      projectDir: options.projectDir,
      ralphDir: this.ralphDir,
      branch,
      settings: options.settings,
      control: options.control,
      backends: options.backends,
      metrics: options.metrics,
      emitter: this.events,
      clock: this.clock,
      signal: lifecycle.signal,
      stop: (reason) => lifecycle.requestStop(reason),
      ...(options.agentEnv ? { agentEnv: options.agentEnv } : {}),
    });
    // Notifications and the summary's counts come from what the store appended.
    this.feed = options.control.onDidAppend((batch) => {
      tallyOf(this.tally, batch);
      for (const e of notificationsOf(batch)) this.events.emit(e);
      for (const e of batch)
        if (e.event_type === 'agent.finished') lifecycle.noteAgentEnding(e.entity_id, e.payload as unknown as AgentEnding);
    });
    const inbox = new InboxConsumer(harness, lifecycle);
    const run: LoopRun = {
      ctx: harness.ctx,
      harness,
      lifecycle,
      inbox,
      specs: options.specs ?? noSpecs,
      evolveRetry: new EvolveRetry(this.clock, options.settings.evolveRetry),
      current: new Map(),
    };
    this.active = run;
    lifecycle.watch({
      dayBudget: () => harness.invocation.dayBudget(),
      approvalsInFlight: () => inbox.approvalsInFlight,
      waitingPromotions: () => options.control.waitingPromotions().length,
    });
    await options.control.record([
      domainEvent('loop.started', 'loop', 'harness', {
        branch,
        workers: options.settings.workers,
        once: options.once === true,
        pid: process.pid,
        host: hostname(),
        backends: { primary: options.backends.primary.id, worker: options.backends.worker.id, judge: options.backends.judge.id },
      }),
    ]);
    await mkdir(join(this.ralphDir, 'commits', 'pending'), { recursive: true });
    await harness.invocation.loadSpend();
    // The inbox is read from the start, recovery included (it may re-verify patches for a
    // while), and even while every agent is deep in a long invocation.
    const stopReading = inbox.readContinuously(ralphPaths(this.ralphDir).inbox, options.inboxPollMs ?? 1000, (e: unknown) =>
      harness.ctx.log('harness', 'warn', `inbox: ${String(e)}`),
    );
    try {
      await recover(run);
    } catch (e) {
      stopReading();
      throw e;
    }
    // A stop during recovery: the agents start only to see it and end at once.
    if (!lifecycle.signal.aborted) lifecycle.setState('running');
    const names: AgentName[] = ['primary', ...Array.from({ length: options.settings.workers }, (_, i) => `worker-${i + 1}`)];
    lifecycle.addAgents(names);
    // The primary's worktree is made (or reset) before any worker's: the primary's tasks are
    // the run's longest chain, and `worktree add`s of one repository queue one after another.
    // A failure here is met again, and reported, when the primary next needs its worktree.
    const primaryWorktree = lifecycle.signal.aborted
      ? Promise.resolve(null)
      : ensureWorktree(options.projectDir, { name: 'primary', branch }).catch(() => null);
    const workers = new WorkerCycle(run, primaryWorktree);
    const runners = [
      this.guarded('primary', () => runPrimary(run, primaryWorktree)),
      ...names.slice(1).map((n) => this.guarded(n, () => workers.runWorker(n))),
    ];
    this.finished = Promise.all([...runners, primaryWorktree]).then(async () => {
      stopReading();
      await inbox.settled();
      return this.finish(run);
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
    if (this.lifecycle.state === 'idle') throw new Error('the loop was not started');
    this.lifecycle.requestStop(reason);
    // Stopped while still recovering: start() ends quickly once aborted, then the agents do.
    if (this.finished === null) await this.starting?.catch(() => undefined);
    return this.whenStopped();
  }

  pause(reason = 'paused by request'): void {
    this.lifecycle.pause(reason);
  }

  resume(): void {
    this.lifecycle.resume();
  }

  /** New work or a human decision: cut idle waits short. */
  wakeAll(): void {
    this.lifecycle.wakeAll();
  }

  private guarded(agent: AgentName, fn: () => Promise<void>): Promise<void> {
    return fn().catch((e: unknown) => {
      const msg = errorText(e);
      this.active?.ctx.log(agent, 'error', `${agent} crashed: ${msg}`);
      this.lifecycle.requestStop(`${agent} crashed: ${msg}`);
    });
  }

  private async finish(run: LoopRun): Promise<LoopSummary> {
    const { control } = this.options;
    const { lifecycle } = this;
    // Counted before the stop releases the claims: those are the stop's, not the run's.
    const t = { ...this.tally };
    // Consistent state on the way out: nothing stays claimed by this run's agents.
    for (const t of control.tasks()) {
      if (t.status === 'claimed' && t.claimed_by !== null && lifecycle.isAgent(t.claimed_by)) {
        await control.releaseTask(t.task_id, t.claimed_by, `loop stopped: ${lifecycle.stopReason}`).catch(() => undefined);
      }
    }
    await renderRunViews(control, lifecycle.iterations, null).catch(() => undefined);
    this.summary = {
      iterations: lifecycle.iterations,
      invocations: t.invocations,
      promoted: t.promoted,
      deferred: t.deferred,
      blocked: t.blocked,
      released: t.released,
      costUsd: Math.round(t.costUsd * 1e6) / 1e6,
      wallMs: this.clock.now() - this.started,
      modelMs: t.modelMs,
      gateMs: run.ctx.totals.gateMs,
      ...(this.busy?.times() ?? { busyMs: 0, agentBusyMs: {} }),
      stopReason: lifecycle.stopReason || 'stopped',
    };
    this.busyFeed?.dispose();
    await control.record([domainEvent('loop.stopped', 'loop', 'harness', { ...this.summary })]).catch(() => undefined);
    this.feed?.dispose();
    lifecycle.setState('stopped', lifecycle.stopReason);
    this.events.emit({ type: 'summary', summary: this.summary });
    return this.summary;
  }
}
