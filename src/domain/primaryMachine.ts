// The primary agent's state machine: the 11 phases and the transition function the HARNESS
// uses to pick the next phase from machine facts (validated plan, build/gate results,
// reflection class, retry counter, periodic counters). The model never decides a transition:
// its answers are facts to check. Pure: no I/O, no clock; the loop feeds facts and performs effects.

// The phase list is the one the phase files and output schemas are keyed by.
import { PHASES } from './phaseOutputs';
import type { Phase } from './phaseOutputs';

export { PHASES };
export type { Phase };

export type PeriodicPhase = 'evolve_goals' | 'refactor_dry' | 'test_integration' | 'test_ui' | 'review_deferred';

export const PERIODIC_PHASES: readonly PeriodicPhase[] = ['evolve_goals', 'refactor_dry', 'test_integration', 'test_ui', 'review_deferred'];

export function isPeriodicPhase(phase: Phase): phase is PeriodicPhase {
  return (PERIODIC_PHASES as readonly string[]).includes(phase);
}

/** Reflexion classes; the harness maps each to a next step, the model only names the class. */
export type ReflectionClass = 'transient' | 'recoverable' | 'environment' | 'fundamental';

export const MAX_RETRIES = 3;

/** A validated plan (the plan phase's structured output, after zod). */
export interface MachinePlan {
  readonly subSteps: readonly { readonly title: string; readonly files?: readonly string[] }[];
}

/** Where a failure happened: what reflect is about and what a retry repeats. */
export type FailureOrigin = 'plan' | 'implement' | 'verify';

export interface MachineFailure {
  readonly origin: FailureOrigin;
  /** Gate or check name: 'plan_output', 'build', 'test', 'lint', 'forbidden_patterns'. */
  readonly gate: string;
  /** Bounded tail of the failing output, injected into the reflect prompt. */
  readonly output: string;
}

/** Counters that drive the periodic overrides (STATE.json's last_*_at are commit counts). */
export interface PeriodicCounters {
  readonly commitsTotal: number;
  readonly lastEvolveAt: number;
  readonly lastDryAt: number;
  readonly lastIntegAt: number;
  readonly lastUiAt: number;
}

export interface PrimaryState {
  readonly phase: Phase;
  readonly iteration: number;
  readonly taskId: string | null;
  readonly plan: MachinePlan | null;
  /** Index of the next sub-step to implement (== subSteps.length when all are done). */
  readonly subStep: number;
  readonly retryCount: number;
  /** True after a recoverable failure in verify: the next implement is a fix pass. */
  readonly fixing: boolean;
  readonly lastFailure: MachineFailure | null;
  readonly counters: PeriodicCounters;
}

export function initialPrimaryState(counters?: Partial<PeriodicCounters>): PrimaryState {
  return {
    phase: 'assess',
    iteration: 0,
    taskId: null,
    plan: null,
    subStep: 0,
    retryCount: 0,
    fixing: false,
    lastFailure: null,
    counters: { commitsTotal: 0, lastEvolveAt: 0, lastDryAt: 0, lastIntegAt: 0, lastUiAt: 0, ...counters },
  };
}

/** Everything assess needs to know beyond the counters; gathered by the loop from the store. */
export interface AssessFacts {
  readonly deferredCount: number;
  /** True when the oldest deferred item waited longer than the configured limit. */
  readonly deferredWaitedLong: boolean;
  /** No pending/claimed work left for the primary (done/dropped/blocked/deferred only). */
  readonly backlogEmpty: boolean;
  /** Specs changed since the last evolve (by content hash): evolve once per change. */
  readonly specsChanged: boolean;
  /** evolve_goals failed a short while ago and waits out its back-off (its specs stay unread). */
  readonly evolveHeld?: boolean;
  /** Whether the project has a UI test command at all; without one test_ui is skipped. */
  readonly hasUiTests: boolean;
  readonly hasIntegrationTests: boolean;
}

export interface PeriodicIntervals {
  readonly evolveEvery: number;
  readonly dryEvery: number;
  readonly integEvery: number;
  readonly uiEvery: number;
  readonly overdueAt: number;
  readonly reviewAtDeferred: number;
}

export const DEFAULT_INTERVALS: PeriodicIntervals = {
  evolveEvery: 5,
  dryEvery: 5,
  integEvery: 10,
  uiEvery: 15,
  overdueAt: 30,
  reviewAtDeferred: 3,
};

export interface PeriodicDecision {
  readonly phase: PeriodicPhase;
  readonly reason: string;
}

