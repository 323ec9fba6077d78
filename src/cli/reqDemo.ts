// `ralph demo --req`: REQ mode end to end on a generated sample. A calculator with a
// specification.yaml of four REQs (dependencies, priorities, acceptance criteria), a
// test-utilities module and a coverage gate; `ralph init` sets it up and `ralph req run`
// builds it with the scripted model: each REQ test-first in a fresh invocation, one REQ
// failing L3 (coverage) and passing in round 2 with the failure summary, learnings carried
// on, AGENTS.md written by the orchestrator, one `ralph-loop: REQ-XXX - <title>` commit per
// REQ. The agents are the REAL `claude` CLI (pinned, .tools/) against the scripted model
// server when it is installed, else the lightweight scripted executable; both play the
// same scenario. The status contract is printed at the end.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClaudeBackend } from '../agents/claudeBackend';
import { detectConfinement } from '../agents/sandbox';
import { claudeSandbox } from '../agents/scripted/sandbox';
import type { Sandbox } from '../agents/scripted/sandbox';
import { startModelServer } from '../agents/scripted/modelServer';
import type { ModelServer } from '../agents/scripted/modelServer';
import { PINNED_CLAUDE_VERSION } from '../agents/scripted/pinnedClaude';
import type { AgentBackend, PermissionMode } from '../agents/types';
import type { ReqStatusReport } from '../domain/reqStatus';
import { reqStatusProblems } from '../domain/reqStatus';
import { CALCULATOR_BASE_FILES, chooseDemoBackend, createCalculatorProject, testsPassOnTip } from './demo';
import type { DemoBackend, DemoOptions } from './demo';
import { requireConfig } from '../project/config';
import { formatReqStatus } from '../req/cli';
import { openReqHost } from '../req/host';

const SPEC = `# REQ mode's input (seed 001): each REQ is one iteration, its ACs the acceptance criteria.
specification:
  requirements:
    - id: REQ-001
      title: Add two numbers
      description: "add(a, b) in src/add.js"
      acceptance_criteria:
        - id: AC-001-01
          criteria: "add(2, 3) is 5"
        - id: AC-001-02
          criteria: "add is exported from src/add.js"
      priority: 1
      status: pending
    - id: REQ-002
      title: Multiply two numbers
      description: "mul(a, b) in src/mul.js"
      acceptance_criteria:
        - id: AC-002-01
          criteria: "mul(4, 5) is 20"
      priority: 2
      status: pending
    - id: REQ-003
      title: Sum a list
      description: "sum(list) in src/sum.js, built on add()"
      acceptance_criteria:
        - id: AC-003-01
          criteria: "sum([1, 2, 3]) is 6"
        - id: AC-003-02
          criteria: "sum([]) is 0"
      depends_on: [REQ-001]
      priority: 1
      status: pending
    - id: REQ-004
      title: Average of a list
      description: "avg(list) in src/avg.js, built on sum()"
      acceptance_criteria:
        - id: AC-004-01
          criteria: "avg([2, 4]) is 3"
      depends_on: [REQ-003]
      priority: 1
      status: pending
`;

/** Line coverage of src/*.js: exported functions a test names, over all exported functions (c8's summary line). */
const COVERAGE = `// Coverage gate (L3): runs the suite, then prints c8's summary line for src/.
const fs = require('fs'); const path = require('path');
require('./test.js');
const names = [];
for (const f of fs.readdirSync('src').filter((f) => f.endsWith('.js'))) {
  const text = fs.readFileSync(path.join('src', f), 'utf8');
  for (const m of text.matchAll(/exports\\.([A-Za-z_]\\w*)\\s*=/g)) names.push(m[1]);
}
const tests = fs.readdirSync('test').filter((f) => f.endsWith('.test.js')).map((f) => fs.readFileSync(path.join('test', f), 'utf8')).join('\\n');
const covered = names.filter((n) => new RegExp('\\\\b' + n + '\\\\b').test(tests)).length;
const pct = names.length === 0 ? 100 : Math.round((covered * 1000) / names.length) / 10;
console.log('Lines        : ' + pct + '% ( ' + covered + '/' + names.length + ' )');
`;

