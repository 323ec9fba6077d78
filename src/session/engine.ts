// Over 400 lines because it is the one object a host holds: the store it reads, the loop it runs and the commands it sends share its state.
// The engine session of one project folder: the event store as this host sees it (an
// observer that follows the database, or the writer of the loop this host runs), the loop
// run itself, and the one path every human command takes (the inbox, drained at once by a
// short-lived writer when no loop holds the lock). A folder whose config names the team's
// PostgreSQL store (`store`, or RALPH_STORE_URL) is attached to it instead: the views follow
// the shared log (LISTEN/NOTIFY), the agents are the team's leases per machine, and a human
// decision is appended to the shared log at once. Host-neutral: plain Node, no `vscode`;
// it reads the views through control/ functions (no SQL of its own). The VS Code extension
// adapts it (src/extension/engine.ts: the file watcher); plain mocha tests it directly.
import * as path from 'node:path';
import type { InboxCommand, InboxResult, ControlContext } from '../control';
import { controlContext, drainInbox, eventsOfLatestRun, eventsSince, submitToInbox } from '../control';
import { loopSummaryOf } from '../loop/events';
import type { LoopEvent, LoopSummary } from '../loop/events';
import { notificationsOf } from '../loop/storeFeed';
import type { LoopHost, LoopHostOptions } from '../loop/host';
import type * as HostModule from '../loop/host';
import { createStoreDataSource } from '../monitor/dataSource';
import type { StoreDataSource } from '../monitor/dataSource';
import type { LogLine } from '../protocol/monitor';
import { DB_FILE } from '../store';
import type { EventStore, LockHolder, StoredEvent } from '../store';
import type { AgentRow } from './agentsTracker';
import { AgentsTracker } from './agentsTracker';
import { busyErrorOf, CommandFailedError, LoopBusyError } from './errors';
import type { SubmitOutcome } from './errors';
import { Emitter } from '../shared/emitter';
import { HUMAN_ACTOR, loopStateOf, type LoopStateKey } from './names';
import { LogTail } from './logTail';
import type { DisposableLike } from '../shared/lifecycle';
import { CoalescedRefresh } from './refresh';
import { SpecCounter } from './specCounter';
import { SessionViews } from './views';
import { liveWriter, openShortLivedWriter } from './writer';
import { openSessionStore, submitToTeamStore } from './storeSource';
import { groupAgentsByMachine, startOfUtcDay, TeamAgentsTracker, type MachineAgents } from './teamAgents';
import { redactText } from '../shared/redaction';
import type { RunningAgent } from '../protocol/monitor';

export { CommandFailedError, LoopBusyError } from './errors';
export type { TeamMachine, MachineAgents } from './teamAgents';
export type { SubmitOutcome } from './errors';

export interface EngineLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface EngineOptions {
  readonly projectDir: string;
  /** The workspace folder's name (default: the directory's name). */
  readonly name?: string;
  readonly log: EngineLog;
  /** Calls `onChange` when ralph.db, its journal or the lock change (a FileSystemWatcher in VS Code). */
  readonly watch?: (ralphDir: string, onChange: () => void) => DisposableLike;
  /** Builds a loop run (tests and the LM backend pass backends through it). */
  readonly openLoopHost?: (o: LoopHostOptions) => Promise<LoopHost>;
  /** Safety-net poll while another process writes, in ms (default 2000; 0 = off). */
  readonly observerPollMs?: number;
  /** Where RALPH_STORE_URL is read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

export class Engine extends SessionViews {
  private observer: EventStore | undefined;
  private opening: Promise<EventStore | undefined> | undefined;
  private host: LoopHost | undefined;
  private starting = false;
  private readonly tracker = new AgentsTracker();
  /** On the team's store: every machine's agents, from their own events. */
  private readonly teamTracker = new TeamAgentsTracker();
  private readonly logTail = new LogTail();
  private storeSub: DisposableLike | undefined;
  private readonly refresh = this._register(new CoalescedRefresh(() => this.refreshNow()));
  private lastRole = '';
  private hostModule: typeof HostModule | undefined;

  private readonly _onDidChangeData = this._register(new Emitter<readonly StoredEvent[]>());
  /** Events arrived (appended here or read from another writer). */
  readonly onDidChangeData = this._onDidChangeData.event;
  private readonly _onDidChangeState = this._register(new Emitter<void>());
  /** Initialized, role or loop state may have changed. */
  readonly onDidChangeState = this._onDidChangeState.event;
  private readonly _onDidLoopEvent = this._register(new Emitter<LoopEvent>());
  /** Live events of the loop this window runs. */
  readonly onDidLoopEvent = this._onDidLoopEvent.event;

  /** The monitor's data source, over whichever store this window currently reads. */
  readonly dataSource: StoreDataSource;

