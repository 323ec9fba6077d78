// Prompt builders: content (what each prompt must and must not hold) and size bounds.
import { strict as assert } from 'node:assert';
import {
  backlogSlice,
  boundDiff,
  buildDecomposePrompt,
  buildJudgePrompt,
  buildPrimaryPrompt,
  buildWorkerPrompt,
  byteLength,
  compactMarkdown,
  parseGuardrails,
  PROMPT_LIMITS,
  readyCandidates,
  selectGuardrails,
  slimState,
  tailBytes,
} from '../../../src/agents/prompts';
import type { PromptTask } from '../../../src/agents/prompts';

const backlog: PromptTask[] = [
  { id: 'W0-001', title: 'Database layer', status: 'done', effort: 'M', deps: '-', wave: 0, source: 'ES:1' },
  { id: 'W0-002', title: 'Config loader', status: 'done', effort: 'S', deps: '-', wave: 0 },
  { id: 'W1-001', title: 'Invoice parser', status: 'pending', effort: 'S', deps: 'W0-001, W0-002', wave: 1, source: 'ES:42' },
  { id: 'W1-002', title: 'Unrelated PDF export', status: 'pending', effort: 'L', deps: 'W1-001', wave: 1 },
  { id: 'W2-001', title: 'Another unrelated thing', status: 'pending', effort: 'S', deps: '-', wave: 2 },
];
const task = backlog[2] as PromptTask;
const guardrailsMd = `# Guardrails
<!-- Format: ## G-001: name ... -->
## G-001: sql tenant
- Trigger: writing SQL queries
- Instruction: always filter by tenant_id

## G-002: parser errors
- Trigger: parsing invoice input
- Instruction: return typed errors with the line number

## G-003: pdf fonts
- Trigger: exporting PDF files
- Instruction: embed fonts
`;
const core = '# Standards\n\n\n\n- Small changes.   \n<!-- editor note: not for agents -->\n- Tests always.\n';

