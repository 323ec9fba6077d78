// A second process runs the loop (`ralph start`, the CLI) and VS Code attaches as an
// observer, in a real VS Code 1.100.3 with the packaged .vsix: the Backlog says whose loop
// it follows and moves as that process writes; the Agents view shows the writer's running
// agents (its judge reviewing CALC-5); a deferred patch approved inline goes to the writer's
// inbox and is promoted by it; "Ralph: Stop Loop" stops the other process.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { approveInline, configureScripted, FILES } from './calculatorProject';
import { git } from '../kit/git';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, repoRoot, startSession } from './harness';

const cli = path.join(repoRoot, 'dist', 'cli.js');

describe('e2e: VS Code follows a loop run by the CLI (observer)', function () {
  this.timeout(600_000);
  let session: Session | undefined;
  let repo: string;
  let loop: ChildProcess | undefined;
  let exited: Promise<number | null>;
  let output = '';

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    repo = await makeGitRepo(FILES);
    git(repo, 'config', 'user.name', 'E2E User');
    git(repo, 'config', 'user.email', 'e2e@ralph.invalid');
    const init = spawn(process.execPath, [cli, 'init', '--lang', 'generic'], { cwd: repo, stdio: 'pipe' });
    const initCode = await new Promise<number | null>((r) => init.once('exit', r));
    assert.equal(initCode, 0, 'ralph init');
    configureScripted(repo);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'ralph init');
    session = await startSession(repo, { vsix: [defaultVsix], settings: { 'ralph.notifications.level': 'verdicts' } });
  });

  after(async () => {
    if (loop && loop.exitCode === null) loop.kill('SIGTERM');
    await session?.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  const wb = (): Session['workbench'] => session!.workbench;
  const backlog = (): ReturnType<Session['workbench']['viewPane']> => wb().viewPane('Backlog');
  const deferred = (): ReturnType<Session['workbench']['viewPane']> => wb().viewPane('Deferred');

  it('given `ralph start` running in another process, then the Backlog says it follows that loop and shows its tasks moving', async () => {
    await wb().openViewContainer('Ralph', 'ralph');
    loop = spawn(process.execPath, [cli, 'start'], { cwd: repo, stdio: 'pipe' });
    loop.stdout?.on('data', (b: Buffer) => (output += b.toString()));
    loop.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    exited = new Promise((r) => loop!.once('exit', r));
    await backlog().getByText('Following the loop of another process').waitFor({ timeout: 60_000 });
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-1' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 180_000 });
  });

  it("when the deferred patch is approved inline, then the command goes to the writer's inbox and the CLI loop promotes it", async () => {
    const row = wb().treeRows(deferred()).filter({ hasText: 'CALC-5' }).first();
    await row.waitFor({ timeout: 180_000 });
    // The writer's running agents, read from its agent.* events in the store: its judge is
    // still thinking about CALC-5 (an agent that claims no task, so only those events can say).
    const agents = wb().viewPane('Agents');
    const judge = wb().treeRows(agents).filter({ hasText: 'judge' }).filter({ hasText: 'review_deferred' }).filter({ hasText: 'CALC-5' });
    await judge.first().waitFor({ timeout: 120_000 });
    await wb().screenshot('observer-writer-agents');
    await approveInline(wb(), deferred(), 'CALC-5');
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-5' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 120_000 });
    await wb().screenshot('observer-approved-via-inbox');
    const processed = fs.readdirSync(path.join(repo, '.ralph', 'inbox', 'processed'));
    assert.ok(processed.length >= 1, 'the approval went through the inbox');
  });

  it('when "Ralph: Stop Loop" runs in the window, then the CLI loop stops', async () => {
    await wb().runCommand('Ralph: Stop Loop');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000))]);
    assert.notEqual(code, 'timeout', `the CLI loop did not stop; its output:\n${output.slice(-2000)}`);
    await wb()
      .statusBarItem(/Ralph: stopped/)
      .first()
      .waitFor({ timeout: 30_000 });
  });
});
