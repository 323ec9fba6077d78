// The whole story of issue 5's evidence as a sample project for the REAL `claude` CLI: a git
// repo with a spec (six requirements), `ralph init`, a ralph.config.json naming the pinned
// claude (its sandbox env pointing at the scripted model server), and the server's scenario
// keyed by RALPH-KEY: tasks from the spec, a two-step plan, a worker's S task, a retry, a
// tier-2 patch for the judge, a tier-3 task decomposed, and a README change that meets the
// user's uncommitted edit. Shared by realClaudeFull.int.test.ts's in-process and kill -9 runs.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CALCULATOR_BASE_FILES, createCalculatorProject } from '../../../src/cli/demo';

export const STORY_TASKS = ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4', 'CALC-5', 'CALC-5a', 'CALC-5b', 'CALC-6'] as const;
/** Tasks that end done (CALC-5 is dropped for its children). */
export const STORY_DONE = STORY_TASKS.filter((t) => t !== 'CALC-5');

export const README_AGENT_LINE = 'Usage: see src/ and test/.';
export const README_USER_LINE = 'User: remember the changelog.';
export const NOTES_USER_TEXT = '# Notes\nThe maintainer keeps these; nobody else touches them.\nUser: local scribbles, never committed.\n';

const FILES: Record<string, string> = {
  ...CALCULATOR_BASE_FILES,
  // The agent changes line 3; the user appends at the end: a clean 3-way merge.
  'README.md': '# Calculator\n\nUsage: to be written.\n\n## Notes\nKept by the maintainers.\n',
  'NOTES.md': '# Notes\nThe maintainer keeps these; nobody else touches them.\n',
  'specs/calculator.md': `# Calculator specification

## CALC-1 Addition
\`add(a, b)\` returns the sum, with a unit test.

## CALC-2 Multiplication
\`mul(a, b)\` returns the product, with a unit test.

## CALC-3 Subtraction
\`sub(a, b)\` returns a minus b, with a unit test.

## CALC-4 API token check
\`src/auth/token.js\` exports \`valid(token)\`: true for strings of at least 16 characters.

## CALC-5 Key rotation
Signing keys rotate every 30 days; the rotation must be checked.

## CALC-6 Usage
The README says how to use the modules.
`,
};

type Tool = { tool: 'write'; path: string; content: string } | { tool: 'bash'; command: string };
const w = (path: string, content: string): Tool => ({ tool: 'write', path, content });
const say = (key: string, tools: Tool[], answer: unknown): Record<string, unknown> => ({
  name: key,
  match: `RALPH-KEY: ${key}`,
  turns: [
    ...(tools.length > 0 ? [{ tools, text: `Working on ${key}` }] : []),
    { text: typeof answer === 'string' ? answer : JSON.stringify(answer) },
  ],
});
const plan = (id: string, steps: { d: string; files: string[] }[]): Record<string, unknown> => ({
  task_id: id,
  summary: `Plan for ${id}`,
  steps: steps.map((s, i) => ({ id: i + 1, description: s.d, files: s.files, acceptance: 'the build and the tests pass' })),
  files: [...new Set(steps.flatMap((s) => s.files))],
});
const task = (id: string, title: string, effort: string, wave: number): Record<string, unknown> => ({
  proposal_type: 'new_task',
  confidence: 0.9,
  task: { id, title, source: id, effort, wave, deps: '-' },
  rationale: `Required by ${id} in specs/calculator.md`,
});
/** An S task may be claimed by the worker or, when it is free first, by the primary: both paths are scripted. */
const eitherAgent = (id: string, what: string, files: string[], tools: Tool[]): Record<string, unknown>[] => [
  say(`worker/${id}/`, tools, `${id} done`),
  say(`plan/${id}/`, [], plan(id, [{ d: what, files }])),
  say(`implement/${id}/step-1/`, tools, `${id} done`),
];

const README_SED = `sed -i 's|^Usage: to be written\\.$|${README_AGENT_LINE}|' README.md`;

