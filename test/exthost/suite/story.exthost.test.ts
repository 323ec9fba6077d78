// A task's story links the commit it landed as, inside VS Code 1.100.3's real extension host
// over the workspace's real store and git: the story document lists the commit's files, each
// link runs the command it names — the commit's link opens its diff (every file between its
// parent and itself, read-only `ralph-git:` documents served by `git cat-file`), a file's
// link opens the file as it was at that commit.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { cliGitPort } from '../../../src/cli/gitPort';
import { controlContext } from '../../../src/control/context';
import { promotePatch, queuePatch } from '../../../src/control/patches';
import { decideAndAppend, transitionTask } from '../../../src/control/tasks';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { domainEvent } from '../../../src/domain/events';
import type { RalphApi } from '../../../src/extension/extension';
import { Commands, Schemes } from '../../../src/extension/ids';
import { ChatIds } from '../../../src/extension/chat/chatIds';
import { openStore } from '../../../src/store';
import { until } from './until';
import { git } from '../../kit/git';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

/** The command and arguments of a markdown `command:` link whose text is `text`. */
function commandLink(markdown: string, text: string): { command: string; args: unknown[] } {
  const m = new RegExp(`\\[${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\]\\(command:([\\w.]+)\\?([^)]*)\\)`).exec(markdown);
  assert.ok(m, `no command link "${text}" in:\n${markdown}`);
  return { command: m[1]!, args: JSON.parse(decodeURIComponent(m[2]!)) as unknown[] };
}

describe('exthost: the task story links its commit and the files it changed', function () {
  this.timeout(120_000);
  let api: RalphApi;
  let dir: string;
  let sha: string;

  before(async () => {
    const ext = vscode.extensions.getExtension<RalphApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    dir = api.engine!.projectDir;
    // A promotion commit: one file modified, one added (earlier suites initialized the folder).
    fs.mkdirSync(path.join(dir, 'src', 'story'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src', 'story', 'base.js'), 'module.exports = 1;\n');
    git(dir, 'add', 'src/story/base.js');
    git(dir, 'commit', '-q', '-m', 'story: before');
    fs.writeFileSync(path.join(dir, 'src', 'story', 'base.js'), 'module.exports = 2;\n');
    fs.writeFileSync(path.join(dir, 'src', 'story', 'added.js'), "module.exports = 'added';\n");
    git(dir, 'add', 'src/story/base.js', 'src/story/added.js');
    git(dir, 'commit', '-q', '-m', 'ralph(STORY-1): base becomes 2');
    sha = git(dir, 'rev-parse', 'HEAD');
    // The task's events, as the loop writes them (a short-lived writer, as another process).
    const ralphDir = path.join(dir, '.ralph');
    const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      const ctx = controlContext(store, { ralphDir, projectDir: dir, git: cliGitPort(dir) });
      await decideAndAppend(ctx, () => ({
        events: [
          domainEvent('task.created', 'STORY-1', 'test', {
            title: 'Base 2',
            source: 'specs/s.md',
            effort: 'S',
            deps: '-',
            wave: 0,
            provenance: 'spec',
          }),
        ],
        result: undefined,
      }));
      await transitionTask(ctx, { taskId: 'STORY-1', status: 'claimed', actor: 'primary' });
      const patchId = await queuePatch(ctx, { taskId: 'STORY-1', patchPath: '.ralph/commits/pending/STORY-1.patch', createdBy: 'primary' });
      await promotePatch(ctx, { patchId, commitHash: sha });
    } finally {
      await store.close();
    }
    api.engine!.scheduleRefresh();
    await until('STORY-1 done in the session', async () => {
      await api.engine!.settled();
      return api.engine!.task('STORY-1')?.status === 'done';
    });
  });

  after(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  it('given a task promoted as a commit, then its story lists the full sha and the files, linked to Open Commit and Open File at Commit', async () => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: ChatIds.storyScheme, path: '/STORY-1.md' }));
    const md = doc.getText();
    assert.match(md, new RegExp(`^Files changed in commit \\[${sha}\\]\\(command:${Commands.openCommit.replace('.', '\\.')}\\?`, 'm'));
    assert.deepEqual(commandLink(md, sha), { command: Commands.openCommit, args: [sha, dir] });
    assert.deepEqual(commandLink(md, 'src/story/added.js'), { command: Commands.openFileAtCommit, args: ['src/story/added.js', sha, dir] });
    assert.match(md, /^- added \[src\/story\/added\.js\]/m);
    assert.match(md, /^- modified \[src\/story\/base\.js\]/m);
  });

  it("when the commit's link runs, then a diff of its files opens, each side as git has it (nothing on the parent side of an added file)", async () => {
    const md = (await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: ChatIds.storyScheme, path: '/STORY-1.md' }))).getText();
    const link = commandLink(md, sha);
    await vscode.commands.executeCommand(link.command, ...link.args);
    await until('a tab for the commit', () =>
      vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.label.includes(sha.slice(0, 8)))),
    );
    const sides = (file: string): string[] =>
      vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === Schemes.commit && d.uri.path === `/${file}`)
        .map((d) => `${new URLSearchParams(d.uri.query).get('side')}:${d.getText()}`)
        .sort();
    await until(
      'both sides of base.js and the new side of added.js',
      () => sides('src/story/base.js').length === 2 && sides('src/story/added.js').length >= 1,
    );
    assert.deepEqual(sides('src/story/base.js'), ['commit:module.exports = 2;\n', 'parent:module.exports = 1;\n']);
    assert.deepEqual(sides('src/story/added.js'), ["commit:module.exports = 'added';\n"]);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("when a file's link runs, then the file opens read-only as it was at the commit, not as it is now", async () => {
    fs.writeFileSync(path.join(dir, 'src', 'story', 'base.js'), 'module.exports = 3; // after the commit\n');
    const md = (await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: ChatIds.storyScheme, path: '/STORY-1.md' }))).getText();
    const link = commandLink(md, 'src/story/base.js');
    await vscode.commands.executeCommand(link.command, ...link.args);
    await until(
      'the file at the commit in the active editor',
      () => vscode.window.activeTextEditor?.document.uri.scheme === Schemes.commit,
    );
    const shown = vscode.window.activeTextEditor!.document;
    assert.equal(shown.uri.path, '/src/story/base.js');
    assert.equal(new URLSearchParams(shown.uri.query).get('commit'), sha);
    assert.equal(shown.getText(), 'module.exports = 2;\n');
    git(dir, 'checkout', '--', 'src/story/base.js');
  });
});
