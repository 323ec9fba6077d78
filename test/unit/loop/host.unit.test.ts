// What the CLI prints for loop events, and settings derived from a validated config.
import assert from 'node:assert/strict';
import { formatLoopEvent, formatSummary } from '../../../src/loop/host';
import { LoopUsageError, parseStartArgs } from '../../../src/cli/loopCommands';
import { idlePolicyOf, settingsFromConfig } from '../../../src/loop/settings';
import { validateConfig } from '../../../src/project/config';

describe('loop/host formatting', () => {
  it('given promotion and verdict events, then reference-style lines', () => {
    assert.equal(
      formatLoopEvent({ type: 'patch.promoted', taskId: 'T-1', patchId: 'patch_T-1_1', commit: '0123456789abcdef' }),
      'PROMOTED patch_T-1_1 → T-1 done (commit 01234567)',
    );
    assert.equal(
      formatLoopEvent({ type: 'verdict', taskId: 'T-4', verdict: 'approve', rationale: 'ok', confidence: 0.9, by: 'judge' }),
      'judge approves T-4: ok',
    );
    assert.equal(formatLoopEvent({ type: 'gate.progress', agent: 'primary', gate: 'test', line: 'x' }), null);
    assert.equal(formatLoopEvent({ type: 'log', level: 'info', agent: 'primary', message: 'idle' }), null);
  });

  it('given a summary, then counts, cost and where the time went', () => {
    const s = formatSummary({
      iterations: 9,
      invocations: 5,
      promoted: 2,
      deferred: 1,
      blocked: 0,
      released: 1,
      costUsd: 0.5,
      wallMs: 10_000,
      modelMs: 6000,
      gateMs: 3000,
      // Two agents overlapped: 9 s of their time in 8 s of wall time with one of them busy.
      busyMs: 8000,
      agentBusyMs: { 'worker-1': 4000, primary: 5000 },
      stopReason: 'backlog empty or blocked',
    });
    assert.match(s, /Stopped: backlog empty or blocked/);
    assert.match(s, /Promoted: 2 \| Deferred: 1 \| Blocked: 0 \| Released: 1/);
    assert.match(s, /some agent busy 8\.0 s \| harness alone 2\.0 s \(20 %\)/);
    assert.match(s, /^Busy: primary 5\.0 s \(50 %\) \| worker-1 4\.0 s \(40 %\)$/m);
  });
});

describe('loop/settings from ralph.config.json', () => {
  it('given defaults, then the seed limits and intervals; the gates come from the config', () => {
    const r = validateConfig({ name: 'x', lang: 'python' });
    assert.ok(r.ok);
    const s = settingsFromConfig(r.value);
    assert.equal(s.maxRetries, 3);
    assert.deepEqual(s.intervals, { evolveEvery: 5, dryEvery: 5, integEvery: 10, uiEvery: 15, overdueAt: 30, reviewAtDeferred: 3 });
    assert.equal(s.workers, 1);
    assert.deepEqual(
      s.verifyGates.map((g) => g.name),
      ['build', 'test', 'lint', 'fmt'],
    );
    assert.equal(s.verifyGates[1]?.command, 'pytest');
    assert.equal(s.budgets.perInvocationPrimary, 2.5);
    assert.ok(s.forbiddenPatterns.includes('eval('));
  });

  it('given intervals, then the primary idles by intervals.primary and each worker by intervals.worker', () => {
    const r = validateConfig({ name: 'x', lang: 'python', intervals: { primary: 2, worker: 7 } });
    assert.ok(r.ok, JSON.stringify(r));
    const s = settingsFromConfig(r.value);
    assert.deepEqual(idlePolicyOf('primary', s), { baseMs: 2000, maxMs: 12_000, factor: 1.5 });
    assert.deepEqual(idlePolicyOf('worker-2', s), { baseMs: 7000, maxMs: 42_000, factor: 1.5 });
  });

  it('given a format command, then it is the fourth verification gate, with its own timeout', () => {
    const r = validateConfig({ name: 'x', lang: 'typescript', fmt: 'npx prettier --check .', limits: { gate_timeouts: { fmt: 45 } } });
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(settingsFromConfig(r.value).verifyGates[3], { name: 'fmt', command: 'npx prettier --check .', timeoutMs: 45_000 });
  });
});

describe('cli/loopCommands argument parsing', () => {
  it('given start flags, then once, workers and quiet; bad values are usage errors', () => {
    assert.deepEqual(parseStartArgs(['--once', '--workers', '2']), { once: true, quiet: false, workers: 2 });
    assert.deepEqual(parseStartArgs(['--workers=0', '-q']), { once: false, quiet: true, workers: 0 });
    assert.throws(() => parseStartArgs(['--workers', 'x']), LoopUsageError);
    assert.throws(() => parseStartArgs(['--forever']), /unknown argument '--forever'/);
  });
});
