// The demo (`ralph demo`, the README's main job): a sample project with a spec is generated
// in a temp folder, `ralph init` sets it up, and the loop runs it to completion with the
// scripted model — tasks extracted from the spec by evolve_goals, a worker finishing a task
// in parallel with the primary, a task failing its tests once and fixed on retry, a tier-2
// patch judged and promoted — then prints the final status and where to look.
// The agents are the REAL `claude` CLI (pinned, from .tools/) talking to the scripted model
// server on 127.0.0.1 when it is installed, else the lightweight scripted executable; both
// play the same scenario. The server, sandbox and executable are product code (src/agents/scripted/).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeSandbox } from '../agents/scripted/sandbox';
import type { Sandbox } from '../agents/scripted/sandbox';
import { startModelServer } from '../agents/scripted/modelServer';
import type { ModelServer } from '../agents/scripted/modelServer';
import { findPinnedClaude, PINNED_CLAUDE_VERSION } from '../agents/scripted/pinnedClaude';
import { ralphGitEnv } from '../git/gitEnv';
import { createClaudeBackend } from '../agents/claudeBackend';
import { detectConfinement } from '../agents/sandbox';
import type { AgentBackend, PermissionMode } from '../agents/types';
import { statusText } from '../control/derived';
import { CONTROL_PROJECTIONS } from '../control/views';
import { requireConfig } from '../project/config';
import { initProject } from '../project/init';
import { openStore } from '../store/sqlJsStore';
import { formatLoopEvent, openLoopHost } from '../loop/host';
import type { LoopSummary } from '../loop/events';
import { keepingStatusImage } from '../control/statusImage';

/** The demo calculator's gates and first module: what a sample project needs to be verified. */
export const CALCULATOR_BASE_FILES: Readonly<Record<string, string>> = {
  'scripts/build.js': `// Build gate: every module under src/ must load.
const fs = require('fs'); const path = require('path');
function walk(d) { if (!fs.existsSync(d)) return []; return fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]); }
for (const f of walk('src').filter((f) => f.endsWith('.js'))) require(path.resolve(f));
console.log('build ok');
`,
  'scripts/test.js': `// Test gate: runs every test/*.test.js.
const fs = require('fs'); const path = require('path');
let n = 0;
for (const f of fs.readdirSync('test').filter((f) => f.endsWith('.test.js')).sort()) { require(path.resolve('test', f)); n++; }
console.log(n + ' test files passed');
`,
  'src/index.js': "module.exports = { name: 'calculator' };\n",
  'test/index.test.js': "require('assert').equal(require('../src/index.js').name, 'calculator');\n",
};

const FILES: Record<string, string> = {
  ...CALCULATOR_BASE_FILES,
  'README.md': '# Calculator (Ralph Loop demo)\n',
  'specs/calculator.md': `# Calculator specification

## CALC-1 Addition
\`add(a, b)\` returns the sum, with a unit test.

## CALC-2 Multiplication
\`mul(a, b)\` returns the product, with a unit test.

## CALC-3 Subtraction
\`sub(a, b)\` returns a minus b, with a unit test.

## CALC-4 API token check
\`src/auth/token.js\` exports \`valid(token)\`: true for strings of at least 16 characters.
`,
};

type Tool = { tool: 'write'; path: string; content: string } | { tool: 'bash'; command: string };
const say = (key: string, tools: Tool[], answer: unknown): Record<string, unknown> => ({
  name: key,
  match: `RALPH-KEY: ${key}`,
  turns: [
    ...(tools.length > 0 ? [{ tools, text: `Working on ${key}` }] : []),
    { text: typeof answer === 'string' ? answer : JSON.stringify(answer) },
  ],
});
const w = (path: string, content: string): Tool => ({ tool: 'write', path, content });
const plan = (id: string, steps: { d: string; files: string[] }[]): Record<string, unknown> => ({
  task_id: id,
  summary: `Plan for ${id}`,
  steps: steps.map((s, i) => ({ id: i + 1, description: s.d, files: s.files, acceptance: 'the build and the tests pass' })),
  files: [...new Set(steps.flatMap((s) => s.files))],
});
const task = (id: string, title: string, effort: string, source: string): Record<string, unknown> => ({
  proposal_type: 'new_task',
  confidence: 0.9,
  task: { id, title, source, effort, wave: 0, deps: '-' },
  rationale: `Required by ${source} in specs/calculator.md`,
});