  constructor(private readonly o: EngineOptions) {
    super(o.projectDir, o.name, o.env ?? process.env, (problem) => o.log.error(problem));
    this.specs = new SpecCounter(o.projectDir, () => {
      if (!this.isDisposed) this._onDidChangeState.fire();
    });
    this.dataSource = createStoreDataSource({
      store: this.currentStore((l) => this.onDidChangeData(l)),
      logsDir: path.join(this.ralphDir, 'logs'),
      agents: () => this.runningAgents(),
      logLines: () => this.logTail.recent(),
      run: () => ({ run: this.loopState(), observing: this.role() === 'observer' }),
      project: () => ({ name: this.name, specs: this.specCount() }),
    });
    this._register(this.dataSource);
    this._register(this.onDidChangeState(() => this.dataSource.notify()));
    this._register(this.onDidLoopEvent(() => this.dataSource.notify()));
    if (o.watch) this._register(o.watch(this.ralphDir, () => this.scheduleRefresh()));
  }

  private readonly specs: SpecCounter;

  /** How many spec files the project has (specs/, docs/, adrs/, specification.yaml); a change fires onDidChangeState. */
  specCount(): number {
    return this.specs.current();
  }

  // ---- what this window sees -------------------------------------------------------------

  /** The store views read from: this window's loop writer, else the observer (once opened). */
  get view(): EventStore | undefined {
    return this.host?.store ?? this.observer;
  }

  /** Opens the observer on first use; undefined while the project is not initialized. */
  async open(): Promise<EventStore | undefined> {
    if (this.host) return this.host.store;
    if (this.observer) return this.observer;
    if (this.isDisposed || !this.isInitialized()) return undefined;
    this.opening ??= (async (): Promise<EventStore | undefined> => {
      const started = performance.now();
      const where = this.storeLocation();
      try {
        const store = await openSessionStore(this.ralphDir, where, this.storeEnv);
        if (this.isDisposed) {
          await store.close();
          return undefined;
        }
        this.observer = store;
        this.fixStoreLocation(where);
        this.catchUpWithWriter(store);
        this.subscribe(store);
        const what = where.kind === 'postgres' ? `the team store ${where.where}` : `${path.join('.ralph', DB_FILE)} as an observer`;
        this.o.log.info(`opened ${what} in ${(performance.now() - started).toFixed(0)} ms`);
        this.updatePolling();
        this._onDidChangeData.fire([]);
        this._onDidChangeState.fire();
        return store;
      } finally {
        this.opening = undefined;
      }
    })();
    return this.opening;
  }

  /** The lock holder when another live process is the writer. */
  externalWriter(): LockHolder | undefined {
    return liveWriter(this.ralphDir, this.host !== undefined);
  }

  /** writer: this window runs the loop; observer: another process does (or the team's, on its store); idle: nobody. */
  role(): 'writer' | 'observer' | 'idle' {
    if (this.host || this.starting) return 'writer';
    if (this.isTeam()) return 'observer';
    return this.externalWriter() ? 'observer' : 'idle';
  }

  /** On a team store with no loop here: running while some machine holds a live lease. */
  loopState(): LoopStateKey {
    if (this.starting) return 'running';
    if (this.host) return loopStateOf(this.host.loop.state);
    if (this.isTeam()) return this.machines().length > 0 ? 'running' : 'stopped';
    return this.externalWriter() ? 'running' : 'stopped';
  }

  /** Attached to the team's store and not running a loop of its own. */
  private isTeam(): boolean {
    return !this.host && this.storeLocation().kind === 'postgres';
  }

  get loopHost(): LoopHost | undefined {
    return this.host;
  }

  /** The agents of the loop this window runs, or of the writer it follows; none when no loop runs. */
  agents(): AgentRow[] {
    if (this.isTeam()) return this.teamTracker.rows(this.machines());
    if (!this.host && this.role() !== 'observer') return [];
    return this.tracker.list();
  }

  /** On the team's store, agents() grouped by the machine their names carry; undefined otherwise. */
  agentsByMachine(): MachineAgents[] | undefined {
    return this.isTeam() ? groupAgentsByMachine(this.agents()) : undefined;
  }

  /** The monitor's shape of agents(). */
  private runningAgents(): RunningAgent[] {
    if (this.isTeam()) return this.agents().map((r) => ({ ...r, cost: r.costUsd }));
    return this.host || this.role() === 'observer' ? this.tracker.running() : [];
  }

  // ---- following another writer ----------------------------------------------------------

  /** Re-reads the database after a file change; coalesces bursts. */
  scheduleRefresh(): void {
    this.refresh.schedule();
  }

  /** Resolves once a pending refresh is done (tests wait on it). */
  settled(): Promise<void> {
    return this.refresh.settled();
  }

