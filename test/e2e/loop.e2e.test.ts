// The whole story in a real VS Code 1.100.3 with the packaged .vsix: a prepared repository;
// "Ralph: Initialize Project" and "Ralph: Start Loop" from the palette with the scripted
// model (configured through ralph.config.json backends); tasks move in the Backlog; a
// tier-2 patch waits in Deferred, its diff opens on click, it is approved inline and
// promoted; the judge's verdict on another tier-2 patch arrives as a notification; the
// monitor shows phase, task counts and cost; the loop stops; after a reload the same state.
// Screenshots of the trees and the monitor go to .artifacts/screenshots/.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, repoRoot, startSession } from './harness';

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

const FILES: Record<string, string> = {
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
  turns: [...(tools.length > 0 ? [{ tools, text: `Working on ${key}` }] : []), { text: typeof answer === 'string' ? answer : JSON.stringify(answer) }],
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
function scenario(): Record<string, unknown> {
  const add = [w('src/add.js', 'module.exports = (a, b) => a + b;\n'), w('test/add.test.js', "require('assert').equal(require('../src/add.js')(2, 3), 5);\n")];
  const mul = [w('src/mul.js', 'module.exports = (a, b) => a * b;\n'), w('test/mul.test.js', "require('assert').equal(require('../src/mul.js')(4, 3), 12);\n")];
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
        proposals: [proposal('CALC-1', 'Addition', 'M'), proposal('CALC-2', 'Multiplication', 'S'), proposal('CALC-4', 'API token check', 'M'), proposal('CALC-5', 'Token expiry', 'M')],
      }),
      say('plan/CALC-1/', [], plan('CALC-1', ['src/add.js', 'test/add.test.js'])),
      say('implement/CALC-1/', add, 'add() done'),
      say('worker/CALC-2/', mul, 'mul() done'),
      say('plan/CALC-2/', [], plan('CALC-2', ['src/mul.js', 'test/mul.test.js'])),
      say('implement/CALC-2/', mul, 'mul() done'),
      say('plan/CALC-4/', [], plan('CALC-4', ['src/auth/token.js', 'test/token.test.js'])),
      say('implement/CALC-4/', token, 'token check done'),
      say('review_deferred/CALC-4/', [], { task_id: 'CALC-4', verdict: 'approve', rationale: 'A pure length check with a test; no secrets, no I/O.', confidence: 0.86 }),
      say('plan/CALC-5/', [], plan('CALC-5', ['src/auth/expiry.js', 'test/expiry.test.js'])),
      say('implement/CALC-5/', expiry, 'expiry done'),
      // The judge thinks for a long time about CALC-5: the human decides first.
      { name: 'slow judge', match: 'RALPH-KEY: review_deferred/CALC-5/', turns: [{ hang: true }] },
      { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
    ],
  };
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
}

