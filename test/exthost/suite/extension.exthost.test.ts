// The extension inside the real extension host of VS Code 1.100.3: the manifest and the ids
// agree, activation is cheap (measured and printed), Initialize Project creates a project,
// the Backlog and Deferred tree providers show the store, the patch diff provider serves
// before/after, Approve runs through the engine with actor `human`, the event log renders.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphApi } from '../../../src/extension/extension';
import { Commands, Views } from '../../../src/extension/ids';
import { MonitorIds } from '../../../src/extension/monitor/monitorPanel';
import type { TaskItem, WaveItem } from '../../../src/extension/trees/backlogTree';
import type { DeferredItem } from '../../../src/extension/trees/deferredTree';
import { seedDeferred } from '../../int/extension/fixture';
import { until } from './until';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

interface Manifest {
  contributes: {
    commands: { command: string; title: string; category?: string }[];
    views: Record<string, { id: string }[]>;
    menus: Record<string, { command: string; when?: string; group?: string }[]>;
    keybindings?: { command: string; key: string; mac?: string; when?: string }[];
  };
}

describe('extension host: Ralph extension', function () {
  this.timeout(120_000);
  let api: RalphApi;
  let folder: string;

  before(async () => {
    const ext = vscode.extensions.getExtension<RalphApi>(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded`);
    api = await ext.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
  });

  it('given the manifest, then every command id is contributed under category Ralph and registered, and the monitor ids match', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const manifest = ext.packageJSON as Manifest;
    const contributed = new Map(manifest.contributes.commands.map((c) => [c.command, c]));
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of Object.values(Commands)) {
      assert.ok(contributed.has(id), `${id} is not in contributes.commands`);
      assert.equal(contributed.get(id)?.category, 'Ralph');
      assert.ok(registered.has(id), `${id} is not registered`);
    }
    assert.deepEqual(
      manifest.contributes.views.ralph?.map((v) => v.id),
      Object.values(Views),
    );
    for (const [k, v] of Object.entries({
      showMonitor: Commands.showMonitor,
      revealTask: Commands.revealTask,
      openPatchDiff: Commands.openPatchDiff,
      approveDeferred: Commands.approveDeferred,
      rejectDeferred: Commands.rejectDeferred,
    })) {
      assert.equal(MonitorIds[k as keyof typeof MonitorIds], v);
    }
    const inline = manifest.contributes.menus['view/item/context']?.filter((m) => m.group?.startsWith('inline')).map((m) => m.command);
    // Open Transcript / Reveal Task on agents; Approve/Reject on deferred rows; Initialize on a
    // folder without a project (several folders).
    assert.deepEqual(inline, [
      Commands.openTranscript,
      Commands.revealTask,
      Commands.approveDeferred,
      Commands.rejectDeferred,
      Commands.initialize,
    ]);
    // Keybinding suggestions: each for a contributed command, no chord bound twice under the same condition.
    const keys = manifest.contributes.keybindings ?? [];
    assert.ok(keys.length >= 5);
    for (const k of keys) assert.ok(contributed.has(k.command), `keybinding for ${k.command}, which is not contributed`);
    assert.equal(new Set(keys.map((k) => `${k.key} ${k.when ?? ''}`)).size, keys.length);
  });

  it('given activation, then it took little time and did not open the database', () => {
    console.log(`      [measure] activate() took ${api.activationMs.toFixed(1)} ms (target < 50 ms)`);
    assert.ok(api.activationMs >= 0);
    assert.equal(api.engine?.view, undefined, 'the store opens lazily');
  });

  it('given a git repo without .ralph, when "Initialize Project" runs, then ralph.config.json and .ralph/ralph.db exist and the session sees an empty backlog', async () => {
    assert.equal(api.engine?.isInitialized(), false);
    await vscode.commands.executeCommand(Commands.initialize);
    assert.ok(fs.existsSync(path.join(folder, 'ralph.config.json')));
    assert.ok(fs.existsSync(path.join(folder, '.ralph', 'ralph.db')));
    assert.equal(api.engine?.isInitialized(), true);
    const store = await api.engine?.open();
    assert.equal(store?.mode, 'observer');
    assert.deepEqual(await api.views!.backlog.getChildren(), []);
  });

  it('given tasks and a deferred tier-2 patch in the store, then the Backlog shows waves and tasks with status, and Deferred shows the patch', async () => {
    await seedDeferred(folder);
    api.engine!.scheduleRefresh();
    await until('three tasks', async () => {
      await api.engine!.settled();
      return api.engine!.tasks().length === 3;
    });
    const waves = (await api.views!.backlog.getChildren()) as WaveItem[];
    assert.deepEqual(
      waves.map((w) => w.label),
      ['Wave 1', 'Wave 2'],
    );
    const tasks = (await api.views!.backlog.getChildren(waves[1])) as TaskItem[];
    const t = tasks[0]!;
    // (instanceof would compare with this bundle's copy of the class, not the extension's.)
    assert.equal(t.id, `task:${folder}:W2-001`);
    assert.equal(t.contextValue, 'ralph.task.deferred');
    assert.match(String(t.description), /M · tier 2/);
    assert.equal((t.iconPath as vscode.ThemeIcon).id, 'clock');
    assert.match((t.tooltip as vscode.MarkdownString).value, /specs\/auth\.md:3/);
    assert.equal(api.views!.backlog.getParent(t), waves[1]);
    const found = await api.views!.backlog.find(api.engine!, 'W2-001');
    assert.equal(found?.id, `task:${folder}:W2-001`);

    const deferred = (await api.views!.deferred.getChildren()) as DeferredItem[];
    assert.equal(deferred.length, 1);
    assert.equal(deferred[0]?.contextValue, 'ralph.deferred');
    assert.match(String(deferred[0]?.description), /^tier 2 · touches src\/auth\//);
    assert.equal(deferred[0]?.command?.command, Commands.openPatchDiff);
  });

  it('given the deferred item, when its patch diff opens, then the read-only provider serves before and after of each file', async () => {
    const [item] = (await api.views!.deferred.getChildren()) as DeferredItem[];
    await vscode.commands.executeCommand(Commands.openPatchDiff, item);
    const patchId = item!.patchId!;
    const after = await vscode.workspace.openTextDocument(
      vscode.Uri.from({ scheme: 'ralph-patch', path: '/src/auth/token.js', query: `patch=${patchId}&side=after` }),
    );
    assert.match(after.getText(), /t\.length > 8/);
    const before = await vscode.workspace.openTextDocument(
      vscode.Uri.from({ scheme: 'ralph-patch', path: '/src/auth/token.js', query: `patch=${patchId}&side=before` }),
    );
    assert.equal(before.getText(), 'module.exports = (t) => !!t;\n');
    await until('a diff tab for the patch', () =>
      vscode.window.tabGroups.all.some((g) => g.tabs.some((tab) => tab.label.includes('W2-001'))),
    );
    // The multi-file diff loads both sides of a modified file under the file's own path (a
    // modification, not a rename between two paths), and only the new side of an added file
    // (shown as added, not as a change from one empty line).
    const sides = (file: string): string[] =>
      vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === 'ralph-patch' && d.uri.path === file)
        .map((d) => new URLSearchParams(d.uri.query).get('side') ?? '?')
        .sort();
    await until('both sides of the modified file and the new side of the added one', () => {
      return sides('/src/auth/token.js').join() === 'after,before' && sides('/src/auth/token.test.js').includes('after');
    });
    assert.deepEqual(sides('/src/auth/token.test.js'), ['after'], 'an added file has no left side');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('given the deferred item, when Approve runs on it, then the task is proposed, the verdict is human, and Deferred is empty', async () => {
    const [item] = (await api.views!.deferred.getChildren()) as DeferredItem[];
    await vscode.commands.executeCommand(Commands.approveDeferred, item);
    assert.equal(api.engine!.task('W2-001')?.status, 'proposed');
    assert.equal(api.engine!.lastVerdict('W2-001')?.actor, 'human');
    assert.deepEqual(await api.views!.deferred.getChildren(), []);
  });

  it('given events, when the event log document opens, then it lists the newest events as JSON lines', async () => {
    const doc = await vscode.workspace.openTextDocument(
      vscode.Uri.from({ scheme: 'ralph-events', path: '/events.jsonl', query: 'limit=3' }),
    );
    const lines = doc.getText().trim().split('\n');
    assert.equal(lines.length, 3);
    // Newest first; the approve's inbox file also leaves its exactly-once marker (command.applied).
    const events = lines.map((l) => JSON.parse(l) as { event_type: string; actor: string });
    const decision = events.find((e) => e.event_type === 'task.deferral_resolved');
    assert.equal(decision?.actor, 'human', lines.join('\n'));
  });

  it('given an added task through the engine, then the Backlog shows it, and Show Status reports the session', async () => {
    const o = await api.engine!.submit({
      command: 'add-task',
      task: { id: 'W1-003', title: 'Docs', source: 'vscode', effort: 'S', wave: 1, deps: '-' },
      actor: 'human',
    });
    assert.equal(o.via, 'applied');
    const waves = (await api.views!.backlog.getChildren()) as WaveItem[];
    const ids = ((await api.views!.backlog.getChildren(waves[0])) as TaskItem[]).map((t) => t.task.task_id);
    assert.deepEqual(ids, ['W1-001', 'W1-002', 'W1-003']);
    await vscode.commands.executeCommand(Commands.showStatus);
    assert.deepEqual(await api.views!.agents.getChildren(), [], 'no loop runs: the Agents view shows its welcome');
  });
});
