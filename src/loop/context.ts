// The context object the harness's modules receive: what they share for one run (the
// project, the branch, settings, the control plane, backends, metrics, the clock, the stop
// signal, the process ledger, the run's totals). Passed explicitly, so a module says by its
// parameters what it uses; the loop's drivers get it inside their LoopRun (loopRun.ts).
import { join } from 'node:path';
import { NO_CONFINEMENT } from '../agents/sandbox';
import type { Confinement } from '../agents/sandbox';
import type { AgentBackend } from '../agents/types';
import { IntegrityGuard } from '../integrity/integrity';
import { ProcessLedger } from '../shared/processLedger';
import type { AgentName, LoopEmitter } from './events';
import type { LoopControl, MetricsSink } from './ports';
import type { PromptContext } from './prompts';
import type { LoopSettings } from './settings';
import type { Clock } from './sleep';

export interface Backends {
  readonly primary: AgentBackend;
  readonly worker: AgentBackend;
  readonly judge: AgentBackend;
}

export interface HarnessDeps {
  readonly projectDir: string;
  readonly ralphDir: string;
  readonly branch: string;
  readonly settings: LoopSettings;
  readonly control: LoopControl;
  readonly backends: Backends;
  readonly metrics: MetricsSink;
  readonly emitter: LoopEmitter;
  readonly clock: Clock;
  /** Extra environment for agent processes (tests point the scripted backend at its scenario). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /**
   * The loop's stop signal, for work started outside an agent's turn (an approval read by
   * the inbox poll re-runs the gates); without it such gates end only by their timeouts.
   */
  readonly signal?: AbortSignal;
  /** Stops the loop with a reason (a failure no retry can fix: an agent that cannot start). */
  readonly stop?: (reason: string) => void;
  /**
   * Team mode: puts a promoted commit on the shared remote's branch (compare-and-swap) before
   * the store records the promotion; a throw leaves the promotion unrecorded, to retry.
   */
  readonly publish?: (commit: string) => Promise<void>;
}

/**
 * What the harness measures itself (the rest of the summary is counted from the store's
 * events, storeFeed.ts): the time its gates ran, summed over agents.
 */
export interface HarnessTotals {
  gateMs: number;
}

export type LogLevel = 'info' | 'warn' | 'error';

/** What the harness's modules share for one run. */
export interface HarnessContext {
  readonly projectDir: string;
  readonly ralphDir: string;
  readonly branch: string;
  readonly settings: LoopSettings;
  readonly control: LoopControl;
  readonly backends: Backends;
  readonly metrics: MetricsSink;
  readonly emitter: LoopEmitter;
  readonly clock: Clock;
  readonly agentEnv: Readonly<Record<string, string>> | undefined;
  /** The loop's stop signal (never aborted for a harness built without one). */
  readonly signal: AbortSignal;
  /** Agents' and gates' process groups while they run: a run killed with SIGKILL leaves them for the next to reap. */
  readonly ledger: ProcessLedger;
  /** The integrity check around every agent invocation (src/integrity). */
  readonly integrity: IntegrityGuard;
  /**
   * How gate commands run: they execute the code agents wrote, so where the agents that wrote
   * it run in bubblewrap, the gates do too (none otherwise, or with `agents.confine_gates: false`).
   */
  readonly gateConfinement: Confinement;
  readonly stop: (reason: string) => void;
  readonly publish: ((commit: string) => Promise<void>) | undefined;
  readonly totals: HarnessTotals;
  readonly promptContext: PromptContext;
  log(agent: AgentName, level: LogLevel, message: string): void;
}

const NEVER_ABORTED: AbortSignal = new AbortController().signal;

export function harnessContext(deps: HarnessDeps): HarnessContext {
  const { emitter } = deps;
  return {
    projectDir: deps.projectDir,
    ralphDir: deps.ralphDir,
    branch: deps.branch,
    settings: deps.settings,
    control: deps.control,
    backends: deps.backends,
    metrics: deps.metrics,
    emitter,
    clock: deps.clock,
    agentEnv: deps.agentEnv,
    signal: deps.signal ?? NEVER_ABORTED,
    ledger: new ProcessLedger(join(deps.ralphDir, 'locks', 'processes')),
    gateConfinement:
      deps.settings.confineGates === false
        ? NO_CONFINEMENT
        : ([deps.backends.worker, deps.backends.primary].find((b) => b.confinement?.kind === 'bwrap')?.confinement ?? NO_CONFINEMENT),
    integrity: new IntegrityGuard({
      projectDir: deps.projectDir,
      ralphDir: deps.ralphDir,
      targetBranch: deps.branch,
      // Without confinement for any role, the checkout itself is covered too.
      confined: [deps.backends.primary, deps.backends.worker, deps.backends.judge].every((b) => b.confinement?.kind !== 'none'),
      isRalphCommit: (commit) => deps.control.patches().some((p) => p.commit_hash === commit),
      isRalphPatch: (id) => deps.control.patches().some((p) => p.patch_id === id),
    }),
    stop: deps.stop ?? ((): void => undefined),
    publish: deps.publish,
    totals: { gateMs: 0 },
    promptContext: { ralphDir: deps.ralphDir, domainConstraints: deps.settings.domainConstraints },
    log: (agent, level, message) => emitter.emit({ type: 'log', level, agent, message }),
  };
}

/** `Name: message` of a thrown value, for logs and reasons. */
export function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
