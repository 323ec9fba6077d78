// Prompt assembly: markers scenarios match on, only what each phase needs, and the judge's
// isolation (task, diff, gates, rules; nothing the generator saw).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { followUpSection, implementPrompt, judgePrompt, planPrompt, reflectPrompt, workerPrompt } from '../../../src/loop/prompts';
import type { LoopTask } from '../../../src/loop/ports';

const task: LoopTask = {
  task_id: 'T-9',
  status: 'claimed',
  title: 'Token check',
  source: 'ES:30',
  effort: 'M',
  deps: '-',
  wave: 1,
  risk_tier: 2,
  claimed_by: 'primary',
  patch_id: null,
  deferred_reason: 'tier 2 (sensitive)',
  deferred_at: null,
};

describe('loop/prompts', () => {
  let ralphDir: string;
  before(() => {
    ralphDir = mkdtempSync(join(tmpdir(), 'ralph-prompts-'));
    mkdirSync(join(ralphDir, 'phases'));
    writeFileSync(join(ralphDir, 'core.md'), 'CORE-RULES-SECRET-SAUCE\n');
    writeFileSync(join(ralphDir, 'GUARDRAILS.md'), '# Guardrails\n- **GUARD-X** → do Y\n');
    writeFileSync(join(ralphDir, 'phases', 'plan.md'), 'PLAN-PHASE-FILE\n');
    writeFileSync(join(ralphDir, 'phases', 'review_deferred.md'), 'JUDGE-PHASE-FILE\n');
  });
  after(() => rmSync(ralphDir, { recursive: true, force: true }));
  const ctx = (): { ralphDir: string; domainConstraints: string[] } => ({
    ralphDir,
    domainConstraints: ['ALL SQL must include tenant_id'],
  });

  it('given a plan, then markers, core, guardrails, the phase file, the task and judge notes', () => {
    const p = planPrompt(ctx(), task, ['Rejected by the reviewer: too broad'], null);
    assert.match(p, /^RALPH-PHASE: plan\nRALPH-AGENT: primary\nRALPH-TASK: T-9\nRALPH-KEY: plan\/T-9\/\n/);
    for (const s of ['CORE-RULES-SECRET-SAUCE', 'GUARD-X', 'PLAN-PHASE-FILE', 'Task T-9: Token check', 'tenant_id', 'too broad'])
      assert.ok(p.includes(s), s);
  });

  it('given implement sub-steps and a fix pass, then distinct keys and the failing output tail', () => {
    const step = implementPrompt(
      ctx(),
      task,
      { index: 1, total: 3, description: 'wire it', files: ['src/a.ts'], acceptance: 'tests pass' },
      null,
      [],
    );
    assert.match(step, /RALPH-KEY: implement\/T-9\/step-2\//);
    assert.match(step, /Sub-step 2\/3: wire it/);
    const fix = implementPrompt(ctx(), task, null, { gate: 'test', output: 'x'.repeat(10_000) + '\nLAST LINE' }, [], 2);
    assert.match(fix, /RALPH-KEY: implement\/T-9\/fix-2\//);
    assert.match(fix, /LAST LINE/);
    assert.ok(Buffer.byteLength(fix) < 4500, `fix prompt ${Buffer.byteLength(fix)} bytes`);
  });

  it('given a reflect and a worker retry, then keys carry the retry and attempt', () => {
    assert.match(
      reflectPrompt(ctx(), task, { gate: 'build', output: 'err', origin: 'implement' }, 2, 3),
      /RALPH-KEY: reflect\/T-9\/2\/[\s\S]*retry 2\/3/,
    );
    assert.match(
      workerPrompt(ctx(), task, 'worker-1', { gate: 'test', output: 'boom' }, [], 2),
      /RALPH-KEY: worker\/T-9\/attempt-2\/[\s\S]*boom/,
    );
  });

  it("given a reviewer's modify and the reviewed patch applied, then every attempt's prompt says plainly what to change on top of it", () => {
    const f = { modification: 'also export MIN_LENGTH', from: 'patch' } as const;
    const sentence = 'A reviewer asked for this change on top of the patch already in your worktree: also export MIN_LENGTH';
    const prompts = [
      workerPrompt(ctx(), task, 'worker-1', null, [], 1, f),
      workerPrompt(ctx(), task, 'worker-1', { gate: 'test', output: 'boom' }, [], 2, f),
      planPrompt(ctx(), task, [], null, f),
      implementPrompt(
        ctx(),
        task,
        { index: 0, total: 1, description: 'wire it', files: ['src/a.ts'], acceptance: 'tests pass' },
        null,
        [],
        0,
        f,
      ),
    ];
    for (const p of prompts) {
      assert.ok(p.includes(sentence), p);
      // The markers scenarios match on stay first.
      assert.match(p, /^RALPH-PHASE: /);
      assert.ok(p.endsWith('\n') && !p.endsWith('\n\n'));
    }
    assert.ok(!workerPrompt(ctx(), task, 'worker-1', null, [], 1).includes('A reviewer asked'), 'no follow-up, no section');
  });

  it('given the reviewed patch no longer applies, then the prompt says it starts from scratch, why, and still carries the change', () => {
    const s = followUpSection({
      modification: 'split the check',
      from: 'scratch',
      reason: 'it no longer applies to 0123abcd (error: patch failed: src/a.ts:1)',
    });
    assert.match(s, /split the check/);
    assert.match(s, /start from scratch/);
    assert.match(s, /no longer applies to 0123abcd/);
    assert.ok(!s.includes('already in your worktree'));
    assert.ok(followUpSection({ modification: 'x'.repeat(10_000), from: 'patch' }).length < 2500, 'a huge modification is bounded');
  });

  it('given the judge, then only the task, the diff, the gate results and the rules: no core.md, no guardrails', () => {
    const j = judgePrompt(
      ctx(),
      task,
      'diff --git a/src/auth/x.ts b/src/auth/x.ts\n+ok\n',
      [{ gate: 'test', status: 'passed' }],
      ['ALL SQL must include tenant_id'],
    );
    assert.match(j, /RALPH-KEY: review_deferred\/T-9\//);
    for (const s of ['JUDGE-PHASE-FILE', 'Task T-9', 'src/auth/x.ts', 'test=passed', 'tenant_id', 'tier 2 (sensitive)'])
      assert.ok(j.includes(s), s);
    for (const s of ['CORE-RULES-SECRET-SAUCE', 'GUARD-X', 'PLAN-PHASE-FILE']) assert.ok(!j.includes(s), `judge must not see ${s}`);
  });

  it('given a huge diff, then the judge sees a bounded part and is told so', () => {
    const j = judgePrompt(ctx(), task, 'y'.repeat(100_000), [], []);
    assert.match(j, /diff truncated: 60000 more bytes/);
  });
});
