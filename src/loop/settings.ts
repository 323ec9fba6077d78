// The loop's settings, derived from the validated ralph.config.json (src/project/config.ts)
// in one place, so the orchestration code reads plain numbers and lists.
import type { RiskPatterns } from '../domain/risk';
import { DEFAULT_RISK_PATTERNS } from '../domain/risk';
import type { RalphConfig } from '../project/config';
import type { GateSpec } from './gates';
import type { BudgetLimits } from './guards';
import type { PeriodicIntervals } from '../domain/primaryMachine';
import type { IdlePolicy } from './sleep';
import { DEFAULT_EVOLVE_RETRY, type EvolveRetryPolicy } from './evolveRetry';

export interface LoopSettings {
  readonly name: string;
  readonly model: string;
  readonly maxTurns: number;
  readonly invocationTimeoutMs: number;
  readonly budgets: BudgetLimits & { readonly perInvocationJudge: number };
  readonly maxRetries: number;
  readonly maxIterations: number;
  readonly maxConsecutiveFailures: number;
  readonly workers: number;
  readonly workerEfforts: readonly string[];
  /** Run after each implement sub-step. */
  readonly buildGate: GateSpec;
  /** Run in verify (build, test, lint), in that order. */
  readonly verifyGates: readonly GateSpec[];
  readonly integrationGate: GateSpec;
  readonly forbiddenPatterns: readonly string[];
  readonly forbiddenExclude: readonly string[];
  readonly domainConstraints: readonly string[];
  readonly riskPatterns: RiskPatterns;
  readonly intervals: PeriodicIntervals;
  readonly hasUiTests: boolean;
  /** A deferred item older than this is reviewed even below the count threshold. */
  readonly deferredMaxWaitMs: number;
  /** The primary's idle waits (intervals.primary). */
  readonly idle: IdlePolicy;
  /** A worker's idle waits (intervals.worker). */
  readonly workerIdle: IdlePolicy;
  /** Back-off of evolve_goals after a failure (its specs stay unread and it runs again). */
  readonly evolveRetry: EvolveRetryPolicy;
  /** null = the branch checked out in the project when the loop starts. */
  readonly targetBranch: string | null;
  /** `agents.unconfined`: the user accepts agents no sandbox confines. */
  readonly agentsUnconfined: boolean;
  /** `agents.confine_gates` (default true): gates run in the agents' bubblewrap profile. */
  readonly confineGates?: boolean;
}

const s = (n: number): number => n * 1000;

export function settingsFromConfig(c: RalphConfig): LoopSettings {
  const gt = c.limits.gate_timeouts;
  return {
    name: c.name,
    model: c.backends.claude.model ?? c.model,
    maxTurns: c.backends.claude.max_turns,
    invocationTimeoutMs: s(c.limits.invocation_timeout),
    budgets: {
      perInvocationPrimary: c.budgets.primary,
      perInvocationWorker: c.budgets.worker,
      perInvocationJudge: c.budgets.judge,
      perTask: c.budgets.per_task,
      perDay: c.budgets.per_day,
    },
    maxRetries: c.limits.max_retries,
    maxIterations: c.limits.max_iterations,
    maxConsecutiveFailures: c.limits.max_consecutive_failures,
    workers: c.workers.count,
    workerEfforts: c.workers.effort,
    buildGate: { name: 'build', command: c.build, timeoutMs: s(gt.build) },
    verifyGates: [
      { name: 'build', command: c.build, timeoutMs: s(gt.build) },
      { name: 'test', command: c.test, timeoutMs: s(gt.test) },
      { name: 'lint', command: c.lint, timeoutMs: s(gt.lint) },
      // The seed's format check: a gate like the others, skipped when no command is set.
      { name: 'fmt', command: c.fmt, timeoutMs: s(gt.fmt) },
    ],
    integrationGate: { name: 'test', command: c.test, timeoutMs: s(gt.test) },
    forbiddenPatterns: c.forbidden_patterns,
    forbiddenExclude: c.forbidden_exclude,
    domainConstraints: c.domain_constraints,
    riskPatterns: c.risk_patterns ?? DEFAULT_RISK_PATTERNS,
    intervals: {
      evolveEvery: c.periodic.evolve_every,
      dryEvery: c.periodic.refactor_every,
      integEvery: c.periodic.integration_every,
      uiEvery: c.periodic.ui_every,
      overdueAt: c.periodic.overdue_at,
      reviewAtDeferred: c.limits.review_deferred_at,
    },
    hasUiTests: c.periodic.ui,
    deferredMaxWaitMs: 30 * 60_000,
    idle: { baseMs: s(c.intervals.primary), maxMs: s(c.intervals.primary * 6), factor: 1.5 },
    workerIdle: { baseMs: s(c.intervals.worker), maxMs: s(c.intervals.worker * 6), factor: 1.5 },
    evolveRetry: DEFAULT_EVOLVE_RETRY,
    targetBranch: c.target_branch ?? null,
    agentsUnconfined: c.agents.unconfined,
    confineGates: c.agents.confine_gates,
  };
}

/** Whose idle waits an agent takes: the primary's, or a worker's. */
export function idlePolicyOf(agent: string, settings: Pick<LoopSettings, 'idle' | 'workerIdle'>): IdlePolicy {
  return agent === 'primary' ? settings.idle : settings.workerIdle;
}
