// Prompt sizes on a sample project: the real `ralph init` templates (core.md and the 11
// phase files for a TypeScript project), a 40-task backlog, 12 guardrails and a failing
// test tail. Prints the bytes of each phase's primary prompt, the worker, judge and
// decompose prompts, the median, and the largest sections. Targets (issue 4): primary
// median <= 4 KB, worker <= 3 KB. Prints only; never asserts.
import { buildDecomposePrompt, buildJudgePrompt, buildPrimaryPrompt, buildWorkerPrompt } from '../../src/agents/prompts';
import type { BuiltPrompt, PrimaryPromptInput, PromptTask } from '../../src/agents/prompts';
import { staticProfile } from '../../src/project/languages';
import { PHASES } from '../../src/domain/phaseOutputs';
import type { Phase } from '../../src/domain/phaseOutputs';
import type { TemplateContext } from '../../src/project/templates/context';
import { renderCore } from '../../src/project/templates/files';
import { renderPhase } from '../../src/project/templates/phases';

const profile = staticProfile('typescript');
const ctx: TemplateContext = {
  name: 'invoice-service',
  profile,
  build: profile.build,
  test: profile.test,
  test_unit: profile.test_unit,
  lint: profile.lint,
  fmt: profile.fmt,
  forbidden_patterns: profile.forbidden_patterns,
  domain_constraints: ['ALL SQL must include tenant_id', 'Money is integer cents, never floats'],
};
const core = renderCore(ctx);

const backlog: PromptTask[] = Array.from({ length: 40 }, (_, i) => {
  const wave = Math.floor(i / 10);
  const id = `W${wave}-${String((i % 10) + 1).padStart(3, '0')}`;
  return {
    id,
    title: `Implement ${['invoice parser', 'tenant filter', 'PDF export', 'currency rounding', 'audit log'][i % 5]} part ${i}`,
    status: i < 8 ? 'done' : 'pending',
    source: `ES:${10 + i}`,
    effort: (['S', 'M', 'S', 'L'] as const)[i % 4],
    deps: i % 3 === 0 && i > 0 ? `W${Math.floor((i - 1) / 10)}-${String(((i - 1) % 10) + 1).padStart(3, '0')}` : '-',
    wave,
    risk_tier: 1,
  };
});
const task = backlog[12];
if (task === undefined) throw new Error('sample backlog too short');

const guardrails = [
  '# Guardrails',
  ...Array.from(
    { length: 12 },
    (_, i) =>
      `## G-${String(i + 1).padStart(3, '0')}: ${['sql tenant filter', 'float money', 'pdf fonts', 'flaky clock', 'parser errors', 'import cycles'][i % 6]}\n- Trigger: ${['writing SQL queries', 'computing money amounts', 'exporting PDF files', 'tests using Date.now', 'parsing invoice input', 'adding imports between modules'][i % 6]}\n- Instruction: ${['always add tenant_id to WHERE', 'use integer cents', 'embed fonts explicitly', 'inject a clock', 'return typed errors with the line number', 'keep layers acyclic'][i % 6]}\n- Source: W0-00${i % 9}`,
  ),
].join('\n\n');

const state = {
  iteration: 57,
  phase: 'implement',
  current_item: task.id,
  current_plan: { steps: Array.from({ length: 5 }, (_, i) => ({ id: i + 1, description: 'long plan text '.repeat(20) })) },
  current_sub_step: 2,
  current_wave: 1,
  retry_count: 1,
  commits_total: 31,
  compile_status: 'pass',
  test_status: 'fail',
  progress_history: Array.from({ length: 50 }, (_, i) => ({ iteration: i, phase: 'plan' })),
  items_done_count: 8,
  items_pending_count: 32,
  items_total_count: 40,
};

const testTail = Array.from(
  { length: 120 },
  (_, i) => `  at Object.<anonymous> (src/invoice/parser.test.ts:${i}:13)  expected 1050 received 1049.99`,
).join('\n');
const step = {
  index: 1,
  total: 4,
  description: 'Round amounts to integer cents in the parser and reject fractional cents',
  files: ['src/invoice/parser.ts', 'src/invoice/parser.test.ts'],
  acceptance: 'test "rejects fractional cents" passes',
};

function primary(phase: Phase): BuiltPrompt {
  const base: PrimaryPromptInput = {
    phase,
    phaseText: renderPhase(phase, ctx),
    core,
    guardrails,
    constraints: ctx.domain_constraints,
    state,
    backlog,
  };
  switch (phase) {
    case 'plan':
    case 'verify':
    case 'commit':
      return buildPrimaryPrompt({ ...base, taskId: task!.id });
    case 'implement':
      return buildPrimaryPrompt({ ...base, taskId: task!.id, step });
    case 'reflect':
      return buildPrimaryPrompt({ ...base, taskId: task!.id, failure: { gate: 'test', status: 'failed', output: testTail } });
    case 'review_deferred':
      return buildPrimaryPrompt({
        ...base,
        extra:
          '## Deferred items\n- W1-004: auth middleware change (tier 2)\n- W1-007: migration 0003 (tier 2)\n- W2-001: token refresh (tier 2)',
      });
    default:
      return buildPrimaryPrompt(base);
  }
}

const rows: [string, BuiltPrompt][] = PHASES.map((p) => [`primary ${p}`, primary(p)]);
const worker = buildWorkerPrompt({ task, backlog, core, guardrails, constraints: ctx.domain_constraints });
const workerRetry = buildWorkerPrompt({
  task,
  backlog,
  core,
  guardrails,
  constraints: ctx.domain_constraints,
  failure: { gate: 'test', status: 'failed', output: testTail },
  attempt: 2,
});
const diff = Array.from(
  { length: 3 },
  (_, f) =>
    `diff --git a/src/auth/f${f}.ts b/src/auth/f${f}.ts\n--- a/src/auth/f${f}.ts\n+++ b/src/auth/f${f}.ts\n@@ -1,20 +1,30 @@\n${'+const line = computeSomething(tenantId);\n'.repeat(30)}`,
).join('');
const judge = buildJudgePrompt({
  task,
  diff,
  gates: [
    { gate: 'build', status: 'passed' },
    { gate: 'test', status: 'passed' },
    { gate: 'lint', status: 'passed' },
  ],
  rules: core,
  deferredReason: 'touches src/auth/ (tier 2)',
});
const decompose = buildDecomposePrompt({ task, files: ['config/secrets.ts', '.env.example'], core, guardrails });
rows.push(['worker', worker], ['worker (retry with gate tail)', workerRetry], ['judge (3-file diff)', judge], ['decompose', decompose]);

console.log(
  `sample: core.md ${Buffer.byteLength(core)} B, ${backlog.length} tasks, 12 guardrails, STATE.json ${Buffer.byteLength(JSON.stringify(state))} B, test tail ${Buffer.byteLength(testTail)} B`,
);
for (const [name, p] of rows) {
  const top = Object.entries(p.sections)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(`${name.padEnd(32)} ${String(p.bytes).padStart(6)} B   (${top})`);
}
const sizes = PHASES.map((p) => primary(p).bytes).sort((a, b) => a - b);
const median = sizes[Math.floor(sizes.length / 2)] ?? 0;
console.log(`primary median ${median} B (target <= 4096), max ${sizes.at(-1)} B; worker ${worker.bytes} B (target <= 3072)`);
