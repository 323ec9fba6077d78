// The life of one run: its state (idle -> starting -> running <-> paused -> stopping ->
// stopped, each change a `loop.state` notification), the stop signal every agent and gate
// gets, the pause gate the agents wait at, the wakers that cut idle waits short, the
// --once rule (stop when every agent found nothing to do since the last progress), and the
// run limits (max iterations, consecutive failures).
import { sharedFailureClass, sharedFailureReason, type AgentEnding, type SharedFailureClass } from '../domain/agentFailure';
import { domainEvent } from '../domain/events';
import type { DomainEvent } from '../domain/events';
import type { AgentName, LoopEmitter, LoopRunState } from './events';
import { checkRunLimits, countIteration, ZERO_COUNTERS } from './guards';
import type { RunCounters } from './guards';
import type { LoopSettings } from './settings';
import { idlePolicyOf } from './settings';
import { idleDelayMs, Waker } from './sleep';
import type { Clock } from './sleep';

/** What the lifecycle asks the harness when it decides to pause or stop. */
export interface RunProbes {
  /** The day's budget; reaching it pauses the run (stops it with --once). */
  dayBudget(): { ok: true } | { ok: false; message: string };
  /** Approved patches still being promoted: work in progress, for --once. */
  approvalsInFlight(): number;
  /** Promotions waiting on the user's checkout. */
  waitingPromotions(): number;
}

export interface RunLifecycleDeps {
  readonly emitter: LoopEmitter;
  readonly clock: Clock;
  readonly settings: LoopSettings;
  /** Run until the backlog is empty or blocked, then stop. */
  readonly once: boolean;
  /** Records a pause or a resume in the store (observers show it); never throws. */
  readonly record: (event: DomainEvent) => void;
}

const NO_PROBES: RunProbes = { dayBudget: () => ({ ok: true }), approvalsInFlight: () => 0, waitingPromotions: () => 0 };

export class RunLifecycle {
  private runState: LoopRunState = 'idle';
  private readonly abort = new AbortController();
  private reason = '';
  private pausedFor: { promise: Promise<void>; resolve: () => void } | null = null;
  private counters: RunCounters = ZERO_COUNTERS;
  /** Primary iterations this run (STATE.json's iteration, the summary's). */
  iterations = 0;
  private readonly wakers = new Map<AgentName, Waker>();
  /** For --once: the progress generation at which each agent found nothing to do. */
  private readonly idleAt = new Map<AgentName, number>();
  private progressGen = 0;
  private probes: RunProbes = NO_PROBES;
  /** Each agent's last invocation: the shared class it failed with, or null (it worked, or failed on its own). */
  private readonly lastEnding = new Map<string, { cls: SharedFailureClass | null; sample: string }>();
  /** Failed invocations in a row, across agents, with the same shared class. */
  private sharedRun = 0;

  constructor(private readonly deps: RunLifecycleDeps) {}