/** The scripted model's answers, keyed by the harness's RALPH-KEY prompt markers. */
export function demoScenario(): Record<string, unknown> {
  return {
    scripts: [
      say('evolve_goals/', [], {
        specs_read: ['specs/calculator.md'],
        summary: 'Four requirements, four tasks.',
        proposals: [
          task('CALC-1', 'Addition', 'M', 'CALC-1'),
          task('CALC-2', 'Multiplication', 'S', 'CALC-2'),
          task('CALC-3', 'Subtraction', 'M', 'CALC-3'),
          task('CALC-4', 'API token check', 'M', 'CALC-4'),
        ],
      }),
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
      say(
        'worker/CALC-2/',
        [
          w('src/mul.js', 'module.exports = (a, b) => a * b;\n'),
          w('test/mul.test.js', "require('assert').equal(require('../src/mul.js')(4, 3), 12);\n"),
        ],
        'mul() done',
      ),
      say('plan/CALC-2/', [], plan('CALC-2', [{ d: 'Write mul() and its test', files: ['src/mul.js', 'test/mul.test.js'] }])),
      say(
        'implement/CALC-2/step-1/',
        [
          w('src/mul.js', 'module.exports = (a, b) => a * b;\n'),
          w('test/mul.test.js', "require('assert').equal(require('../src/mul.js')(4, 3), 12);\n"),
        ],
        'mul() done',
      ),
      say('plan/CALC-3/', [], plan('CALC-3', [{ d: 'Write sub() and its test', files: ['src/sub.js', 'test/sub.test.js'] }])),
      // First attempt: a bug the test catches.
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
      // The fix edits through Bash: the real Claude Code refuses Write/Edit on a file the
      // session has not Read first, and this is a fresh invocation.
      say('implement/CALC-3/fix-1/', [{ tool: 'bash', command: "sed -i 's/b - a/a - b/' src/sub.js" }], 'order fixed'),
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
      say('review_deferred/CALC-4/', [], {
        task_id: 'CALC-4',
        verdict: 'approve',
        rationale: 'A pure length check with tests; no secrets, no I/O.',
        confidence: 0.86,
      }),
      { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
    ],
  };
}

function git(dir: string, ...args: string[]): void {
  execFileSync('git', args, { cwd: dir, stdio: 'ignore', env: ralphGitEnv() });
}

/** Which agents the demo runs: the real CLI (its executable) or the scripted stand-in. */
export type DemoBackend = { readonly kind: 'claude'; readonly binary: string; readonly version: string } | { readonly kind: 'scripted' };

/**
 * A calculator sample: `files` committed in a new git repo on main, `ralph init` run on it,
 * then a ralph.config.json (the sample's gates and patterns, with `config` laid over them)
 * and any `ralphFiles` committed as "ralph init". Shared by the demo and the tests that
 * tell a longer story on the same sample.
 */
export async function createCalculatorProject(
  dir: string,
  opts: {
    readonly files: Readonly<Record<string, string>>;
    readonly config: Readonly<Record<string, unknown>>;
    readonly ralphFiles?: Readonly<Record<string, string>>;
  },
): Promise<string> {
  for (const [rel, text] of Object.entries(opts.files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Demo User');
  git(dir, 'config', 'user.email', 'demo@example.com');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'Calculator skeleton and spec');
  await initProject({
    dir,
    lang: 'generic',
    name: 'calculator',
    model: 'claude-sonnet-4-5-20250929',
    createDatabase: async (ralphDir) => {
      const s = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, ...keepingStatusImage(ralphDir) });
      await s.close();
    },
  });
  const config = {
    name: 'calculator',
    lang: 'generic',
    build: 'node scripts/build.js',
    test: 'node scripts/test.js',
    lint: '',
    fmt: '',
    forbidden_patterns: ['eval(', 'console.debug('],
    forbidden_exclude: ['test/**', 'scripts/**'],
    model: 'claude-sonnet-4-5-20250929',
    workers: { count: 1 },
    intervals: { primary: 1, worker: 1 },
    ...opts.config,
  };
  writeFileSync(join(dir, 'ralph.config.json'), `${JSON.stringify(config, null, 2)}\n`);
  for (const [rel, text] of Object.entries(opts.ralphFiles ?? {})) writeFileSync(join(dir, rel), text);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'ralph init');
  return dir;
}

/**
 * Generates the sample project (a git repo with a spec) and runs `ralph init` on it. The
 * config names the backend the demo runs (claude keeps permission_mode at its default,
 * acceptEdits, inside the confinement this machine offers).
 */
export async function createDemoProject(
  dir = mkdtempSync(join(tmpdir(), 'ralph-demo-')),
  backend: DemoBackend = { kind: 'scripted' },
): Promise<string> {
  return createCalculatorProject(dir, {
    files: FILES,
    config: {
      backends: {
        primary: backend.kind,
        worker: backend.kind,
        judge: backend.kind,
        scripted: { scenario: '.ralph/demo-scenario.json' },
        ...(backend.kind === 'claude' ? { claude: { binary: backend.binary } } : {}),
      },
    },
    ralphFiles: { '.ralph/demo-scenario.json': `${JSON.stringify(demoScenario(), null, 2)}\n` },
  });
}

