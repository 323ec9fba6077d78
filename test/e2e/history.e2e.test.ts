// What the agents do and did, in a real VS Code 1.100.3 with the packaged .vsix and the
// scripted model: a click on the working agent opens its transcript, which grows while the
// agent works (the agent waits for a file this test writes, so the growth is the agent's own
// pacing, not a timer); a click on the task opens its story with the transcript linked; the
// story's links, clicked, open the transcript and the file at the commit; the
// monitor's time slider moved back shows the backlog as it was, and Live the present.
// Screenshots go to .artifacts/screenshots/ (the README shows them).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FILES, useScriptedAgents } from './calculatorProject';
import { git } from '../kit/git';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, pollUntil, startSession } from './harness';

const SPEC = `# History

## HIST-1 Greeting
\`src/hello.js\` exports \`hello(name)\`, with a unit test.
`;

const GO = '.ralph-e2e-go';

function scenario(): Record<string, unknown> {
  const plan = {
    task_id: 'HIST-1',
    summary: 'Plan for HIST-1',
    steps: [{ id: 1, description: 'hello() with its test', files: ['src/hello.js', 'test/hello.test.js'], acceptance: 'the tests pass' }],
    files: ['src/hello.js', 'test/hello.test.js'],
  };
  const key = (k: string, turns: unknown[]): Record<string, unknown> => ({ name: k, match: `RALPH-KEY: ${k}`, turns });
  return {
    scripts: [
      key('evolve_goals/', [
        {
          text: JSON.stringify({
            specs_read: ['specs/history.md'],
            summary: 'One requirement.',
            proposals: [
              {
                proposal_type: 'new_task',
                confidence: 0.9,
                task: { id: 'HIST-1', title: 'Greeting', source: 'HIST-1', effort: 'S', wave: 0, deps: '-' },
                rationale: 'Required by HIST-1 in specs/history.md',
              },
            ],
          }),
        },
      ]),
      key('plan/HIST-1/', [{ text: JSON.stringify(plan) }]),
      key('implement/HIST-1/', [
        // Waits in its worktree until the test has seen this much of the transcript.
        {
          text: 'Step one: reading the task, waiting for the go-ahead',
          tools: [{ tool: 'bash', command: `while [ ! -e ${GO} ]; do sleep 0.2; done; rm -f ${GO}` }],
        },
        {
          text: 'Step two: writing hello() and its test',
          tools: [
            { tool: 'write', path: 'src/hello.js', content: 'module.exports = (name) => `hello ${name}`;\n' },
            {
              tool: 'write',
              path: 'test/hello.test.js',
              content: "require('assert').equal(require('../src/hello.js')('x'), 'hello x');\n",
            },
          ],
        },
        { text: 'hello() done' },
      ]),
      { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
    ],
  };
}

function configure(repo: string): void {
  useScriptedAgents(repo, {
    build: 'node scripts/build.js',
    test: 'node scripts/test.js',
    forbidden_exclude: ['test/**', 'scripts/**'],
  });
  fs.writeFileSync(path.join(repo, '.ralph', 'e2e-scenario.json'), `${JSON.stringify(scenario(), null, 2)}\n`);
}

describe('e2e: transcripts, the task story and the time slider (packaged .vsix, scripted model)', function () {
  this.timeout(600_000);
  let session: Session | undefined;
  let repo: string;

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    const files: Record<string, string> = { ...FILES, 'specs/history.md': SPEC };
    delete files['specs/calculator.md'];
    repo = await makeGitRepo(files);
    git(repo, 'config', 'user.name', 'E2E User');
    git(repo, 'config', 'user.email', 'e2e@ralph.invalid');
    session = await startSession(repo, { vsix: [defaultVsix], settings: { 'workbench.colorTheme': 'Default Dark Modern' } });
  });

  after(async () => {
    await session?.dispose();
    if (process.env.RALPH_E2E_KEEP !== '1') fs.rmSync(repo, { recursive: true, force: true });
  });

  const wb = (): Session['workbench'] => session!.workbench;
  const transcriptsDir = (): string => path.join(repo, '.ralph', 'logs', 'transcripts');
  const implementTranscript = (): string | undefined =>
    fs
      .readdirSync(transcriptsDir(), { withFileTypes: true })
      .map((d) => d.name)
      .filter((n) => /_primary_HIST-1\.log$/.test(n))
      .map((n) => path.join(transcriptsDir(), n))
      .find((f) => fs.readFileSync(f, 'utf8').includes('Step one'));

  it('given a running agent, when its row in the Agents view is clicked, then its transcript opens and grows while the agent works', async () => {
    await wb().openViewContainer('Ralph', 'ralph');
    await wb().runCommand('Ralph: Initialize Project');
    await wb().waitForNotification(/Ralph initialized/);
    configure(repo);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'ralph init');
    await wb().runCommand('Ralph: Start Loop');

    // The agent is waiting inside its tool call: the transcript so far ends with that call.
    let file: string | undefined;
    await pollUntil(
      'the implement transcript to show the waiting tool call',
      async () => {
        file = fs.existsSync(transcriptsDir()) ? implementTranscript() : undefined;
        return file !== undefined && fs.readFileSync(file, 'utf8').includes('tool Bash');
      },
      () => (fs.existsSync(transcriptsDir()) ? fs.readdirSync(transcriptsDir()).join(', ') : 'no transcripts yet'),
      240_000,
    );
    const agents = wb().viewPane('Agents');
    const row = wb().treeRows(agents).filter({ hasText: 'primary' }).filter({ hasText: 'HIST-1' }).first();
    await row.waitFor({ timeout: 60_000 });
    const tab = wb()
      .page.locator('.tabs-container .tab', { hasText: path.basename(file!) })
      .first();
    for (let attempt = 0; ; attempt++) {
      await row.click();
      try {
        await tab.waitFor({ timeout: 10_000 });
        break;
      } catch (e) {
        if (attempt >= 2) throw e;
      }
    }
    const editor = wb().page.locator('.editor-instance .monaco-editor .view-lines').first();
    await editor.filter({ hasText: 'Step one' }).waitFor();
    assert.doesNotMatch(await editor.innerText(), /Step two/, 'the agent has not gone past its wait yet');
    await wb().screenshot('history-01-transcript-live');

    // Let the agent go on: the document follows the file.
    const cwd = /cwd=(\S+)/.exec(fs.readFileSync(file!, 'utf8'))?.[1];
    assert.ok(cwd && fs.existsSync(cwd), `the agent's working directory from the transcript: ${String(cwd)}`);
    fs.writeFileSync(path.join(cwd, GO), 'go\n');
    await editor.filter({ hasText: 'Step two' }).waitFor({ timeout: 120_000 });
    await editor.filter({ hasText: '# ended success' }).waitFor({ timeout: 120_000 });
    assert.match(fs.readFileSync(file!, 'utf8'), /tool Write: src\/hello\.js/);
    await wb().screenshot('history-02-transcript-followed');
  });

  it('when the task is clicked in the Backlog, then its story opens and links the transcript', async () => {
    const backlog = wb().viewPane('Backlog');
    await wb().treeRows(backlog).filter({ hasText: 'HIST-1' }).filter({ hasText: 'done' }).first().waitFor({ timeout: 240_000 });
    await wb().runCommand('Ralph: Stop Loop');
    await wb()
      .statusBarItem(/Ralph: stopped/)
      .first()
      .waitFor({ timeout: 60_000 });
    await wb().treeRows(backlog).filter({ hasText: 'HIST-1' }).first().click();
    await wb().page.locator('.tabs-container .tab', { hasText: 'HIST-1' }).first().waitFor();
    const story = wb().webviewFrame().locator('body');
    await story.filter({ hasText: 'Transcripts' }).waitFor();
    assert.match(await story.innerText(), /primary implement: logs\/transcripts\/\d{17}_primary_HIST-1\.log/);
    await wb().screenshot('history-03-task-story');
  });

  it("when the story's transcript link is clicked, then that transcript opens; a file's link opens the file as it was at the commit", async () => {
    const name = path.basename(implementTranscript()!);
    // The transcript is still open from the first test: close its tab, so only the link reopens it.
    const tab = wb().page.locator('.tabs-container .tab', { hasText: name }).first();
    await tab.hover();
    await tab.locator('.tab-actions .action-label').click();
    await tab.waitFor({ state: 'detached' });
    const link = wb()
      .webviewFrame()
      .locator('a', { hasText: `logs/transcripts/${name}` });
    assert.match((await link.getAttribute('href')) ?? '', /^command:ralph\.openTranscript\?/, 'a link that runs Open Transcript');
    await link.click();
    await tab.waitFor();
    await wb().page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'Step two' }).first().waitFor();
    // Back to the story: the file it changed, at the commit it landed as.
    await wb().page.locator('.tabs-container .tab', { hasText: 'Story HIST-1' }).first().click();
    await wb().webviewFrame().locator('a', { hasText: 'src/hello.js' }).click();
    await wb().page.locator('.tabs-container .tab', { hasText: 'hello.js' }).first().waitFor();
    await wb().page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'module.exports = (name)' }).first().waitFor();
  });

  it('when the monitor slider moves back, then it shows the earlier backlog; Live shows the present again', async () => {
    await wb().runCommand('View: Close All Editors');
    await wb().runCommand('Ralph: Show Monitor');
    const frame = wb().webviewFrame();
    await frame.locator('#tasks-done', { hasText: '1' }).waitFor();
    await frame.locator('#time-label', { hasText: 'live' }).waitFor();
    // The second event of the log: the loop had started and no task was done yet.
    await frame.locator('#time-slider').evaluate((el: HTMLInputElement) => {
      el.value = '2';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await frame.locator('#time-label', { hasText: /event 2 of \d+/ }).waitFor();
    await frame.locator('#tasks-done', { hasText: '0' }).waitFor();
    assert.equal(await frame.locator('#app.past').count(), 1, 'the page says it shows the past');
    // For the picture: a moment late in the run, the task under way.
    const max = Number(await frame.locator('#time-slider').getAttribute('max'));
    const late = Math.max(3, max - 6);
    await frame.locator('#time-slider').evaluate((el: HTMLInputElement, v: number) => {
      el.value = String(v);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, late);
    await frame.locator('#time-label', { hasText: `event ${late} of ${max}` }).waitFor();
    await wb().screenshot('history-04-monitor-slider-past');
    await frame.locator('#time-live').click();
    await frame.locator('#time-label', { hasText: 'live' }).waitFor();
    await frame.locator('#tasks-done', { hasText: '1' }).waitFor();
    assert.equal(await frame.locator('#app.past').count(), 0);
    await wb().screenshot('history-05-monitor-live');
  });
});