/**
 * The seed's override order when the primary is in assess. Forcing
 * evolve_goals on every cycle with an empty backlog would rerun it for nothing; the empty-backlog
 * trigger needs `specsChanged`, which the loop clears once evolve_goals has run.
 */
export function periodicOverride(c: PeriodicCounters, f: AssessFacts, iv: PeriodicIntervals = DEFAULT_INTERVALS): PeriodicDecision | null {
  const since = (last: number): number => c.commitsTotal - last;
  const evolveHeld = f.evolveHeld === true;
  if (f.backlogEmpty && f.specsChanged && !evolveHeld) {
    return { phase: 'evolve_goals', reason: 'backlog empty and specs changed' };
  }
  if (f.hasIntegrationTests && since(c.lastIntegAt) > iv.overdueAt) {
    return { phase: 'test_integration', reason: `overdue: ${since(c.lastIntegAt)} commits since last` };
  }
  if (f.hasUiTests && since(c.lastUiAt) > iv.overdueAt) {
    return { phase: 'test_ui', reason: `overdue: ${since(c.lastUiAt)} commits since last` };
  }
  if (f.deferredCount >= iv.reviewAtDeferred) {
    return { phase: 'review_deferred', reason: `${f.deferredCount} deferred items waiting` };
  }
  if (f.deferredCount > 0 && f.deferredWaitedLong) {
    return { phase: 'review_deferred', reason: 'a deferred item waited too long' };
  }
  if (!evolveHeld && since(c.lastEvolveAt) >= iv.evolveEvery && (f.specsChanged || !f.backlogEmpty)) {
    return { phase: 'evolve_goals', reason: `${since(c.lastEvolveAt)} commits since last evolve` };
  }
  if (since(c.lastDryAt) >= iv.dryEvery) {
    return { phase: 'refactor_dry', reason: `${since(c.lastDryAt)} commits since last refactor` };
  }
  if (f.hasIntegrationTests && since(c.lastIntegAt) >= iv.integEvery) {
    return { phase: 'test_integration', reason: `${since(c.lastIntegAt)} commits since last` };
  }
  if (f.hasUiTests && since(c.lastUiAt) >= iv.uiEvery) {
    return { phase: 'test_ui', reason: `${since(c.lastUiAt)} commits since last` };
  }
  return null;
}

/** What the loop observed after running the current phase (facts, not the model's word). */
export type PhaseFact =
  | { readonly kind: 'periodic'; readonly decision: PeriodicDecision }
  | { readonly kind: 'claimed'; readonly taskId: string }
  | { readonly kind: 'no_work' }
  | { readonly kind: 'planned'; readonly plan: MachinePlan }
  | { readonly kind: 'plan_invalid'; readonly error: string }
  | { readonly kind: 'implemented'; readonly build: GateOutcome }
  | { readonly kind: 'verified'; readonly gates: readonly GateOutcome[] }
  | { readonly kind: 'reflected'; readonly reflection: ReflectionClass; readonly identicalFailure: boolean }
  | { readonly kind: 'committed'; readonly outcome: CommitOutcome }
  /** The change may not be made (its plan or its files are tier 3 or Ralph's control files): the harness decomposed or blocked the task. */
  | { readonly kind: 'restricted'; readonly reason: string }
  | { readonly kind: 'periodic_done'; readonly phase: PeriodicPhase }
  | { readonly kind: 'agent_failed'; readonly error: string };

export interface GateOutcome {
  readonly gate: string;
  readonly ok: boolean;
  readonly output: string;
}

/**
 * promoted: on the branch; deferred/decomposed: left to the judge or proposals;
 * waiting: the user's checkout blocks promotion (retried later); no_change: nothing to
 * promote (the task is released, never marked done); conflict: the patch no longer applies after rebase;
 * blocked: the patch may not land at all (Ralph's control files), the task is blocked.
 */
export type CommitOutcome = 'promoted' | 'deferred' | 'decomposed' | 'waiting' | 'no_change' | 'conflict' | 'abandoned' | 'blocked';

/** Side effects the loop performs for a transition; the machine only names them. */
export type Effect =
  | { readonly type: 'block_task'; readonly taskId: string; readonly reason: string }
  | { readonly type: 'release_task'; readonly taskId: string; readonly reason: string }
  | { readonly type: 'record_lesson'; readonly failure: MachineFailure; readonly reflection: ReflectionClass }
  | { readonly type: 'idle'; readonly reason: string }
  | { readonly type: 'backoff'; readonly reason: string };

export interface Transition {
  readonly state: PrimaryState;
  readonly effects: readonly Effect[];
  /** Why this phase was chosen, for the phase.changed event. */
  readonly reason: string;
}