export interface DemoResult {
  readonly dir: string;
  readonly backend: DemoBackend;
  readonly summary: LoopSummary;
  readonly testsPass: boolean;
}

export interface DemoOptions {
  /** Where to generate the sample (an empty or missing folder); default a new temp folder. */
  readonly dir?: string;
  /** Force the lightweight scripted executable even when the real claude is installed. */
  readonly scripted?: boolean;
  /** Override the real-claude lookup (tests); undefined = look in .tools/. */
  readonly claude?: { readonly binary: string; readonly version: string } | null;
  /** Called with the scripted model server once it listens (real-claude runs only; tests read its request log). */
  readonly onModelServer?: (server: ModelServer) => void;
}

/** The backend `runDemo` would use: the pinned real claude when installed, unless forced off. */
export function chooseDemoBackend(o: DemoOptions = {}): DemoBackend {
  if (o.scripted === true) return { kind: 'scripted' };
  const found = o.claude === undefined ? findPinnedClaude() : (o.claude ?? undefined);
  return found !== undefined ? { kind: 'claude', ...found } : { kind: 'scripted' };
}

/** The sample's own test gate run on a clean export of the branch tip (not the checkout). */
export function testsPassOnTip(projectDir: string, branch = 'main'): boolean {
  const tip = mkdtempSync(join(tmpdir(), 'ralph-demo-tip-'));
  try {
    execFileSync('sh', ['-c', `git -C "$1" archive "$2" | tar -x -C "$3"`, 'sh', projectDir, branch, tip], {
      stdio: 'pipe',
      env: ralphGitEnv(),
    });
    execFileSync(process.execPath, ['scripts/test.js'], { cwd: tip, stdio: 'pipe' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(tip, { recursive: true, force: true });
  }
}

/** Runs the demo end to end, printing progress through `print`. */
export async function runDemo(print: (line: string) => void, o: DemoOptions = {}): Promise<DemoResult> {
  const backend = chooseDemoBackend(o);
  const projectDir = await createDemoProject(o.dir, backend);
  print(`Sample project: ${projectDir}`);
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  let summary: LoopSummary;
  try {
    let backends: Record<'primary' | 'worker' | 'judge', AgentBackend> | undefined;
    if (backend.kind === 'claude') {
      server = await startModelServer(demoScenario());
      sandbox = claudeSandbox(server.url);
      o.onModelServer?.(server);
      const c = requireConfig(projectDir).backends.claude;
      // Only the sandbox's variables reach the CLI (no credentials of the user's environment).
      const agent = createClaudeBackend({
        command: c.binary,
        permissionMode: c.permission_mode as PermissionMode,
        extraArgs: c.extra_args,
        baseEnv: { ...c.env },
        confinement: detectConfinement('claude'),
      });
      backends = { primary: agent, worker: agent, judge: agent };
      print(
        `Agents: the real claude CLI ${backend.version} (${backend.binary}, --permission-mode ${c.permission_mode}) against the scripted model server at ${server.url}`,
      );
    } else {
      print(
        'Agents: the lightweight scripted claude executable (src/agents/scripted/scriptedClaude.mjs)' +
          (o.scripted === true
            ? ' (--scripted)'
            : `; the real claude CLI ${PINNED_CLAUDE_VERSION} was not found in ${process.env.RALPH_TOOLS_DIR ? '$RALPH_TOOLS_DIR' : '.tools/'} (node scripts/ensure-agent-clis.mjs installs it)`),
      );
    }
    const host = await openLoopHost({
      projectDir,
      once: true,
      ...(backends ? { backends } : {}),
      ...(sandbox ? { agentEnv: sandbox.env } : {}),
    });
    host.loop.events.on((e) => {
      const line = formatLoopEvent(e);
      if (line !== null && e.type !== 'summary') print(line);
    });
    try {
      summary = await host.loop.run();
      print('');
      print(statusText(host.control.ctx).trimEnd());
    } finally {
      await host.close();
    }
  } finally {
    // The server and the throwaway home go whatever happened: the demo leaves no process.
    await server?.close();
    sandbox?.cleanup();
  }
  const testsPass = testsPassOnTip(projectDir);
  print('');
  print(formatLoopEventSummary(summary));
  print(`The sample's own tests on the branch tip (main): ${testsPass ? 'pass' : 'FAIL'}`);
  print(`Inspect: ${projectDir} (.ralph/ralph.db, .ralph/BACKLOG.md, git log)`);
  return { dir: projectDir, backend, summary, testsPass };
}

function formatLoopEventSummary(s: LoopSummary): string {
  return formatLoopEvent({ type: 'summary', summary: s }) ?? '';
}