  private async refreshNow(): Promise<void> {
    if (this.isDisposed) return;
    try {
      if (!this.observer && !this.host && this.isInitialized()) await this.open();
      else if (this.observer && !this.host) await this.observer.refresh();
    } catch (e) {
      this.o.log.warn(`refresh failed: ${redactText(e instanceof Error ? e.message : String(e))}`);
    }
    const role = `${this.isInitialized()}/${this.role()}/${this.loopState()}`;
    if (role !== this.lastRole) {
      this.lastRole = role;
      this.updatePolling();
      this._onDidChangeState.fire();
    }
  }

  private updatePolling(): void {
    // The team store tells this window about every append itself (LISTEN/NOTIFY).
    const want = !this.host && this.observer !== undefined && !this.isTeam() && this.externalWriter() !== undefined;
    this.refresh.poll(want, this.o.observerPollMs ?? 2000);
  }

  private subscribe(store: EventStore): void {
    this.storeSub?.dispose();
    this.storeSub = store.onDidAppend((events) => {
      this._onDidChangeData.fire(events);
      // This window's own loop reports live (onLoopEvent); another writer's through its events.
      if (!this.host) this.followWriter(events);
    });
  }

  /** The agents of the run another process writes, from its events since its loop.started. */
  private catchUpWithWriter(store: EventStore): void {
    this.tracker.clear();
    this.tracker.foldStored(eventsOfLatestRun(store, ['agent.started', 'agent.finished', 'loop.stopped']) ?? []);
    // The team's log has many writers and no one run: its agents are today's.
    this.teamTracker.clear();
    if (this.storeLocation().kind === 'postgres')
      this.teamTracker.fold(eventsSince(store, ['agent.started', 'agent.finished'], startOfUtcDay(new Date())));
  }

  private followWriter(events: readonly StoredEvent[]): void {
    this.tracker.foldStored(events);
    if (this.isTeam()) this.teamTracker.fold(events);
    for (const n of notificationsOf(events)) this._onDidLoopEvent.fire(n);
  }

  // ---- commands ------------------------------------------------------------------------

  /**
   * Every human command goes through the inbox: when a loop holds the writer lock it drains
   * the file within a second (and a human decision there overrides a judge in flight);
   * when nobody does, a short-lived writer in this window drains it now.
   */
  async submit(cmd: InboxCommand): Promise<SubmitOutcome> {
    if (this.isTeam()) return this.withWriter((ctx) => submitToTeamStore(ctx, cmd, this.teamStore() ?? 'the team store'));
    const file = submitToInbox(this.ralphDir, cmd);
    const name = path.basename(file);
    if (this.host) {
      this.host.loop.wakeAll();
      return { via: 'inbox', file, writer: 'this-window' };
    }
    // Only a running loop drains the inbox; another short-lived writer (a CLI) is waited for.
    const holder = this.externalWriter();
    if (holder?.drainsInbox) return { via: 'inbox', file, writer: holder };
    let results: InboxResult[];
    try {
      results = await this.withWriter((ctx) => drainInbox(ctx));
    } catch (e) {
      if (e instanceof LoopBusyError && e.holder !== 'this-window' && e.holder.drainsInbox) return { via: 'inbox', file, writer: e.holder };
      throw e;
    }
    const mine = results.find((r) => r.file === name);
    if (mine && !mine.ok) throw new CommandFailedError(cmd.command, mine.error ?? 'failed');
    return { via: 'applied', file };
  }

  /**
   * Runs `fn` against a writer: this window's loop store, the team store (every process on
   * it writes), or a short-lived writer opened for it. Throws LoopBusyError when another
   * process holds the lock.
   */
  async withWriter<T>(fn: (ctx: ControlContext) => Promise<T>): Promise<T> {
    if (this.host) return fn(controlContext(this.host.store, { ralphDir: this.ralphDir, projectDir: this.o.projectDir }));
    if (this.isTeam()) {
      const team = await this.open();
      if (!team) throw new CommandFailedError('write', `${this.teamStore() ?? 'the team store'} is not open`);
      return fn(controlContext(team, { ralphDir: this.ralphDir, projectDir: this.o.projectDir }));
    }
    const store = await openShortLivedWriter(this.ralphDir);
    try {
      return await fn(controlContext(store, { ralphDir: this.ralphDir, projectDir: this.o.projectDir }));
    } finally {
      await store.close();
      await this.refreshNow();
    }
  }

  /** A human decision on a deferred task. */
  resolveDeferred(taskId: string, decision: 'approve' | 'reject' | 'modify', rationale: string): Promise<SubmitOutcome> {
    return this.submit({ command: 'resolve-deferred', task_id: taskId, decision, actor: HUMAN_ACTOR, rationale });
  }