export class InvalidTransitionError extends Error {
  override readonly name = 'InvalidTransitionError';
  constructor(
    readonly phase: Phase,
    readonly fact: PhaseFact['kind'],
  ) {
    super(`fact '${fact}' is not valid in phase '${phase}'`);
  }
}

function to(state: PrimaryState, phase: Phase, patch: Partial<PrimaryState> = {}): PrimaryState {
  return { ...state, ...patch, phase, iteration: state.iteration + 1 };
}

function resetTask(_state: PrimaryState): Partial<PrimaryState> {
  return { taskId: null, plan: null, subStep: 0, retryCount: 0, fixing: false, lastFailure: null };
}

/** A failure goes to reflect; the retry counter is checked when reflect decides. */
function fail(state: PrimaryState, failure: MachineFailure): Transition {
  return {
    state: to(state, 'reflect', { lastFailure: failure }),
    effects: [],
    reason: `${failure.gate} failed in ${failure.origin}`,
  };
}

function backToAssess(state: PrimaryState, reason: string, effects: Effect[] = [], extra: Partial<PrimaryState> = {}): Transition {
  return { state: to(state, 'assess', { ...resetTask(state), ...extra }), effects, reason };
}

function markerFor(phase: PeriodicPhase, c: PeriodicCounters): Partial<PeriodicCounters> {
  switch (phase) {
    case 'evolve_goals':
      return { lastEvolveAt: c.commitsTotal };
    case 'refactor_dry':
      return { lastDryAt: c.commitsTotal };
    case 'test_integration':
      return { lastIntegAt: c.commitsTotal };
    case 'test_ui':
      return { lastUiAt: c.commitsTotal };
    case 'review_deferred':
      return {};
  }
}

function afterReflection(state: PrimaryState, reflection: ReflectionClass, identical: boolean): Transition {
  const failure = state.lastFailure;
  const taskId = state.taskId;
  if (failure === null || taskId === null) throw new InvalidTransitionError(state.phase, 'reflected');
  const lesson: Effect = { type: 'record_lesson', failure, reflection };
  if (reflection === 'fundamental') {
    return backToAssess(state, 'fundamental failure', [
      lesson,
      {
        type: 'block_task',
        taskId,
        // An integrity incident is its own reason (what changed, how to restore it).
        reason: failure.output.startsWith('incident: ')
          ? failure.output.slice('incident: '.length)
          : `fundamental: ${failure.gate} failed in ${failure.origin}`,
      },
    ]);
  }
  if (reflection === 'environment') {
    // Not the task's fault: give it back and slow down rather than burn retries on it.
    return backToAssess(state, 'environment failure', [
      lesson,
      { type: 'release_task', taskId, reason: `environment: ${failure.gate} failed in ${failure.origin}` },
      { type: 'backoff', reason: `environment problem in ${failure.gate}` },
    ]);
  }
  const retries = state.retryCount + 1;
  if (retries > MAX_RETRIES) {
    return backToAssess(state, 'retries exhausted', [
      lesson,
      { type: 'block_task', taskId, reason: `${MAX_RETRIES} retries exhausted: ${failure.gate} failed in ${failure.origin}` },
    ]);
  }
  if (identical && failure.origin !== 'plan') {
    // The same gate failed the same way twice: repeating the fix won't help; replan instead.
    return {
      state: to(state, 'plan', { retryCount: retries, plan: null, subStep: 0, fixing: false }),
      effects: [lesson],
      reason: `identical ${failure.gate} failure twice: replanning (retry ${retries}/${MAX_RETRIES})`,
    };
  }
  const r = `${reflection}: retry ${retries}/${MAX_RETRIES}`;
  switch (failure.origin) {
    case 'plan':
      return { state: to(state, 'plan', { retryCount: retries }), effects: [lesson], reason: r };
    case 'implement':
      return { state: to(state, 'implement', { retryCount: retries }), effects: [lesson], reason: r };
    case 'verify':
      if (reflection === 'transient') {
        return { state: to(state, 'verify', { retryCount: retries }), effects: [lesson], reason: r };
      }
      return { state: to(state, 'implement', { retryCount: retries, fixing: true }), effects: [lesson], reason: r };
  }
}

/**
 * The harness's transition function. `state.phase` is the phase that just ran; `fact` is
 * what the loop observed. Returns the next state (its `phase` is what runs next).
 */