describe('agents/prompts', () => {
  describe('helpers', () => {
    it('compacts markdown without changing its meaning', () => {
      assert.equal(compactMarkdown(core), '# Standards\n\n- Small changes.\n\n- Tests always.');
    });

    it('keeps a bounded tail from a line start and says what was cut', () => {
      const text = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
      const t = tailBytes(text, 200);
      assert.ok(byteLength(t) <= 240);
      assert.ok(t.endsWith('line 499'));
      assert.match(t, /^\[… \d+ earlier bytes omitted\]\nline \d+\n/);
      assert.equal(tailBytes('short', 200), 'short');
    });

    it('slices the backlog to the task and its direct dependencies', () => {
      assert.deepEqual(
        backlogSlice(backlog, 'W1-001').map((t) => t.id),
        ['W1-001', 'W0-001', 'W0-002'],
      );
      assert.deepEqual(backlogSlice(backlog, 'nope'), []);
    });

    it('lists ready candidates: pending with dependencies done, lowest wave first', () => {
      assert.deepEqual(
        readyCandidates(backlog).map((t) => t.id),
        ['W1-001', 'W2-001'],
      );
    });

    it('reduces STATE.json to one line of scalar facts', () => {
      const line = slimState({
        iteration: 3,
        phase: 'plan',
        current_plan: { huge: 'x'.repeat(5000) },
        progress_history: [1, 2, 3],
        retry_count: 0,
        items_done_count: 2,
        items_total_count: 5,
      });
      assert.equal(line, 'iteration=3 · phase=plan · retry_count=0 · items done=2 total=5');
    });

    it('parses guardrails and picks the relevant ones first, within the limits', () => {
      const all = parseGuardrails(guardrailsMd);
      assert.deepEqual(
        all.map((g) => g.id),
        ['G-001', 'G-002', 'G-003'],
      );
      assert.equal(all[1]?.instruction, 'return typed errors with the line number');
      const chosen = selectGuardrails(all, 'Invoice parser: parsing input files', 1);
      assert.deepEqual(
        chosen.map((g) => g.id),
        ['G-002'],
      );
      const many = Array.from({ length: 50 }, (_, i) => ({ id: `G-${i}`, name: 'n', trigger: 't', instruction: 'x'.repeat(100) }));
      const picked = selectGuardrails(many, '');
      assert.ok(picked.length <= PROMPT_LIMITS.guardrailCount);
      assert.deepEqual(picked.map((g) => g.id).slice(-1), ['G-49'], 'most recent first when nothing is relevant');
    });

    it('parses the one-line guardrails the harness appends after a reflection, in file order', () => {
      const md = `${guardrailsMd}\n- **running migrations in tests** → use a fresh schema per test (T-9, 2026-11-29)\n`;
      const all = parseGuardrails(md);
      assert.deepEqual(
        all.map((g) => g.id),
        ['G-001', 'G-002', 'G-003', 'L-1'],
      );
      assert.equal(all[3]?.trigger, 'running migrations in tests');
      assert.equal(all[3]?.instruction, 'use a fresh schema per test (T-9, 2026-11-29)');
    });

    it('bounds a diff by whole files and names the ones left out', () => {
      const file = (n: number): string => `diff --git a/f${n}.ts b/f${n}.ts\n${'+x\n'.repeat(100)}`;
      const out = boundDiff(file(1) + file(2) + file(3), 700);
      assert.ok(out.includes('a/f1.ts') && out.includes('a/f2.ts'));
      assert.match(out, /not shown: f3\.ts \(\d+ bytes\)/);
    });
  });

  describe('primary', () => {
    it('given a task phase, then the prompt holds markers, core, phase text, slim state, the task and its deps only', () => {
      const p = buildPrimaryPrompt({
        phase: 'plan',
        phaseText: '# Phase: plan\nWrite the plan.',
        core,
        guardrails: guardrailsMd,
        state: { iteration: 7, phase: 'plan' },
        backlog,
        taskId: 'W1-001',
        constraints: ['ALL SQL must include tenant_id'],
      });
      assert.match(p.text, /^RALPH-PHASE: plan\nRALPH-AGENT: primary\nRALPH-TASK: W1-001\nRALPH-KEY: plan\/W1-001\/\n/);
      for (const s of [
        '# Standards',
        'Write the plan.',
        'iteration=7',
        '## Task W1-001: Invoice parser\n[pending] (S, wave 1, src ES:42, deps W0-001,W0-002)',
        '- W0-001 [done] Database layer',
        'ALL SQL must include tenant_id',
        'G-002',
      ]) {
        assert.ok(p.text.includes(s), `missing ${s}`);
      }
      for (const s of ['Unrelated PDF export', 'Another unrelated thing', 'editor note', 'Format:'])
        assert.ok(!p.text.includes(s), `leaked ${s}`);
      assert.equal(p.bytes, byteLength(p.text));
      assert.equal(
        Object.values(p.sections).reduce((a, b) => a + b, 0),
        p.bytes,
      );
    });

    it('given reflect with a huge gate output, then only a bounded tail is sent', () => {
      const output = Array.from({ length: 5000 }, (_, i) => `FAIL test ${i}`).join('\n');
      const p = buildPrimaryPrompt({
        phase: 'reflect',
        phaseText: 'reflect',
        core,
        backlog,
        taskId: 'W1-001',
        failure: { gate: 'test', status: 'failed', output },
      });
      assert.ok(p.text.includes('FAIL test 4999'));
      assert.ok(!p.text.includes('FAIL test 10\n'));
      assert.ok((p.sections.failure ?? 0) <= PROMPT_LIMITS.gateTailBytes + 200);
    });

    it('given a rejected previous answer, then the reason is included, bounded', () => {
      const p = buildPrimaryPrompt({
        phase: 'plan',
        phaseText: 'plan',
        core,
        backlog,
        taskId: 'W1-001',
        rejection: `steps[0].files: required\n${'x'.repeat(5000)}`,
      });
      assert.match(p.text, /## Your previous answer was rejected by the harness\nsteps\[0\]\.files: required/);
      assert.ok((p.sections.rejection ?? 0) <= PROMPT_LIMITS.rejectionBytes + 200);
    });

    it('given assess, then ready candidates are listed instead of a task', () => {
      const p = buildPrimaryPrompt({ phase: 'assess', phaseText: 'assess', core, backlog });
      assert.match(p.text, /## Ready tasks\n- W1-001 .*\n- W2-001/);
      assert.match(p.text, /RALPH-TASK: -/);
    });

    it('given implement, then the sub-step is included', () => {
      const p = buildPrimaryPrompt({
        phase: 'implement',
        phaseText: 'impl',
        core,
        backlog,
        taskId: 'W1-001',
        key: 'step-2',
        step: { index: 1, total: 3, description: 'Add rounding', files: ['src/a.ts'], acceptance: 'test passes' },
      });
      assert.match(p.text, /RALPH-KEY: implement\/W1-001\/step-2\//);
      assert.match(p.text, /## Sub-step 2\/3: Add rounding\nFiles: src\/a\.ts\nAcceptance: test passes/);
    });
  });

  describe('worker', () => {
    it('given a task, then a lean full-cycle prompt under 3 KB with core, task, deps and instructions', () => {
      const p = buildWorkerPrompt({ task, backlog, core, guardrails: guardrailsMd, agent: 'worker-b' });
      assert.ok(p.bytes < 3072, `${p.bytes} B`);
      assert.match(p.text, /RALPH-PHASE: worker\nRALPH-AGENT: worker-b\nRALPH-TASK: W1-001\nRALPH-KEY: worker\/W1-001\/attempt-1\//);
      assert.ok(p.text.includes('Do not commit'));
      assert.ok(p.text.includes('W0-002'));
      assert.ok(!p.text.includes('Unrelated PDF export'));
    });

    it('given a failed attempt, then the bounded gate tail is included', () => {
      const p = buildWorkerPrompt({
        task,
        core,
        failure: { gate: 'lint', status: 'failed', output: 'x'.repeat(10_000) + '\nno-unused-vars at a.ts:3' },
        attempt: 2,
      });
      assert.ok(p.text.includes('no-unused-vars at a.ts:3'));
      assert.ok(p.bytes < 3072);
    });
  });

  describe('judge', () => {
    it('holds only the task, the diff, the gate results and the rules', () => {
      const diff = 'diff --git a/src/auth/x.ts b/src/auth/x.ts\n+const ok = 1;\n';
      const p = buildJudgePrompt({
        task,
        diff,
        gates: [
          { gate: 'build', status: 'passed' },
          { gate: 'test', status: 'failed', output: 'boom' },
        ],
        rules: ['No secrets in code'],
        deferredReason: 'touches src/auth/',
      });
      assert.deepEqual(Object.keys(p.sections), ['header', 'instructions', 'task', 'gates', 'rules', 'diff', 'answer']);
      assert.match(p.text, /RALPH-AGENT: judge/);
      assert.ok(p.text.includes('+const ok = 1;'));
      assert.ok(p.text.includes('Task W1-001: Invoice parser\n[pending] (S, wave 1, src ES:42, deps W0-001,W0-002)'));
      assert.ok(p.text.includes('Gate results: build=passed, test=failed\n- test failed:\n  boom'));
      assert.ok(p.text.includes('- No secrets in code'));
      assert.ok(p.text.includes('Deferred because: touches src/auth/'));
      assert.match(p.text, /"verdict": "approve" \| "reject" \| "modify"/);
    });

    it('bounds a huge diff', () => {
      const diff = Array.from({ length: 50 }, (_, i) => `diff --git a/f${i} b/f${i}\n${'+y\n'.repeat(1000)}`).join('');
      const p = buildJudgePrompt({ task, diff, gates: [], rules: 'rules' });
      assert.ok(p.bytes < PROMPT_LIMITS.diffBytes + 2000);
      assert.match(p.text, /diff truncated; not shown: /);
      const wide = buildJudgePrompt({ task, diff, gates: [], rules: 'rules', diffBytes: 40_000 });
      assert.ok(wide.bytes > PROMPT_LIMITS.diffBytes + 2000 && wide.bytes < 40_000 + 2000, `${wide.bytes} B`);
    });
  });

  describe('decompose', () => {
    it('names the restricted files and asks for a decompose proposal of the parent', () => {
      const p = buildDecomposePrompt({ task, files: ['config/secrets.ts'], core });
      assert.ok(p.text.includes('- config/secrets.ts'));
      assert.match(p.text, /"proposal_type": "decompose", "parent_task": "W1-001"/);
      assert.match(p.text, /RALPH-PHASE: decompose/);
    });
  });
});