/** The scripted model's answers for the whole story; `judgeDelayMs` keeps the judge thinking that long. */
export function storyScenario(o: { judgeDelayMs?: number } = {}): Record<string, unknown> {
  const judge = say('review_deferred/CALC-4/', [], {
    task_id: 'CALC-4',
    verdict: 'approve',
    rationale: 'A pure length check with tests; no secrets, no I/O.',
    confidence: 0.86,
  });
  if (o.judgeDelayMs !== undefined) judge.turns = [{ text: (judge.turns as { text: string }[])[0]?.text, delayMs: o.judgeDelayMs }];
  return {
    scripts: [
      say('evolve_goals/', [], {
        specs_read: ['specs/calculator.md'],
        summary: 'Six requirements, six tasks.',
        proposals: [
          task('CALC-1', 'Addition', 'M', 0),
          task('CALC-2', 'Multiplication', 'S', 0),
          task('CALC-6', 'Usage in the README', 'S', 0),
          task('CALC-3', 'Subtraction', 'M', 1),
          task('CALC-4', 'API token check', 'M', 1),
          task('CALC-5', 'Key rotation', 'M', 1),
        ],
      }),
      // CALC-1: the primary's tier-1 task with a two-step plan.
      say(
        'plan/CALC-1/',
        [],
        plan('CALC-1', [
          { d: 'Write add()', files: ['src/add.js'] },
          { d: 'Test add()', files: ['test/add.test.js'] },
        ]),
      ),
      say('implement/CALC-1/step-1/', [w('src/add.js', 'module.exports = (a, b) => a + b;\n')], 'add() written'),
      say(
        'implement/CALC-1/step-2/',
        [w('test/add.test.js', "require('assert').equal(require('../src/add.js')(2, 3), 5);\n")],
        'test written',
      ),
      // CALC-2: the worker's S task, in parallel with CALC-1.
      ...eitherAgent(
        'CALC-2',
        'Write mul() and its test',
        ['src/mul.js', 'test/mul.test.js'],
        [
          w('src/mul.js', 'module.exports = (a, b) => a * b;\n'),
          w('test/mul.test.js', "require('assert').equal(require('../src/mul.js')(4, 3), 12);\n"),
        ],
      ),
      // CALC-6: an existing file (Bash: Claude Code refuses Write on a file it has not Read).
      ...eitherAgent('CALC-6', 'Usage line in the README', ['README.md'], [{ tool: 'bash', command: README_SED }]),
      // CALC-3: the first attempt fails the test gate; reflected; fixed on retry.
      say('plan/CALC-3/', [], plan('CALC-3', [{ d: 'Write sub() and its test', files: ['src/sub.js', 'test/sub.test.js'] }])),
      say(
        'implement/CALC-3/step-1/',
        [
          w('src/sub.js', 'module.exports = (a, b) => b - a;\n'),
          w('test/sub.test.js', "require('assert').equal(require('../src/sub.js')(5, 3), 2);\n"),
        ],
        'sub() written',
      ),
      say('reflect/CALC-3/', [], {
        class: 'recoverable',
        diagnosis: 'sub() subtracts in the wrong order: 3 - 5 instead of 5 - 3.',
        lesson: 'Check argument order against the test before finishing.',
        decision: 'retry',
        guardrail: { trigger: 'non-commutative arithmetic', instruction: 'run the unit test for argument order before finishing' },
      }),
      say('implement/CALC-3/fix-1/', [{ tool: 'bash', command: "sed -i 's/b - a/a - b/' src/sub.js" }], 'order fixed'),
      // CALC-4: touches auth/ (tier 2): deferred, judged, approved.
      say('plan/CALC-4/', [], plan('CALC-4', [{ d: 'Token check with its test', files: ['src/auth/token.js', 'test/token.test.js'] }])),
      say(
        'implement/CALC-4/step-1/',
        [
          w('src/auth/token.js', "module.exports = { valid: (t) => typeof t === 'string' && t.length >= 16 };\n"),
          w(
            'test/token.test.js',
            "const { valid } = require('../src/auth/token.js');\nrequire('assert').equal(valid('x'.repeat(16)), true);\nrequire('assert').equal(valid('short'), false);\n",
          ),
        ],
        'token check written',
      ),
      judge,
      // CALC-5: plans a secrets file (tier 3): decomposed into two S tasks before it is implemented
      // (the implement script stays so a regression would show as a queued tier-3 patch).
      say('plan/CALC-5/', [], plan('CALC-5', [{ d: 'Rotation config', files: ['config/secrets.json'] }])),
      say('implement/CALC-5/step-1/', [w('config/secrets.json', '{"rotate_days": 30}\n')], 'rotation configured'),
      say('decompose/CALC-5/', [], {
        specs_read: [],
        summary: 'Keep the secrets file out of the change.',
        proposals: [
          {
            proposal_type: 'decompose',
            confidence: 0.9,
            parent_task: 'CALC-5',
            rationale: 'the schedule and its check need no secret',
            sub_tasks: [
              { id: 'CALC-5a', title: 'Rotation schedule', source: 'CALC-5', effort: 'S', wave: 1, deps: '-' },
              { id: 'CALC-5b', title: 'Rotation check', source: 'CALC-5', effort: 'S', wave: 1, deps: '-' },
            ],
          },
        ],
      }),
      ...eitherAgent('CALC-5a', 'Rotation schedule', ['src/rotation.js'], [w('src/rotation.js', 'module.exports = { days: 30 };\n')]),
      ...eitherAgent(
        'CALC-5b',
        'Rotation check',
        ['src/rotationCheck.js', 'test/rotation.test.js'],
        [
          w('src/rotationCheck.js', 'module.exports = (ageDays) => ageDays < 30;\n'),
          w('test/rotation.test.js', "require('assert').equal(require('../src/rotationCheck.js')(3), true);\n"),
        ],
      ),
      { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
    ],
  };
}

/**
 * Generates the sample, runs `ralph init`, and commits a ralph.config.json whose backends
 * are the real claude (default permission mode acceptEdits, confined by bubblewrap) with
 * `env` = the sandbox (the scripted server's URL; HOME and the CLI's config dir are the
 * agent's scratch folder, whatever the env says). A loop in
 * another process (the kill -9 run) gets everything from the config alone.
 */
export async function createStoryProject(claudeBinary: string, claudeEnv: Readonly<Record<string, string>>): Promise<string> {
  return createCalculatorProject(mkdtempSync(join(tmpdir(), 'ralph-story-')), {
    files: FILES,
    config: {
      backends: { primary: 'claude', worker: 'claude', judge: 'claude', claude: { binary: claudeBinary, env: { ...claudeEnv } } },
      // Only the story's phases: no extra evolve/refactor rounds answered by the fallback.
      periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 },
    },
  });
}

/**
 * Live processes whose environment holds `needle` (e.g. the sandbox's HOME): the claude
 * CLIs a loop started, wherever their working directory (the judge runs in a temp dir).
 */
export function processesWithEnv(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').includes(needle)) found.push(Number(entry));
    } catch {
      // gone or not ours to read
    }
  }
  return found;
}

/** The working directory of a process ('' when it is gone). */
export function cwdOf(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '';
  }
}

/** The command line of a process, for messages ('' when it is gone). */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 160);
  } catch {
    return '';
  }
}