  // ---- the loop ------------------------------------------------------------------------

  /** Starts the loop in this window; resolves once it runs. */
  async startLoop(options: Omit<LoopHostOptions, 'projectDir'> = {}): Promise<LoopHost> {
    if (this.host || this.starting) throw new LoopBusyError('this-window');
    const holder = this.externalWriter();
    if (holder) throw new LoopBusyError(holder);
    this.starting = true;
    this._onDidChangeState.fire();
    let host: LoopHost;
    try {
      // The loop engine (agents, git, gates) loads on the first start, not at activation.
      this.hostModule ??= await import('../loop/host.js');
      host = await (this.o.openLoopHost ?? this.hostModule.openLoopHost)({ ...options, projectDir: this.o.projectDir });
    } catch (e) {
      this.starting = false;
      this._onDidChangeState.fire();
      throw busyErrorOf(e);
    }
    this.host = host;
    this.starting = false;
    this.tracker.clear();
    this.refresh.stopPolling();
    const sub = host.loop.events.on((e) => this.onLoopEvent(e));
    this.subscribe(host.store);
    // The observer is not needed while this window writes: views read the writer's store.
    const observer = this.observer;
    this.observer = undefined;
    await observer?.close().catch(() => undefined);
    try {
      await host.loop.start();
    } catch (e) {
      sub.dispose();
      await this.endRun(host);
      throw e;
    }
    void host.loop.whenStopped().then(
      () => this.endRun(host, sub),
      () => this.endRun(host, sub),
    );
    this._onDidChangeData.fire([]);
    this._onDidChangeState.fire();
    return host;
  }

  /** Stops the loop of this window (agents and gates aborted) or asks the other writer to. */
  async stopLoop(reason = 'stopped from VS Code'): Promise<LoopSummary | 'requested'> {
    if (this.host) {
      const host = this.host;
      const summary = await host.loop.stop(reason);
      await this.endRun(host);
      return summary;
    }
    await this.submit({ command: 'stop', actor: HUMAN_ACTOR, reason });
    return 'requested';
  }

  async pauseLoop(reason = 'paused from VS Code'): Promise<void> {
    if (this.host) this.host.loop.pause(reason);
    else await this.submit({ command: 'pause', actor: HUMAN_ACTOR, reason });
    this._onDidChangeState.fire();
  }

  async resumeLoop(): Promise<void> {
    if (this.host) this.host.loop.resume();
    else await this.submit({ command: 'resume', actor: HUMAN_ACTOR });
    this._onDidChangeState.fire();
  }

  /** One line for the output channel per loop event worth printing (null: not worth it). */
  formatLoopEvent(e: LoopEvent): string | null {
    return this.hostModule?.formatLoopEvent(e) ?? null;
  }

  /** The loop summary of a `loop.stopped` event, as the CLI prints it. */
  async formatSummary(payload: Record<string, unknown>): Promise<string> {
    this.hostModule ??= await import('../loop/host.js');
    return this.hostModule.formatSummary(loopSummaryOf(payload));
  }

  /** Recent log lines of this window's loop (the monitor shows them). */
  recentLog(): readonly LogLine[] {
    return this.logTail.recent();
  }

  private onLoopEvent(e: LoopEvent): void {
    this.tracker.apply(e);
    if (e.type === 'log') this.logTail.add(e);
    this._onDidLoopEvent.fire(e);
    if (e.type === 'loop.state') this._onDidChangeState.fire();
  }

  private ending: Promise<void> | undefined;
  private shuttingDown = false;

  private endRun(host: LoopHost, sub?: DisposableLike): Promise<void> {
    if (this.host !== host) return this.ending ?? Promise.resolve();
    this.ending ??= (async (): Promise<void> => {
      try {
        await host.close();
      } catch (e) {
        this.o.log.error(`closing the loop failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      sub?.dispose();
      this.storeSub?.dispose();
      this.storeSub = undefined;
      this.host = undefined;
      this.ending = undefined;
      if (!this.isDisposed && !this.shuttingDown)
        await this.open().catch((e: unknown) => this.o.log.warn(`reopening as observer failed: ${String(e)}`));
      this._onDidChangeData.fire([]);
      this._onDidChangeState.fire();
    })();
    return this.ending;
  }

  /** Stops a running loop and closes the store (deactivate awaits this). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    const host = this.host;
    if (host) {
      if (host.loop.state !== 'stopped' && host.loop.state !== 'idle') await host.loop.stop('VS Code is closing').catch(() => undefined);
      await this.endRun(host);
    }
    const obs = this.observer;
    this.observer = undefined;
    this.storeSub?.dispose();
    this.dispose();
    await obs?.close().catch(() => undefined);
  }
}