const FILES: Record<string, string> = {
  ...CALCULATOR_BASE_FILES,
  'README.md': '# Calculator (Ralph Loop REQ-mode demo)\n',
  'specification.yaml': SPEC,
  'scripts/coverage.js': COVERAGE,
  'test/test-utils.js':
    "// Shared test helpers (REQ mode puts their API in every REQ's context).\nexports.eq = (a, b) => require('assert').deepStrictEqual(a, b);\n",
  'AGENTS.md': '# AGENTS.md\n\nCommonJS modules in src/, one per function; tests in test/*.test.js.\n',
};

type Tool = { tool: 'write'; path: string; content: string } | { tool: 'bash'; command: string };
const w = (path: string, content: string): Tool => ({ tool: 'write', path, content });
const round = (key: string, tools: Tool[], answer: Record<string, unknown>): Record<string, unknown> => ({
  name: key,
  match: `RALPH-KEY: ${key}`,
  turns: [{ tools, text: `Working on ${key}: tests first.` }, { text: `Done.\n\n\`\`\`json\n${JSON.stringify(answer)}\n\`\`\`` }],
});

/** The scripted model's REQ rounds: what each REQ's agent writes, test first, and answers. */
export function reqDemoScenario(): Record<string, unknown> {
  return {
    scripts: [
      round(
        'req/REQ-001/round-1/',
        [
          w(
            'test/add.test.js',
            "const { eq } = require('./test-utils.js');\nconst { add } = require('../src/add.js');\neq(add(2, 3), 5);\neq(add(-1, 1), 0);\n",
          ),
          w('src/add.js', 'exports.add = (a, b) => a + b;\n'),
        ],
        {
          req_id: 'REQ-001',
          summary: 'add() with its test',
          learnings: [
            { kind: 'permanent', text: 'Every math function is a named export of its own module in src/' },
            { kind: 'contextual', text: 'test-utils eq() is deepStrictEqual' },
          ],
          agentmd_addition: '- add(a, b) in src/add.js is the base the list functions build on.',
        },
      ),
      round(
        'req/REQ-002/round-1/',
        [
          w(
            'test/mul.test.js',
            "const { eq } = require('./test-utils.js');\nconst { mul } = require('../src/mul.js');\neq(mul(4, 5), 20);\neq(mul(0, 9), 0);\n",
          ),
          w('src/mul.js', 'exports.mul = (a, b) => a * b;\n'),
        ],
        { req_id: 'REQ-002', summary: 'mul()', learnings: [] },
      ),
      // Round 1 forgets a test for a helper it exports: L3 (coverage) fails at 50 %.
      round(
        'req/REQ-003/round-1/',
        [
          w(
            'test/sum.test.js',
            "const { eq } = require('./test-utils.js');\nconst { sum } = require('../src/sum.js');\neq(sum([1, 2, 3]), 6);\neq(sum([]), 0);\n",
          ),
          w(
            'src/sum.js',
            "const { add } = require('./add.js');\nexports.sum = (xs) => xs.reduce(add, 0);\nexports.sumOfSquares = (xs) => xs.map((x) => x * x).reduce(add, 0);\n",
          ),
        ],
        { req_id: 'REQ-003', summary: 'sum()', learnings: [] },
      ),
      // Round 2 got the failure summary: it adds the missing test (a new file; Claude Code's
      // Write does not overwrite a file this fresh session has not read).
      round(
        'req/REQ-003/round-2/',
        [
          w(
            'test/sumOfSquares.test.js',
            "const { eq } = require('./test-utils.js');\neq(require('../src/sum.js').sumOfSquares([1, 2]), 5);\n",
          ),
        ],
        {
          req_id: 'REQ-003',
          summary: 'the missing test for sumOfSquares',
          learnings: [{ kind: 'contextual', text: 'L3 counts every function: give each one a test' }],
          learnings_used: ['test-utils eq() is deepStrictEqual'],
        },
      ),
      round(
        'req/REQ-004/round-1/',
        [
          w(
            'test/avg.test.js',
            "const { eq } = require('./test-utils.js');\nconst { avg } = require('../src/avg.js');\neq(avg([2, 4]), 3);\neq(avg([5]), 5);\n",
          ),
          w('src/avg.js', "const { sum } = require('./sum.js');\nexports.avg = (xs) => sum(xs) / xs.length;\n"),
        ],
        {
          req_id: 'REQ-004',
          summary: 'avg()',
          learnings: [],
          agentmd_addition: '- avg() of an empty list is NaN: callers check the length.',
        },
      ),
      { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
    ],
  };
}

export interface ReqDemoResult {
  readonly dir: string;
  readonly backend: DemoBackend;
  readonly report: ReqStatusReport;
  readonly testsPass: boolean;
}

/** Generates the sample and runs REQ mode on it to the end, printing through `print`. */
export async function runReqDemo(print: (line: string) => void, o: DemoOptions = {}): Promise<ReqDemoResult> {
  const backend = chooseDemoBackend(o);
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'ralph-req-demo-'));
  await createCalculatorProject(dir, {
    files: FILES,
    config: {
      backends: {
        primary: backend.kind,
        worker: backend.kind,
        judge: backend.kind,
        scripted: { scenario: '.ralph/demo-scenario.json' },
        ...(backend.kind === 'claude' ? { claude: { binary: backend.binary } } : {}),
      },
      req: { coverage_command: 'node scripts/coverage.js', round_timeout: 120 },
    },
    ralphFiles: { '.ralph/demo-scenario.json': `${JSON.stringify(reqDemoScenario(), null, 2)}\n` },
  });
  print(`Sample project: ${dir} (specification.yaml: 4 REQs)`);
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  let report: ReqStatusReport;
  try {
    let agent: AgentBackend | undefined;
    if (backend.kind === 'claude') {
      server = await startModelServer(reqDemoScenario());
      sandbox = claudeSandbox(server.url);
      o.onModelServer?.(server);
      const c = requireConfig(dir).backends.claude;
      // Only the sandbox's variables reach the CLI (no credentials of the user's environment).
      agent = createClaudeBackend({
        command: c.binary,
        permissionMode: c.permission_mode as PermissionMode,
        extraArgs: c.extra_args,
        baseEnv: { ...c.env },
        // Confined as the loop's agents are (the demo's own loop does the same).
        confinement: detectConfinement('claude'),
      });
      print(`Agents: the real claude CLI ${backend.version} (${backend.binary}) against the scripted model server at ${server.url}`);
    } else {
      print(
        'Agents: the lightweight scripted claude executable (src/agents/scripted/scriptedClaude.mjs)' +
          (o.scripted === true ? ' (--scripted)' : `; the real claude CLI ${PINNED_CLAUDE_VERSION} was not found`),
      );
    }
    const host = await openReqHost({
      projectDir: dir,
      ...(agent ? { backend: agent } : {}),
      ...(sandbox ? { agentEnv: sandbox.env } : {}),
      onLine: print,
    });
    try {
      report = await host.engine.run();
    } finally {
      await host.close();
    }
  } finally {
    // The server and the throwaway home go whatever happened: the demo leaves no process.
    await server?.close();
    sandbox?.cleanup();
  }
  const problems = reqStatusProblems(report);
  if (problems.length > 0) throw new Error(`REQ status invariants do not hold: ${problems.join('; ')}`);
  print('');
  print(formatReqStatus(report).trimEnd());
  const testsPass = testsPassOnTip(dir);
  print('');
  print(`The sample's own tests on the branch tip (main): ${testsPass ? 'pass' : 'FAIL'}`);
  print(`Inspect: ${dir} (ralph req status --json, git log, AGENTS.md, .ralph/req/progress.md)`);
  return { dir, backend, report, testsPass };
}