export function transition(state: PrimaryState, fact: PhaseFact): Transition {
  const p = state.phase;
  if (fact.kind === 'agent_failed') {
    // An invocation that crashed or hit its limits is a failure of the step it served.
    if (isPeriodicPhase(p)) {
      // Counted as run so a failing periodic phase cannot capture every cycle.
      return backToAssess(state, `${p} failed: ${fact.error}`, [{ type: 'backoff', reason: fact.error }], {
        counters: { ...state.counters, ...markerFor(p, state.counters) },
      });
    }
    if (state.taskId === null) return backToAssess(state, `agent failed: ${fact.error}`, [{ type: 'backoff', reason: fact.error }]);
    if (p === 'reflect') return afterReflection(state, 'recoverable', false);
    const origin: FailureOrigin = p === 'plan' ? 'plan' : p === 'verify' ? 'verify' : 'implement';
    return fail(state, { origin, gate: 'agent', output: fact.error });
  }
  switch (p) {
    case 'assess':
      if (fact.kind === 'periodic') return { state: to(state, fact.decision.phase), effects: [], reason: fact.decision.reason };
      if (fact.kind === 'claimed') {
        return { state: to(state, 'plan', { ...resetTask(state), taskId: fact.taskId }), effects: [], reason: `claimed ${fact.taskId}` };
      }
      if (fact.kind === 'no_work') return backToAssess(state, 'no ready task', [{ type: 'idle', reason: 'no ready task' }]);
      break;
    case 'plan':
      if (fact.kind === 'restricted') return backToAssess(state, fact.reason);
      if (fact.kind === 'planned') {
        if (fact.plan.subSteps.length === 0) return fail(state, { origin: 'plan', gate: 'plan_output', output: 'plan has no sub-steps' });
        return {
          state: to(state, 'implement', { plan: fact.plan, subStep: 0, fixing: false }),
          effects: [],
          reason: `plan with ${fact.plan.subSteps.length} sub-steps`,
        };
      }
      if (fact.kind === 'plan_invalid') return fail(state, { origin: 'plan', gate: 'plan_output', output: fact.error });
      break;
    case 'implement':
      if (fact.kind === 'implemented') {
        if (!fact.build.ok) return fail(state, { origin: 'implement', gate: fact.build.gate, output: fact.build.output });
        const total = state.plan?.subSteps.length ?? 0;
        if (state.fixing) return { state: to(state, 'verify', { fixing: false, subStep: total }), effects: [], reason: 'fix built' };
        const next = state.subStep + 1;
        if (next < total) return { state: to(state, 'implement', { subStep: next }), effects: [], reason: `sub-step ${next + 1}/${total}` };
        return { state: to(state, 'verify', { subStep: next }), effects: [], reason: 'all sub-steps built' };
      }
      break;
    case 'verify':
      if (fact.kind === 'restricted') return backToAssess(state, fact.reason);
      if (fact.kind === 'verified') {
        const failed = fact.gates.find((g) => !g.ok);
        if (failed) return fail(state, { origin: 'verify', gate: failed.gate, output: failed.output });
        return { state: to(state, 'commit'), effects: [], reason: 'all gates passed' };
      }
      break;
    case 'reflect':
      if (fact.kind === 'reflected') return afterReflection(state, fact.reflection, fact.identicalFailure);
      break;
    case 'commit':
      if (fact.kind === 'committed') {
        const c = state.counters;
        const taskId = state.taskId ?? '?';
        switch (fact.outcome) {
          case 'promoted':
            return backToAssess(state, 'promoted', [], { counters: { ...c, commitsTotal: c.commitsTotal + 1 } });
          case 'deferred':
            return backToAssess(state, 'deferred to the judge');
          case 'decomposed':
            return backToAssess(state, 'decomposition proposed');
          case 'waiting':
            return backToAssess(state, 'promotion waiting on the user checkout');
          case 'no_change':
            return backToAssess(state, 'no change produced', [{ type: 'release_task', taskId, reason: 'the run changed no files' }]);
          case 'abandoned':
            return backToAssess(state, 'the task changed while its patch was verified; not promoted');
          case 'blocked':
            return backToAssess(state, 'the patch may not land; task blocked');
          case 'conflict':
            return backToAssess(state, 'patch does not apply on the new tip', [
              { type: 'release_task', taskId, reason: 'patch no longer applies after rebase and re-verify' },
            ]);
        }
      }
      break;
    default:
      if (isPeriodicPhase(p) && fact.kind === 'periodic_done' && fact.phase === p) {
        return backToAssess(state, `${p} done`, [], { counters: { ...state.counters, ...markerFor(p, state.counters) } });
      }
  }
  throw new InvalidTransitionError(p, fact.kind);
}