  get state(): LoopRunState {
    return this.runState;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get stopReason(): string {
    return this.reason;
  }

  get once(): boolean {
    return this.deps.once;
  }

  /** The harness's answers, once it exists. */
  watch(probes: RunProbes): void {
    this.probes = probes;
  }

  /** The run's agents, each with a waker. */
  addAgents(names: readonly AgentName[]): void {
    for (const n of names) this.wakers.set(n, new Waker(this.deps.clock));
  }

  /** Whether the agent is one of this run's. */
  isAgent(name: string): boolean {
    return this.wakers.has(name);
  }

  setState(state: LoopRunState, reason?: string): void {
    this.runState = state;
    this.deps.emitter.emit({ type: 'loop.state', state, ...(reason !== undefined ? { reason } : {}) });
  }

  pause(reason: string, shared?: { readonly failureClass: SharedFailureClass; readonly agents: readonly string[] }): void {
    if (this.runState !== 'running' || this.pausedFor !== null) return;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.pausedFor = { promise, resolve };
    this.setState('paused', reason);
    const cause = shared ? { cause: 'agents_failing' as const, failure_class: shared.failureClass, agents: [...shared.agents] } : {};
    this.deps.record(domainEvent('loop.paused', 'loop', 'harness', { reason, ...cause }));
  }

  /**
   * How an agent's invocation ended (its `agent.finished` event). When every agent that ran
   * has last failed with the same shared class (not logged in, 429, 529, the CLI missing or
   * crashing at start), at least twice in a row, the run pauses with one reason for all; with
   * --once, nobody could resume it, so it stops with that reason.
   */
  noteAgentEnding(agent: string, ending: AgentEnding): void {
    const cls = sharedFailureClass(ending);
    const sample = [...(ending.errors ?? []), ending.stderr_tail ?? ''].find((t) => t.trim() !== '') ?? '';
    const before = this.lastEnding.get(agent)?.cls;
    const prevShared = [...this.lastEnding.values()].find((e) => e.cls !== null)?.cls;
    this.lastEnding.set(agent, { cls, sample });
    if (cls === null) {
      this.sharedRun = 0;
      return;
    }
    this.sharedRun = prevShared === cls || before === cls ? this.sharedRun + 1 : 1;
    const endings = [...this.lastEnding.entries()];
    if (this.sharedRun < Math.max(2, endings.length) || !endings.every(([, e]) => e.cls === cls)) return;
    const agents = endings.map(([a]) => a).sort();
    const reason = sharedFailureReason(cls, agents, sample);
    if (this.deps.once) this.requestStop(reason);
    else this.pause(reason, { failureClass: cls, agents });
  }

  resume(): void {
    if (this.pausedFor === null) return;
    // A resume is the human saying the cause is fixed: count afresh.
    this.lastEnding.clear();
    this.sharedRun = 0;
    this.counters = { ...this.counters, consecutiveFailures: 0 };
    const p = this.pausedFor;
    this.pausedFor = null;
    this.setState('running', 'resumed');
    this.deps.record(domainEvent('loop.resumed', 'loop', 'harness', {}));
    p.resolve();
    this.wakeAll();
  }

  /** New work or a human decision: cut idle waits short. */
  wakeAll(): void {
    for (const w of this.wakers.values()) w.wake();
  }

  requestStop(reason: string): void {
    if (this.abort.signal.aborted) return;
    this.reason = reason;
    this.setState('stopping', reason);
    this.abort.abort();
    this.pausedFor?.resolve();
  }

  /** Waits while paused; checks the day's budget (pause on reaching it). False = stop. */
  async proceed(): Promise<boolean> {
    for (;;) {
      if (this.signal.aborted) return false;
      if (this.pausedFor !== null) {
        await this.pausedFor.promise;
        continue;
      }
      const day = this.probes.dayBudget();
      if (!day.ok) {
        if (this.deps.once) {
          this.requestStop(day.message);
          return false;
        }
        this.pause(day.message);
        continue;
      }
      return true;
    }
  }

  progress(): void {
    this.progressGen++;
    this.wakeAll();
  }

  /** Idle: in --once mode, stop when every agent is idle since the last progress. */
  async idle(agent: AgentName, rounds: number): Promise<void> {
    if (this.deps.once) {
      this.idleAt.set(agent, this.progressGen);
      const all = [...this.wakers.keys()].every((n) => this.idleAt.get(n) === this.progressGen);
      // An approved patch still being promoted is work in progress: wait for it.
      if (all && this.probes.approvalsInFlight() > 0) {
        await this.wait(agent, 2000);
        return;
      }
      const waiting = this.probes.waitingPromotions();
      if (all && waiting === 0) {
        this.requestStop('backlog empty or blocked');
        return;
      }
      if (all && waiting > 0) {
        this.requestStop(`backlog done except ${waiting} promotion(s) waiting on the user's checkout`);
        return;
      }
    }
    await this.wait(agent, this.deps.once ? 2000 : idleDelayMs(rounds, idlePolicyOf(agent, this.deps.settings)));
  }

  busy(agent: AgentName): void {
    this.idleAt.delete(agent);
  }

  /** Waits up to `ms` for the agent's waker (new work, a stop). */
  async wait(agent: AgentName, ms: number): Promise<void> {
    await this.wakers.get(agent)?.wait(ms, this.signal);
  }

  /** Counts one iteration; false when a run limit paused or stopped the run. */
  countOutcome(failed: boolean): boolean {
    const { settings } = this.deps;
    this.counters = countIteration(this.counters, failed);
    const v = checkRunLimits(this.counters, {
      maxIterations: settings.maxIterations,
      maxConsecutiveFailures: settings.maxConsecutiveFailures,
    });
    if (!v.stop) return true;
    if (v.reason.startsWith('max iterations') || this.deps.once) this.requestStop(v.reason);
    else {
      this.counters = { ...this.counters, consecutiveFailures: 0 };
      this.pause(v.reason);
    }
    return false;
  }
}
