// The 11 phase files (.ralph/phases/<phase>.md): the fixed part of each phase's prompt,
// written for the project's language. The harness appends the dynamic part (task, plan,
// gate output, deferred item). Each phase an agent runs ends by describing the JSON block
// that src/domain/phaseOutputs.ts validates; keep the two in step. assess, verify and
// commit run no agent (the harness picks, gates and promotes): their files say what it does.
import type { Phase } from '../../domain/phaseOutputs';
import { cmd, commonRules, gateList } from './context';
import type { TemplateContext } from './context';

function conventions(ctx: TemplateContext): string {
  return ctx.profile.conventions.map((c) => `- ${c}`).join('\n');
}

function block(json: string): string {
  return ['```json', json, '```'].join('\n');
}

const RENDER: Record<Phase, (ctx: TemplateContext) => string> = {
  assess: () => `# Phase: assess

No agent runs in this phase: the harness does it, and nothing in this file is sent to a model.

1. It applies the human decisions waiting in the inbox, retries the promotions that wait on your checkout and expires stale deferrals.
2. It takes the next ready task (pending, its dependencies done; lowest wave first, then the backlog's order), and the control plane claims it.
3. With no ready task it runs a periodic phase when one is due (evolve_goals, refactor_dry, test_integration, test_ui, review_deferred), or waits for work.

To change what is picked, change the tasks' waves, dependencies or order, not this file.
`,

  plan: (ctx) => `# Phase: plan

Write an implementation plan for the task the harness gives you. ${ctx.profile.displayName} project.

1. Read the task's source in the specs and the code it concerns. Find the files to change and the tests to add.
2. Pre-scan those files for forbidden patterns (${ctx.forbidden_patterns.map((p) => `\`${p}\``).join(', ') || 'none'}) so the plan does not add new ones.
3. Split the work into small steps (one to six for S/M tasks); each step names its files and a machine-checkable acceptance criterion (a test that passes, a command that succeeds).
4. Do not change code in this phase.

The gates that will judge the result:
${gateList(ctx)}

${commonRules()}

