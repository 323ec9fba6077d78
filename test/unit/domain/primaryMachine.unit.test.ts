// The primary's transition function (the harness decides, not the agent) and the periodic
// override order (seed Phase Reference; evolve once per spec change).
import assert from 'node:assert/strict';
import {
  DEFAULT_INTERVALS,
  initialPrimaryState,
  InvalidTransitionError,
  MAX_RETRIES,
  PHASES,
  periodicOverride,
  transition,
  type AssessFacts,
  type PhaseFact,
  type PrimaryState,
} from '../../../src/domain/primaryMachine';

const noFacts: AssessFacts = {
  deferredCount: 0,
  deferredWaitedLong: false,
  backlogEmpty: false,
  specsChanged: false,
  hasUiTests: true,
  hasIntegrationTests: true,
};

const plan2 = { subSteps: [{ title: 'types' }, { title: 'impl' }] };
const ok = (gate: string) => ({ gate, ok: true, output: '' });
const bad = (gate: string, output = 'boom') => ({ gate, ok: false, output });

function run(state: PrimaryState, ...facts: PhaseFact[]): PrimaryState {
  return facts.reduce((s, f) => transition(s, f).state, state);
}

describe('loop/primaryMachine', () => {
  it('has the 11 phases', () => {
    assert.equal(PHASES.length, 11);
  });

  describe('transition', () => {
    it('given a claimed task and a 2-step plan, when each sub-step builds and gates pass, then assess→plan→implement×2→verify→commit→assess with a commit counted', () => {
      let s = initialPrimaryState();
      const seen: string[] = [s.phase];
      for (const f of [
        { kind: 'claimed', taskId: 'T-1' },
        { kind: 'planned', plan: plan2 },
        { kind: 'implemented', build: ok('build') },
        { kind: 'implemented', build: ok('build') },
        { kind: 'verified', gates: [ok('build'), ok('test'), ok('lint')] },
        { kind: 'committed', outcome: 'promoted' },
      ] as PhaseFact[]) {
        s = transition(s, f).state;
        seen.push(s.phase);
      }
      assert.deepEqual(seen, ['assess', 'plan', 'implement', 'implement', 'verify', 'commit', 'assess']);
      assert.equal(s.counters.commitsTotal, 1);
      assert.equal(s.taskId, null);
    });

    it('given a plan with no sub-steps, then it is a plan failure sent to reflect', () => {
      const s = run(initialPrimaryState(), { kind: 'claimed', taskId: 'T' }, { kind: 'planned', plan: { subSteps: [] } });
      assert.equal(s.phase, 'reflect');
      assert.equal(s.lastFailure?.origin, 'plan');
    });

    it('given a failing build after a sub-step, then reflect with the build output; recoverable → same sub-step again', () => {
      let s = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T' },
        { kind: 'planned', plan: plan2 },
        { kind: 'implemented', build: ok('build') },
      );
      assert.equal(s.subStep, 1);
      s = run(s, { kind: 'implemented', build: bad('build', 'TS2322') });
      assert.equal(s.phase, 'reflect');
      assert.deepEqual(s.lastFailure, { origin: 'implement', gate: 'build', output: 'TS2322' });
      const t = transition(s, { kind: 'reflected', reflection: 'recoverable', identicalFailure: false });
      assert.equal(t.state.phase, 'implement');
      assert.equal(t.state.subStep, 1);
      assert.equal(t.state.retryCount, 1);
      assert.equal(t.effects[0]?.type, 'record_lesson');
    });

    it('given a test gate failure in verify, when recoverable, then a fix pass in implement goes straight back to verify', () => {
      let s = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T' },
        { kind: 'planned', plan: { subSteps: [{ title: 'a' }] } },
        { kind: 'implemented', build: ok('build') },
        { kind: 'verified', gates: [ok('build'), bad('test', '1 failing')] },
      );
      assert.equal(s.phase, 'reflect');
      s = run(s, { kind: 'reflected', reflection: 'recoverable', identicalFailure: false });
      assert.equal(s.phase, 'implement');
      assert.equal(s.fixing, true);
      s = run(s, { kind: 'implemented', build: ok('build') });
      assert.equal(s.phase, 'verify');
      s = run(s, { kind: 'verified', gates: [ok('test')] });
      assert.equal(s.phase, 'commit');
    });

    it('given a transient verify failure, then verify is re-run without code changes', () => {
      const s = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T' },
        { kind: 'planned', plan: { subSteps: [{ title: 'a' }] } },
        { kind: 'implemented', build: ok('build') },
        { kind: 'verified', gates: [bad('test')] },
        { kind: 'reflected', reflection: 'transient', identicalFailure: false },
      );
      assert.equal(s.phase, 'verify');
    });

    it(`given ${MAX_RETRIES} retries used, when it fails again, then the task is blocked with the reason`, () => {
      let s = run(initialPrimaryState(), { kind: 'claimed', taskId: 'T-9' }, { kind: 'planned', plan: { subSteps: [{ title: 'a' }] } });
      for (let i = 0; i < MAX_RETRIES; i++) {
        s = run(s, { kind: 'implemented', build: bad('build') }, { kind: 'reflected', reflection: 'recoverable', identicalFailure: false });
        assert.equal(s.phase, 'implement');
      }
      s = run(s, { kind: 'implemented', build: bad('build', 'still') });
      const t = transition(s, { kind: 'reflected', reflection: 'recoverable', identicalFailure: false });
      assert.equal(t.state.phase, 'assess');
      const block = t.effects.find((e) => e.type === 'block_task');
      assert.ok(block && block.type === 'block_task');
      assert.equal(block.taskId, 'T-9');
      assert.match(block.reason, /3 retries exhausted: build failed in implement/);
    });

    it('given a fundamental reflection, then blocked at once; environment releases and backs off', () => {
      const failing = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T' },
        { kind: 'planned', plan: plan2 },
        { kind: 'implemented', build: bad('build') },
      );
      const f = transition(failing, { kind: 'reflected', reflection: 'fundamental', identicalFailure: false });
      assert.equal(f.state.phase, 'assess');
      assert.ok(f.effects.some((e) => e.type === 'block_task'));
      const e = transition(failing, { kind: 'reflected', reflection: 'environment', identicalFailure: false });
      assert.deepEqual(
        e.effects.map((x) => x.type),
        ['record_lesson', 'release_task', 'backoff'],
      );
    });

    it('given the identical failure twice, then the harness replans instead of retrying the same fix', () => {
      const failing = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T' },
        { kind: 'planned', plan: plan2 },
        { kind: 'implemented', build: bad('build') },
      );
      const s = run(failing, { kind: 'reflected', reflection: 'recoverable', identicalFailure: true });
      assert.equal(s.phase, 'plan');
      assert.equal(s.plan, null);
      assert.equal(s.retryCount, 1);
    });

    it('given an invalid plan output, then reflect and a replan on retry', () => {
      const s = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T' },
        { kind: 'plan_invalid', error: 'subSteps: required' },
        { kind: 'reflected', reflection: 'recoverable', identicalFailure: false },
      );
      assert.equal(s.phase, 'plan');
    });

    it('given a restricted plan or change, then back to assess with no commit, no retry and no release (the harness decomposed or blocked it)', () => {
      const planned = run(initialPrimaryState(), { kind: 'claimed', taskId: 'T-3' });
      const fromPlan = transition(planned, { kind: 'restricted', reason: 'plan is tier 3: config/.env' });
      assert.equal(fromPlan.state.phase, 'assess');
      assert.equal(fromPlan.state.taskId, null);
      assert.deepEqual(fromPlan.effects, []);
      const verifying = run(
        planned,
        { kind: 'planned', plan: { subSteps: [{ title: 'a' }] } },
        { kind: 'implemented', build: ok('build') },
      );
      const fromVerify = transition(verifying, { kind: 'restricted', reason: 'change is tier 3' });
      assert.equal(fromVerify.state.phase, 'assess');
      assert.equal(fromVerify.state.counters.commitsTotal, 0);
      assert.deepEqual(fromVerify.effects, []);
    });

    it('given a patch blocked at commit (control files), then back to assess without releasing the task', () => {
      const s = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T-4' },
        { kind: 'planned', plan: { subSteps: [{ title: 'a' }] } },
        { kind: 'implemented', build: ok('build') },
        { kind: 'verified', gates: [ok('test')] },
      );
      const t = transition(s, { kind: 'committed', outcome: 'blocked' });
      assert.equal(t.state.phase, 'assess');
      assert.ok(!t.effects.some((e) => e.type === 'release_task'));
      assert.equal(t.state.counters.commitsTotal, 0);
    });

    it('given a run that changed nothing, then the task is released with a reason', () => {
      const s = run(
        initialPrimaryState(),
        { kind: 'claimed', taskId: 'T-5' },
        { kind: 'planned', plan: { subSteps: [{ title: 'a' }] } },
        { kind: 'implemented', build: ok('build') },
        { kind: 'verified', gates: [ok('test')] },
      );
      const t = transition(s, { kind: 'committed', outcome: 'no_change' });
      assert.deepEqual(t.effects, [{ type: 'release_task', taskId: 'T-5', reason: 'the run changed no files' }]);
      assert.equal(t.state.counters.commitsTotal, 0);
    });

    it('given a periodic decision in assess, then that phase runs and its marker is set when done', () => {
      const s0 = initialPrimaryState({ commitsTotal: 7 });
      const s1 = run(s0, { kind: 'periodic', decision: { phase: 'refactor_dry', reason: 'r' } });
      assert.equal(s1.phase, 'refactor_dry');
      const s2 = run(s1, { kind: 'periodic_done', phase: 'refactor_dry' });
      assert.equal(s2.phase, 'assess');
      assert.equal(s2.counters.lastDryAt, 7);
    });

    it('given no work in assess, then stay in assess with an idle effect', () => {
      const t = transition(initialPrimaryState(), { kind: 'no_work' });
      assert.equal(t.state.phase, 'assess');
      assert.equal(t.effects[0]?.type, 'idle');
    });

    it('given a fact that does not fit the phase, then InvalidTransitionError', () => {
      assert.throws(() => transition(initialPrimaryState(), { kind: 'verified', gates: [] }), InvalidTransitionError);
    });

    it('given an agent crash in a periodic phase, then back to assess with the marker set (no capture loop)', () => {
      const s1 = run(initialPrimaryState({ commitsTotal: 5 }), { kind: 'periodic', decision: { phase: 'evolve_goals', reason: 'r' } });
      const t = transition(s1, { kind: 'agent_failed', error: 'crashed' });
      assert.equal(t.state.phase, 'assess');
      assert.equal(t.state.counters.lastEvolveAt, 5);
    });
  });

  describe('periodicOverride', () => {
    const c = (commitsTotal: number, last: Partial<{ e: number; d: number; i: number; u: number }> = {}) => ({
      commitsTotal,
      lastEvolveAt: last.e ?? commitsTotal,
      lastDryAt: last.d ?? commitsTotal,
      lastIntegAt: last.i ?? commitsTotal,
      lastUiAt: last.u ?? commitsTotal,
    });

    it('given an empty backlog and changed specs, then evolve_goals first', () => {
      assert.equal(periodicOverride(c(0), { ...noFacts, backlogEmpty: true, specsChanged: true })?.phase, 'evolve_goals');
    });

    it('given an empty backlog and unchanged specs, then no evolve on every cycle', () => {
      assert.equal(periodicOverride(c(3, { e: 0 }), { ...noFacts, backlogEmpty: true, specsChanged: false }), null);
      assert.equal(periodicOverride(c(6, { e: 0 }), { ...noFacts, backlogEmpty: true, specsChanged: false })?.phase, undefined);
    });

    it('given integration tests > 30 commits overdue, then test_integration before review_deferred', () => {
      assert.equal(periodicOverride(c(31, { i: 0 }), { ...noFacts, deferredCount: 5 })?.phase, 'test_integration');
      assert.equal(periodicOverride(c(31, { u: 0 }), { ...noFacts, deferredCount: 5 })?.phase, 'test_ui');
    });

    it('given ≥3 deferred or one that waited long, then review_deferred', () => {
      assert.equal(periodicOverride(c(2), { ...noFacts, deferredCount: 3 })?.phase, 'review_deferred');
      assert.equal(periodicOverride(c(2), { ...noFacts, deferredCount: 2 }), null);
      assert.equal(periodicOverride(c(2), { ...noFacts, deferredCount: 1, deferredWaitedLong: true })?.phase, 'review_deferred');
    });

    it('given the every-N counters, then evolve (5), refactor (5), integration (10), ui (15) in that order', () => {
      assert.equal(periodicOverride(c(5, { e: 0, d: 0 }), noFacts)?.phase, 'evolve_goals');
      assert.equal(periodicOverride(c(5, { d: 0 }), noFacts)?.phase, 'refactor_dry');
      assert.equal(periodicOverride(c(10, { i: 0 }), noFacts)?.phase, 'test_integration');
      assert.equal(periodicOverride(c(15, { u: 0 }), noFacts)?.phase, 'test_ui');
      assert.equal(periodicOverride(c(14, { u: 0 }), noFacts), null);
    });

    it('given no UI test command, then test_ui never triggers', () => {
      assert.equal(periodicOverride(c(40, { u: 0 }), { ...noFacts, hasUiTests: false }), null);
    });

    it('uses the seed intervals by default', () => {
      assert.deepEqual(DEFAULT_INTERVALS, { evolveEvery: 5, dryEvery: 5, integEvery: 10, uiEvery: 15, overdueAt: 30, reviewAtDeferred: 3 });
    });
  });
});
