// The whole story in a real VS Code 1.100.3 with the packaged .vsix: a prepared repository;
// "Ralph: Initialize Project" and "Ralph: Start Loop" from the palette with the scripted
// model (configured through ralph.config.json backends); tasks move in the Backlog; a
// tier-2 patch waits in Deferred, its diff opens on click, it is approved inline and
// promoted; the judge's verdict on another tier-2 patch arrives as a notification; the
// monitor shows phase, task counts and cost; the loop stops with `git status` empty in the
// checkout; after a reload the same state.
// Screenshots of the trees and the monitor go to .artifacts/screenshots/.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { approveInline, configureScripted, FILES } from './calculatorProject';
import { git } from '../kit/git';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, startSession } from './harness';

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
    configureScripted(repo);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'ralph init');
    await wb().viewPane('Agents').locator('.welcome-view-content', { hasText: 'The loop is stopped' }).waitFor();
  });

  it('when "Ralph: Start Loop" runs, then tasks from the spec appear in the Backlog and move to done', async () => {
    judgeToast = wb()
      .waitForNotification(/CALC-4 approved by judge/, 300_000)
      .then(
        () => wb().screenshot('loop-05-judge-notification'),
        (e: unknown) => e,
      );
    await wb().runCommand('Ralph: Start Loop');
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-1' }).first().waitFor({ timeout: 120_000 });
    await wb().screenshot('loop-02-backlog-running');
    await wb().treeRows(backlog()).filter({ hasText: 'CALC-1' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 180_000 });
    await wb()
      .statusBarItem(/Ralph:/)
      .first()
      .waitFor();
  });

  it('given a tier-2 patch deferred while the judge thinks, when it is clicked, then its diff opens; approved inline, it is promoted', async () => {
    const row = wb().treeRows(deferred()).filter({ hasText: 'CALC-5' }).first();
    await row.waitFor({ timeout: 240_000 });
    await wb().screenshot('loop-03-deferred');
    // A tree refresh (another promotion) can land on the click and swallow it; a user clicks again.
    const tab = wb().page.locator('.tabs-container .tab', { hasText: 'CALC-5' }).first();
    for (let attempt = 0; ; attempt++) {
      await row.click();
      try {
        await tab.waitFor({ timeout: 10_000 });
        break;
      } catch (e) {
        if (attempt >= 2) throw e;
      }
    }
    await wb().screenshot('loop-04-deferred-diff');
    await approveInline(wb(), deferred(), 'CALC-5');
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

  it('when "Ralph: Stop Loop" runs after every task is done, then the loop stops and git status in the checkout is empty; after a window reload the Backlog shows the same state', async () => {
    for (const id of ['CALC-1', 'CALC-2', 'CALC-4', 'CALC-5']) {
      await wb().treeRows(backlog()).filter({ hasText: id }).filter({ hasText: 'done' }).first().waitFor({ timeout: 180_000 });
    }
    await wb().runCommand('Ralph: Stop Loop');
    await wb()
      .statusBarItem(/Ralph: stopped/)
      .first()
      .waitFor({ timeout: 60_000 });
    // After a full run the user's checkout shows only the user's changes (none here): promoted
    // work arrived as commits, and Ralph's derived views and logs, which it did rewrite, are
    // ignored rather than absent.
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '', 'git status after the run');
    for (const derived of ['.ralph/BACKLOG.md', '.ralph/STATE.json', '.ralph/SPEC_REGISTRY.md', '.ralph/ralph.db']) {
      assert.ok(fs.existsSync(path.join(repo, derived)), `${derived} was written`);
      assert.equal(git(repo, 'check-ignore', derived).trim(), derived);
    }
    assert.match(fs.readFileSync(path.join(repo, '.ralph', 'BACKLOG.md'), 'utf8'), /CALC-5/);
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