## Answer
${block(`{
  "task_id": "W1-003",
  "summary": "one paragraph: the approach",
  "steps": [
    { "id": 1, "description": "what to do", "files": ["src/parser.x"], "acceptance": "test parser_rejects_empty passes" }
  ],
  "files": ["src/parser.x", "tests/parser_test.x"],
  "tests": ["parser_rejects_empty"],
  "risks": ["touches the public API"]
}`)}
\`files\` lists every file the change will touch: the control plane classifies risk from it (and later from the real diff).
`,

  implement: (ctx) => `# Phase: implement

Execute exactly ONE step of the plan the harness gives you (the current sub-step), in your worktree.

1. Make the change for this step only; write or update its tests first where practical.
2. Run the build ${cmd(ctx.build)} and the unit tests ${cmd(ctx.test_unit)}; fix what you broke before answering.
3. Keep the change minimal and in the style of the surrounding code.

${ctx.profile.displayName} conventions:
${conventions(ctx)}

${commonRules()}

## Answer
${block(`{
  "step": 1,
  "summary": "what changed",
  "files_changed": ["src/parser.x"],
  "build_passed": true,
  "plan_complete": false,
  "notes": "anything the next step must know"
}`)}
\`plan_complete\` is true only when every step of the plan is done.
`,

  verify: (ctx) => `# Phase: verify

No agent runs in this phase: the harness runs the gates in the task's worktree, in this order, and stops at the first that fails (a gate without a command is skipped):

${gateList(ctx)}

A build that passed right after the last implement step counts for this phase: nothing has touched the worktree since, so the same files are not built twice. The forbidden patterns are checked on the lines the change adds, once it is captured as a patch. A failure goes to the reflect phase with the failing gate's output; a pass goes to commit. The commands are \`build\`, \`test\`, \`lint\` and \`fmt\` in ralph.config.json.
`,

  reflect: () => `# Phase: reflect

A gate or the verification failed. The harness gives you the failure output, the plan and the previous reflections for this task.

1. Diagnose the root cause from the output, not from guesses. Read the failing code.
2. Classify it:
   - \`transient\`: flaky or timing (network, rate limit, a test that passes on rerun);
   - \`recoverable\`: a mistake in the change the next attempt can fix;
   - \`environment\`: a missing tool, dependency or permission outside the code;
   - \`fundamental\`: the plan or the task itself is wrong.
3. Write one lesson the next attempt must follow, and decide: \`retry\` (same plan), \`replan\`, or \`block\` (environment or fundamental problems, or the same failure twice).
4. If the failure shows a reusable anti-pattern, add a guardrail (trigger + instruction). Do not edit files.

${commonRules()}

## Answer
${block(`{
  "class": "recoverable",
  "diagnosis": "the parser returns null on empty input; the test expects an error",
  "lesson": "return an error value for empty input instead of null",
  "decision": "retry",
  "guardrail": { "trigger": "handling empty input", "instruction": "return an explicit error, never null" }
}`)}
\`guardrail\` may be null.
`,

  commit: () => `# Phase: commit

No agent runs in this phase: the harness does it. The patch's risk tier comes from the files it really touches. Tiers 0 and 1 are promoted onto the target branch through git plumbing, so your checkout is never touched. Tier 2 is deferred to an independent judge and to you, and tier 3 is decomposed or blocked. The commit's subject is \`ralph(<task id>): <title>\`.
`,

  evolve_goals: () => `# Phase: evolve_goals

Keep the backlog true to the specs. The harness gives you the new or changed spec files (specs/, docs/, adrs/), the backlog summary and the recent history.

1. Read each given spec file. Find requirements that no existing task covers, tasks made obsolete, and tasks too big to do in one go.
2. Propose changes; never edit BACKLOG.md. Each proposal is one of:
   - \`new_task\`: a task with id \`W<wave>-<NNN>\` (next free number), title, source (spec reference such as \`ES:42.3\` or \`specs/api.md#auth\`), effort S|M|L|XL, wave, deps (\`-\` or comma-separated ids);
   - \`decompose\`: split \`parent_task\` into \`sub_tasks\` (prefer S effort);
   - \`drop_task\`: an obsolete task (a judge confirms);
   - \`reprioritize\`: move \`task_id\` from \`old_wave\` to \`new_wave\`.
3. Give each a confidence in [0, 1] and a rationale citing the spec. Prefer small S tasks with clear acceptance. At most 20 proposals.

${commonRules()}

## Answer
${block(`{
  "specs_read": ["specs/api.md"],
  "proposals": [
    {
      "proposal_type": "new_task",
      "confidence": 0.85,
      "task": { "id": "W3-035", "title": "Validate request bodies", "source": "specs/api.md#validation", "effort": "S", "wave": 3, "deps": "-" },
      "rationale": "Section Validation requires it; no task covers it"
    }
  ],
  "summary": "1 new task from specs/api.md"
}`)}
The harness writes each proposal to .ralph/proposals/ for the control plane's policy.
`,

  refactor_dry: (ctx) => `# Phase: refactor_dry

Remove duplication introduced by the recent commits (the harness lists them), without changing behaviour.

1. Read the recent diffs. Find repeated logic, copy-pasted blocks, near-identical helpers.
2. Extract or reuse one implementation; keep public APIs unchanged.
3. Run ${cmd(ctx.build)} and ${cmd(ctx.test_unit)}; both must pass. If nothing is worth changing, change nothing.

${ctx.profile.displayName} conventions:
${conventions(ctx)}

${commonRules()}

## Answer
${block(`{
  "summary": "merged two date parsers into one",
  "changes": [{ "description": "parseDate used by both handlers", "files": ["src/date.x", "src/a.x", "src/b.x"] }],
  "files_changed": ["src/date.x", "src/a.x", "src/b.x"]
}`)}
`,

  test_integration: (ctx) => `# Phase: test_integration

Run the full test suite and repair what is broken.

1. Run ${cmd(ctx.test)}. Record how many tests ran and which failed.
2. For each failure, find whether the test or the code is wrong; fix the code unless the test contradicts the spec.
3. Run the suite again; report the final state honestly (the harness re-runs it).

${commonRules()}

## Answer
${block(`{
  "passed": true,
  "tests_run": 120,
  "failures": [],
  "files_changed": [],
  "summary": "120 tests, all passing"
}`)}
\`failures\` lists what still fails: \`{ "test": "name", "message": "first line of the error" }\`.
`,

  test_ui: () => `# Phase: test_ui

Exercise the user interface end to end (browser or E2E tests) and repair what is broken.

1. Run the project's UI/E2E tests if it has them; otherwise add a small smoke test of the main user path with the project's existing E2E tooling.
2. Fix failures in the code unless the test contradicts the spec.
3. Report the final state honestly (the harness re-runs the gates).

${commonRules()}

## Answer
${block(`{
  "passed": true,
  "tests_run": 8,
  "failures": [],
  "files_changed": [],
  "summary": "8 E2E tests passing"
}`)}
`,

  review_deferred: () => `# Phase: review_deferred (independent judge)

You are an independent reviewer. You did not write this change and share no context with its author. The harness gives you ONE deferred item: the task, why it was deferred (its risk tier), the diff, and the project's rules.

1. Read the diff completely. Check correctness, security (secrets, auth, injection, data loss), migrations' reversibility, and that it does what the task says and nothing else.
2. Decide:
   - \`approve\`: safe and correct as it is;
   - \`reject\`: wrong or unsafe; the rationale tells the next attempt what to fix;
   - \`modify\`: acceptable direction but needs a specific change; describe it in \`modification\`.
3. Give your confidence in [0, 1]. Do not edit any file.

${commonRules()}

## Answer
${block(`{
  "task_id": "W2-008",
  "verdict": "approve",
  "rationale": "the migration is additive and reversible; tests cover it",
  "confidence": 0.9
}`)}
A \`modify\` verdict must carry \`"modification": "what to change"\`.
`,
};

/** The text of `.ralph/phases/<phase>.md` for this project. */
export function renderPhase(phase: Phase, ctx: TemplateContext): string {
  return RENDER[phase](ctx);
}
