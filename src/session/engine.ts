// The engine session of one project folder: the event store as this host sees it (an
// observer that follows the database, or the writer of the loop this host runs), the loop
// run itself, and the one path every human command takes (the inbox, drained at once by a
// short-lived writer when no loop holds the lock). Host-neutral: plain Node, no `vscode`;
// it reads the views through control/ functions (no SQL of its own). The VS Code extension
// adapts it (src/extension/engine.ts: the file watcher); plain mocha tests it directly.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { InboxCommand, InboxResult, ControlContext } from '../control';
import type { DeferralVerdict, TaskEventSummary } from '../control';
import {
  allTasks,
  CONTROL_PROJECTIONS,
  controlContext,
  deferredTasksIn,
  drainInbox,
  eventsOfLatestRun,
  getPatch,
  getTask,
  lastDeferralVerdict,
  lastTaskEvent,
  patchesOf,
  recentEvents,
  submitToInbox,
} from '../control';
import type { Patch, Task } from '../domain/model';
import type { LoopEvent, LoopSummary } from '../loop/events';
import { notificationsOf } from '../loop/storeFeed';
import type { LoopHost, LoopHostOptions } from '../loop/host';
import type * as HostModule from '../loop/host';
import { createStoreDataSource } from '../monitor/dataSource';
import type { StoreDataSource } from '../monitor/dataSource';
import type { LogLine } from '../protocol/monitor';
import { CONFIG_FILE } from '../project/config';
import { DB_FILE, JOURNAL_FILE, LOCK_FILE, LOCKS_DIR, openStore } from '../store';
import type { EventStore, LockHolder, StoredEvent } from '../store';
import { deadReason } from '../store/writerLock';
import { AgentsTracker } from './agentsTracker';
import { Emitter } from '../shared/emitter';
import { HUMAN_ACTOR, type LoopStateKey } from './names';
import { Disposable } from '../shared/lifecycle';
import type { DisposableLike } from '../shared/lifecycle';

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
}

/** How a command reached the control plane. */
export type SubmitOutcome =
  /** Applied by a short-lived writer in this window: already in the database. */
  | { readonly via: 'applied'; readonly file: string }
  /** Left in the inbox for the loop that holds the writer lock (this window's or another process's). */
  | { readonly via: 'inbox'; readonly file: string; readonly writer: 'this-window' | LockHolder };

export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`${command}: ${reason}`);
  }
}

export class LoopBusyError extends Error {
  override readonly name = 'LoopBusyError';
  constructor(readonly holder: LockHolder | 'this-window') {
    super(
      holder === 'this-window'
        ? 'the loop is already running in this window'
        : `another process runs the loop (pid ${holder.pid} on ${holder.host}, since ${holder.started}); this window follows it as an observer`,
    );
  }
}

const MAX_LOG_LINES = 200;

