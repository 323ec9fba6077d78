// The calculator sample both loop e2e tests use: files with a spec, the scripted model's
// scenario keyed by RALPH-KEY (CALC-4 judged and approved, CALC-5's judge hangs so a human
// decides), and the ralph.config.json changes that select the scripted backend.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import type { Workbench } from './harness';
import { repoRoot } from './harness';

const SPEC = `# Calculator specification

## CALC-1 Addition
\`add(a, b)\` returns the sum, with a unit test.

## CALC-2 Multiplication
\`mul(a, b)\` returns the product, with a unit test.

## CALC-4 API token check
\`src/auth/token.js\` exports \`valid(token)\`: true for strings of at least 16 characters.

## CALC-5 Token expiry
\`src/auth/expiry.js\` exports \`expired(issuedAt, now)\`: true after 24 hours.
`;

export const FILES: Record<string, string> = {
  'scripts/build.js':
    "const fs = require('fs'); const path = require('path');\nfunction walk(d) { if (!fs.existsSync(d)) return []; return fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]); }\nfor (const f of walk('src').filter((f) => f.endsWith('.js'))) require(path.resolve(f));\nconsole.log('build ok');\n",
  'scripts/test.js':
    "const fs = require('fs'); const path = require('path');\nlet n = 0;\nfor (const f of fs.readdirSync('test').filter((f) => f.endsWith('.test.js')).sort()) { require(path.resolve('test', f)); n++; }\nconsole.log(n + ' test files passed');\n",
  'src/index.js': "module.exports = { name: 'calculator' };\n",
  'test/index.test.js': "require('assert').equal(require('../src/index.js').name, 'calculator');\n",
  'README.md': '# Calculator\n',
  'specs/calculator.md': SPEC,
};

type Tool = { tool: 'write'; path: string; content: string };
const w = (p: string, content: string): Tool => ({ tool: 'write', path: p, content });
const say = (key: string, tools: Tool[], answer: unknown): Record<string, unknown> => ({
  name: key,
  match: `RALPH-KEY: ${key}`,
  turns: [
    ...(tools.length > 0 ? [{ tools, text: `Working on ${key}` }] : []),
    { text: typeof answer === 'string' ? answer : JSON.stringify(answer) },
  ],
});
const plan = (id: string, files: string[]): Record<string, unknown> => ({
  task_id: id,
  summary: `Plan for ${id}`,
  steps: [{ id: 1, description: `Implement ${id} with its test`, files, acceptance: 'the build and the tests pass' }],
  files,
});
const proposal = (id: string, title: string, effort: string): Record<string, unknown> => ({
  proposal_type: 'new_task',
  confidence: 0.9,
  task: { id, title, source: id, effort, wave: 0, deps: '-' },
  rationale: `Required by ${id} in specs/calculator.md`,
});

/** The scripted model's answers, keyed by the harness's RALPH-KEY prompt markers. */
export function scenario(): Record<string, unknown> {
  const add = [
    w('src/add.js', 'module.exports = (a, b) => a + b;\n'),
    w('test/add.test.js', "require('assert').equal(require('../src/add.js')(2, 3), 5);\n"),
  ];
  const mul = [
    w('src/mul.js', 'module.exports = (a, b) => a * b;\n'),
    w('test/mul.test.js', "require('assert').equal(require('../src/mul.js')(4, 3), 12);\n"),
  ];
  const token = [
    w('src/auth/token.js', "module.exports = { valid: (t) => typeof t === 'string' && t.length >= 16 };\n"),
    w('test/token.test.js', "require('assert').equal(require('../src/auth/token.js').valid('x'.repeat(16)), true);\n"),
  ];
  const expiry = [
    w('src/auth/expiry.js', 'module.exports = { expired: (issuedAt, now) => now - issuedAt > 24 * 3600 * 1000 };\n'),
    w('test/expiry.test.js', "require('assert').equal(require('../src/auth/expiry.js').expired(0, 25 * 3600 * 1000), true);\n"),
  ];
  return {
    scripts: [
      say('evolve_goals/', [], {
        specs_read: ['specs/calculator.md'],
        summary: 'Four requirements, four tasks.',
        proposals: [
          proposal('CALC-1', 'Addition', 'M'),
          proposal('CALC-2', 'Multiplication', 'S'),
          proposal('CALC-4', 'API token check', 'M'),
          proposal('CALC-5', 'Token expiry', 'M'),
        ],
      }),
      say('plan/CALC-1/', [], plan('CALC-1', ['src/add.js', 'test/add.test.js'])),
      say('implement/CALC-1/', add, 'add() done'),
      say('worker/CALC-2/', mul, 'mul() done'),
      say('plan/CALC-2/', [], plan('CALC-2', ['src/mul.js', 'test/mul.test.js'])),
      say('implement/CALC-2/', mul, 'mul() done'),
      say('plan/CALC-4/', [], plan('CALC-4', ['src/auth/token.js', 'test/token.test.js'])),
      say('implement/CALC-4/', token, 'token check done'),
      say('review_deferred/CALC-4/', [], {
        task_id: 'CALC-4',
        verdict: 'approve',
        rationale: 'A pure length check with a test; no secrets, no I/O.',
        confidence: 0.86,
      }),
      say('plan/CALC-5/', [], plan('CALC-5', ['src/auth/expiry.js', 'test/expiry.test.js'])),
      say('implement/CALC-5/', expiry, 'expiry done'),
      // The judge thinks for a long time about CALC-5: the human decides first.
      { name: 'slow judge', match: 'RALPH-KEY: review_deferred/CALC-5/', turns: [{ hang: true }] },
      { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
    ],
  };
}

/** Points ralph.config.json at the scripted model and the sample's gates; writes the scenario. */
export function configureScripted(repo: string): void {
  useScriptedAgents(repo, {
    build: 'node scripts/build.js',
    test: 'node scripts/test.js',
    forbidden_exclude: ['test/**', 'scripts/**'],
    workers: { count: 1 },
  });
  fs.writeFileSync(path.join(repo, '.ralph', 'e2e-scenario.json'), `${JSON.stringify(scenario(), null, 2)}\n`);
}

/**
 * Hovers the Deferred row and clicks its inline Approve action, hovering again when the row
 * was re-rendered under the pointer (a refresh drops the hover, as it would for a user).
 */
export async function approveInline(wb: Workbench, pane: Locator, rowText: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const row = wb.treeRows(pane).filter({ hasText: rowText }).first();
    await row.hover();
    try {
      await row.locator('.action-label[aria-label="Approve Deferred Patch"]').click({ timeout: 5000 });
      return;
    } catch (e) {
      if (attempt >= 5) throw e;
    }
  }
}

/**
 * Points a Ralph project's ralph.config.json at the scripted agent (src/agents/scripted/
 * scriptedClaude.mjs playing `.ralph/e2e-scenario.json`) for every role, with no gates, no
 * workers and one-second intervals unless `overrides` say otherwise.
 */
export function useScriptedAgents(dir: string, overrides: Record<string, unknown> = {}): void {
  const file = path.join(dir, 'ralph.config.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  Object.assign(config, {
    build: '',
    test: '',
    lint: '',
    fmt: '',
    model: 'claude-sonnet-4-5-20250929',
    backends: {
      primary: 'scripted',
      worker: 'scripted',
      judge: 'scripted',
      scripted: { scenario: '.ralph/e2e-scenario.json', binary: path.join(repoRoot, 'src', 'agents', 'scripted', 'scriptedClaude.mjs') },
    },
    workers: { count: 0 },
    intervals: { primary: 1, worker: 1 },
    ...overrides,
  });
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
}