describe('e2e: the loop in VS Code (packaged .vsix, scripted model)', function () {
  this.timeout(600_000);
  let session: Session | undefined;
  let repo: string;
  let judgeToast: Promise<unknown> | undefined;

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    repo = await makeGitRepo(FILES);
    git(repo, 'config', 'user.name', 'E2E User');
    git(repo, 'config', 'user.email', 'e2e@ralph.invalid');
    session = await startSession(repo, { vsix: [defaultVsix], settings: { 'ralph.notifications.level': 'all' } });
  });

  after(async () => {
    await session?.dispose();
    if (process.env.RALPH_E2E_KEEP !== '1') fs.rmSync(repo, { recursive: true, force: true });
  });

  const wb = (): Session['workbench'] => session!.workbench;
  const backlog = (): ReturnType<Session['workbench']['viewPane']> => wb().viewPane('Backlog');
  const deferred = (): ReturnType<Session['workbench']['viewPane']> => wb().viewPane('Deferred');

  it('given a git repo without Ralph, when "Ralph: Initialize Project" runs from the palette, then the project is created and the welcome offers to start', async () => {
    await wb().openViewContainer('Ralph', 'ralph');
    await backlog().locator('.welcome-view-content', { hasText: 'no Ralph project' }).waitFor();
    await wb().screenshot('loop-01-welcome-initialize');
    await wb().runCommand('Ralph: Initialize Project');
    await wb().waitForNotification(/Ralph initialized/);
    assert.ok(fs.existsSync(path.join(repo, '.ralph', 'ralph.db')));
    // Configure the scripted model through ralph.config.json, as a user would pick a backend.
    const config = JSON.parse(fs.readFileSync(path.join(repo, 'ralph.config.json'), 'utf8')) as Record<string, unknown>;
    Object.assign(config, {
      build: 'node scripts/build.js',
      test: 'node scripts/test.js',
      lint: '',
      fmt: '',
      forbidden_exclude: ['test/**', 'scripts/**'],
      model: 'claude-sonnet-4-5-20250929',
      backends: {
        primary: 'scripted',
        worker: 'scripted',
        judge: 'scripted',
        scripted: { scenario: '.ralph/e2e-scenario.json', binary: path.join(repoRoot, 'test', 'kit', 'scriptedClaude.mjs') },
      },
      workers: { count: 1 },
      intervals: { primary: 1, worker: 1 },
    });
    fs.writeFileSync(path.join(repo, 'ralph.config.json'), `${JSON.stringify(config, null, 2)}\n`);
    fs.writeFileSync(path.join(repo, '.ralph', 'e2e-scenario.json'), `${JSON.stringify(scenario(), null, 2)}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'ralph init');
    await wb().viewPane('Agents').locator('.welcome-view-content', { hasText: 'The loop is stopped' }).waitFor();
  });

  it('when "Ralph: Start Loop" runs, then tasks from the spec appear in the Backlog and move to done', async () => {
    judgeToast = wb().waitForNotification(/CALC-4 approved by judge/, 300_000).then(
      () => wb().screenshot('loop-05-judge-notification'),
      (e: unknown) => e,
    );
    await wb().runCommand('Ralph: Start Loop');
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-1' }).first().waitFor({ timeout: 120_000 });
    await wb().screenshot('loop-02-backlog-running');
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-1' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 180_000 });
    await wb().statusBarItem(/Ralph:/).first().waitFor();
  });

  it('given a tier-2 patch deferred while the judge thinks, when it is clicked, then its diff opens; approved inline, it is promoted', async () => {
    const row = wb().treeRows(deferred()).filter({ hasText: 'CALC-5' }).first();
    await row.waitFor({ timeout: 240_000 });
    await wb().screenshot('loop-03-deferred');
    await row.click();
    await wb().page.locator('.tabs-container .tab', { hasText: 'CALC-5' }).first().waitFor();
    await wb().screenshot('loop-04-deferred-diff');
    await wb().hoverAndClickInlineAction('CALC-5', 'Approve Deferred Patch', deferred());
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-5' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 180_000 });
    const log = git(repo, 'log', '--format=%s', 'main');
    assert.match(log, /CALC-5/);
    assert.ok(fs.existsSync(path.join(repo, 'src', 'auth', 'expiry.js')), 'the promoted file reached the checkout');
  });

  it('then the judge verdict on the other tier-2 patch arrived as a notification', async () => {
    const r = await judgeToast;
    assert.ok(!(r instanceof Error), `no judge notification: ${String(r)}`);
  });

  it('when the monitor opens, then it shows the phase, the task counts and the cost', async () => {
    await wb().runCommand('Ralph: Show Monitor');
    const frame = wb().webviewFrame();
    await frame.locator('#phase').waitFor();
    await frame.locator('#tasks-done', { hasText: /[1-9]/ }).waitFor();
    const total = await frame.locator('#tasks-total').innerText();
    assert.match(total, /4/);
    await frame.locator('#cost-today', { hasText: '$' }).first().waitFor();
    await wb().screenshot('loop-06-monitor');
  });

  it('when "Ralph: Stop Loop" runs, then the loop stops; after a window reload the Backlog shows the same state', async () => {
    await wb().runCommand('Ralph: Stop Loop');
    await wb().statusBarItem(/Ralph: stopped/).first().waitFor({ timeout: 60_000 });
    const before = (await wb().treeRows(backlog()).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()).sort();
    await wb().runCommand('Developer: Reload Window');
    await wb().page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 120_000 });
    await wb().openViewContainer('Ralph', 'ralph');
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-5' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 60_000 });
    const after = (await wb().treeRows(backlog()).allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim()).sort();
    assert.deepEqual(after, before);
    await wb().screenshot('loop-07-after-reload');
  });
});