export class Engine extends Disposable {
  readonly ralphDir: string;
  private observer: EventStore | undefined;
  private opening: Promise<EventStore | undefined> | undefined;
  private host: LoopHost | undefined;
  private starting = false;
  private readonly tracker = new AgentsTracker();
  private readonly logLines: LogLine[] = [];
  private storeSub: DisposableLike | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
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
    super();
    this.ralphDir = path.join(o.projectDir, '.ralph');
    // The monitor reads whichever store is current (observer, or this window's writer).
    const current = (): EventStore | undefined => this.view;
    this.dataSource = createStoreDataSource({
      store: {
        all: (sql, params) => current()?.all(sql, params) ?? [],
        get: (sql, params) => current()?.get(sql, params),
        onDidAppend: (l) => this.onDidChangeData(l),
      } as Pick<EventStore, 'all' | 'get' | 'onDidAppend'>,
      logsDir: path.join(this.ralphDir, 'logs'),
      agents: () => (this.host || this.role() === 'observer' ? this.tracker.running() : []),
      logLines: () => this.logLines,
      run: () => ({ run: this.loopState(), observing: this.role() === 'observer' }),
      project: () => ({ name: this.name, specs: this.specCount() }),
    });
    this._register(this.dataSource);
    this._register(this.onDidChangeState(() => this.dataSource.notify()));
    this._register(this.onDidLoopEvent(() => this.dataSource.notify()));
    if (o.watch) this._register(o.watch(this.ralphDir, () => this.scheduleRefresh()));
    this._register({ dispose: () => this.stopPolling() });
  }

  get projectDir(): string {
    return this.o.projectDir;
  }

  /** The workspace folder's name, for views and the status bar when several folders are open. */
  get name(): string {
    return this.o.name ?? path.basename(this.o.projectDir);
  }

  private specs: { count: number; checkedAt: number; checking: boolean } = { count: 0, checkedAt: 0, checking: false };

  /**
   * How many spec files the project has (specs/, docs/, adrs/, specification.yaml), rescanned
   * at most every few seconds in the background; a change fires onDidChangeState.
   */
  specCount(): number {
    const s = this.specs;
    if (!s.checking && Date.now() - s.checkedAt > 5000) {
      s.checking = true;
      void import('../project/specs.js')
        .then((m) => m.discoverSpecs(this.o.projectDir))
        .then(
          (found) => {
            const changed = found.length !== s.count;
            s.count = found.length;
            if (changed && !this.isDisposed) this._onDidChangeState.fire();
          },
          () => undefined,
        )
        .finally(() => {
          s.checking = false;
          s.checkedAt = Date.now();
        });
    }
    return s.count;
  }

  // ---- what this window sees -------------------------------------------------------------

  /** `.ralph/ralph.db` exists (or a config without a database yet: init half done). */
  isInitialized(): boolean {
    return fs.existsSync(path.join(this.ralphDir, DB_FILE)) || fs.existsSync(path.join(this.ralphDir, JOURNAL_FILE));
  }

  hasConfig(): boolean {
    return fs.existsSync(path.join(this.o.projectDir, CONFIG_FILE));
  }

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
      try {
        const store = await openStore({ ralphDir: this.ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
        if (this.isDisposed) {
          await store.close();
          return undefined;
        }
        this.observer = store;
        this.catchUpWithWriter(store);
        this.subscribe(store);
        this.o.log.info(`opened ${path.join('.ralph', DB_FILE)} as an observer in ${(performance.now() - started).toFixed(0)} ms`);
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
    const file = path.join(this.ralphDir, LOCKS_DIR, LOCK_FILE);
    let holder: LockHolder;
    try {
      holder = JSON.parse(fs.readFileSync(file, 'utf8')) as LockHolder;
    } catch {
      return undefined;
    }
    if (typeof holder.pid !== 'number') return undefined;
    if (holder.pid === process.pid && this.host) return undefined;
    if (deadReason(holder, Date.now(), 30_000) !== undefined) return undefined;
    return holder;
  }

  /** writer: this window runs the loop; observer: another process does; idle: nobody. */
  role(): 'writer' | 'observer' | 'idle' {
    if (this.host || this.starting) return 'writer';
    return this.externalWriter() ? 'observer' : 'idle';
  }

  loopState(): LoopStateKey {
    if (this.starting) return 'running';
    if (this.host) {
      const s = this.host.loop.state;
      if (s === 'paused') return 'paused';
      return s === 'stopped' || s === 'idle' ? 'stopped' : 'running';
    }
    return this.externalWriter() ? 'running' : 'stopped';
  }

  get loopHost(): LoopHost | undefined {
    return this.host;
  }

  /** The agents of the loop this window runs, or of the writer it follows; none when no loop runs. */
  agents(): ReturnType<AgentsTracker['list']> {
    if (!this.host && this.role() !== 'observer') return [];
    return this.tracker.list();
  }

  tasks(): Task[] {
    const v = this.view;
    return v ? allTasks(v) : [];
  }

  task(taskId: string): Task | undefined {
    const v = this.view;
    return v ? getTask(v, taskId) : undefined;
  }

  deferred(): Task[] {
    const v = this.view;
    return v ? deferredTasksIn(v) : [];
  }

  patch(patchId: string): Patch | undefined {
    const v = this.view;
    return v ? getPatch(v, patchId) : undefined;
  }

  /** The task's current patch: its patch_id, else its newest. */
  patchOfTask(taskId: string): Patch | undefined {
    const v = this.view;
    if (!v) return undefined;
    const t = this.task(taskId);
    if (t?.patch_id) return getPatch(v, t.patch_id) ?? undefined;
    return patchesOf(v, taskId).at(-1);
  }

  /** The newest events first, optionally filtered by a substring of type, entity or actor. */
  recentEvents(limit = 200, filter?: string): StoredEvent[] {
    const v = this.view;
    return v ? recentEvents(v, limit, filter) : [];
  }

  /** The latest event about a task (for tooltips). */
  lastTaskEvent(taskId: string): TaskEventSummary | undefined {
    const v = this.view;
    return v ? lastTaskEvent(v, taskId) : undefined;
  }

  /** The latest judge (or human) verdict on a task's deferral. */
  lastVerdict(taskId: string): DeferralVerdict | undefined {
    const v = this.view;
    return v ? lastDeferralVerdict(v, taskId) : undefined;
  }

  // ---- following another writer ----------------------------------------------------------

  /** Re-reads the database after a file change; coalesces bursts. */
  scheduleRefresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = this.refreshNow().finally(() => {
      this.refreshing = undefined;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        this.scheduleRefresh();
      }
    });
  }

  /** Resolves once a pending refresh is done (tests wait on it). */
  async settled(): Promise<void> {
    while (this.refreshing) await this.refreshing;
  }

  private async refreshNow(): Promise<void> {
    if (this.isDisposed) return;
    try {
      if (!this.observer && !this.host && this.isInitialized()) await this.open();
      else if (this.observer && !this.host) await this.observer.refresh();
    } catch (e) {
      this.o.log.warn(`refresh failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    const role = `${this.isInitialized()}/${this.role()}/${this.loopState()}`;
    if (role !== this.lastRole) {
      this.lastRole = role;
      this.updatePolling();
      this._onDidChangeState.fire();
    }
  }

  private updatePolling(): void {
    const ms = this.o.observerPollMs ?? 2000;
    const want = ms > 0 && !this.host && this.observer !== undefined && this.externalWriter() !== undefined;
    if (want && !this.pollTimer) {
      this.pollTimer = setInterval(() => this.scheduleRefresh(), ms);
      this.pollTimer.unref();
    } else if (!want) this.stopPolling();
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
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
    for (const e of eventsOfLatestRun(store, ['agent.started', 'agent.finished', 'loop.stopped']) ?? []) this.foldWriterEvent(e);
  }

  private followWriter(events: readonly StoredEvent[]): void {
    for (const e of events) this.foldWriterEvent(e);
    for (const n of notificationsOf(events)) this._onDidLoopEvent.fire(n);
  }

  private foldWriterEvent(e: StoredEvent): void {
    if (e.event_type === 'loop.started') this.tracker.clear();
    else if (e.event_type === 'loop.stopped') this.tracker.apply({ type: 'loop.state', state: 'stopped' });
    else for (const n of notificationsOf([e])) this.tracker.apply(n, new Date(e.ts));
  }

  // ---- commands ------------------------------------------------------------------------

  /**
   * Every human command goes through the inbox: when a loop holds the writer lock it drains
   * the file within a second (and a human decision there overrides a judge in flight);
   * when nobody does, a short-lived writer in this window drains it now.
   */
  async submit(cmd: InboxCommand): Promise<SubmitOutcome> {
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
   * Runs `fn` against a writer: this window's loop store, or a short-lived writer opened
   * for it. Throws LoopBusyError when another process holds the lock.
   */
  async withWriter<T>(fn: (ctx: ControlContext) => Promise<T>): Promise<T> {
    if (this.host) return fn(controlContext(this.host.store, { ralphDir: this.ralphDir, projectDir: this.o.projectDir }));
    let store: EventStore;
    try {
      store = await openStore({
        ralphDir: this.ralphDir,
        mode: 'writer',
        projections: CONTROL_PROJECTIONS,
        runId: `vscode_${process.pid}`,
        lockWaitMs: 10_000,
      });
    } catch (e) {
      if (e instanceof Error && e.name === 'StoreLockedError') {
        const holder = (e as Error & { holder?: LockHolder }).holder;
        throw new LoopBusyError(holder ?? { pid: 0, host: '?', started: '?', heartbeat: '?', runId: '?' });
      }
      throw e;
    }
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
      if (e instanceof Error && e.name === 'StoreLockedError') {
        throw new LoopBusyError(
          (e as Error & { holder?: LockHolder }).holder ?? { pid: 0, host: '?', started: '?', heartbeat: '?', runId: '?' },
        );
      }
      throw e;
    }
    this.host = host;
    this.starting = false;
    this.tracker.clear();
    this.stopPolling();
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
    const n = (k: string): number => (typeof payload[k] === 'number' ? (payload[k] as number) : 0);
    const summary: LoopSummary = {
      iterations: n('iterations'),
      invocations: n('invocations'),
      promoted: n('promoted'),
      deferred: n('deferred'),
      blocked: n('blocked'),
      released: n('released'),
      costUsd: n('costUsd'),
      wallMs: n('wallMs'),
      modelMs: n('modelMs'),
      gateMs: n('gateMs'),
      stopReason: typeof payload['stopReason'] === 'string' ? payload['stopReason'] : 'stopped',
    };
    return this.hostModule.formatSummary(summary);
  }

  /** Recent log lines of this window's loop (the monitor shows them). */
  recentLog(): readonly LogLine[] {
    return this.logLines;
  }

  private onLoopEvent(e: LoopEvent): void {
    this.tracker.apply(e);
    if (e.type === 'log') {
      this.logLines.push({ ts: new Date().toISOString(), level: e.level, text: `${e.agent}: ${e.message}` });
      if (this.logLines.length > MAX_LOG_LINES) this.logLines.splice(0, this.logLines.length - MAX_LOG_LINES);
    }
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
