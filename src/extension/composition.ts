// The composition root's body: builds the engine session for the folder once and
// registers every view, command, provider and status item, keeping two lifetimes apart —
// extension-lifetime registrations in `context.subscriptions`, loop-run-lifetime ones inside
// the Engine (restartable). extension.ts loads this module right after activate() returns
// (its own chunk in the bundle, with the store and the control plane it needs), so VS Code's
// activation pays only for the entry point; the database still opens on first use.
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { Engine } from './engine';
import { EventLogProvider } from './eventLog';
import type { LoopStateKey } from './ids';
import { ContextKeys, Settings, Views } from './ids';
import { registerMonitor, commandActions } from './monitor/monitorPanel';
import { Notifier } from './notifications';
import { PatchContentProvider } from './patchContent';
import { RalphStatusBar } from './statusBar';
import { registerTerminalPath } from './terminalPath';
import { AgentsTreeProvider } from './trees/agentsTree';
import { BacklogTreeProvider } from './trees/backlogTree';
import type { TaskItem, WaveItem } from './trees/backlogTree';
import { DeferredTreeProvider } from './trees/deferredTree';

/** The tree providers (tests read them through the extension's API). */
export interface RalphViews {
  readonly backlog: BacklogTreeProvider;
  readonly deferred: DeferredTreeProvider;
  readonly agents: AgentsTreeProvider;
}

/** What the composition built: the session and its views. */
export interface Composition {
  readonly engine: Engine;
  readonly views: RalphViews;
}

/** Builds the engine session for `folder` and registers everything that shows it. */
export function composeRalph(
  context: vscode.ExtensionContext,
  folder: vscode.WorkspaceFolder,
  output: vscode.LogOutputChannel,
  activationMs: () => number,
): Composition {
  const subs = context.subscriptions;
  const eng = new Engine({
    projectDir: folder.uri.fsPath,
    log: output,
    watch: (_ralphDir, onChange) => {
      // ralph.db (checkpoints), the journal (every acknowledged event), the writer lock, STATE.json.
      const w = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(
          folder,
          '{.ralph/ralph.db,.ralph/ralph.events.journal,.ralph/locks/writer.lock,.ralph/STATE.json,ralph.config.json}',
        ),
      );
      w.onDidChange(onChange);
      w.onDidCreate(onChange);
      w.onDidDelete(onChange);
      return w;
    },
  });
  subs.push({ dispose: () => void eng.shutdown() });

  // Views.
  const backlog = new BacklogTreeProvider(eng);
  const backlogView = vscode.window.createTreeView<TaskItem | WaveItem>(Views.backlog, {
    treeDataProvider: backlog,
    showCollapseAll: true,
  });
  const deferred = new DeferredTreeProvider(eng);
  const deferredView = vscode.window.createTreeView(Views.deferred, { treeDataProvider: deferred });
  const agents = new AgentsTreeProvider(eng);
  const agentsView = vscode.window.createTreeView(Views.agents, { treeDataProvider: agents });
  subs.push(backlog, backlogView, deferred, deferredView, agents, agentsView);
  const updateBadge = (): void => {
    const n = eng.deferred().length;
    deferredView.badge = n > 0 ? { value: n, tooltip: `${n} patch(es) wait for a decision` } : undefined;
    deferredView.description = n > 0 ? `${n} waiting` : undefined;
    const promoted = eng.tasks().some((t) => t.status === 'done');
    if (promoted !== hasPromoted) {
      hasPromoted = promoted;
      void vscode.commands.executeCommand('setContext', ContextKeys.hasPromoted, promoted);
    }
  };
  let hasPromoted = false;
  subs.push(eng.onDidChangeData(updateBadge));

  // Content providers, status bar, notifications.
  const patches = new PatchContentProvider(eng);
  subs.push(patches, new EventLogProvider(eng), new RalphStatusBar(eng), new Notifier(eng, output));

  // The CLI that ships in the extension, on the integrated terminal's PATH.
  subs.push(registerTerminalPath(context, output));

  // The loop's log lines go to the "Ralph" channel.
  const loopLog = eng.onDidLoopEvent((e) => {
    if (e.type === 'log') output[e.level](`${e.agent}: ${e.message}`);
    else if (e.type === 'gate.progress') output.trace(`${e.agent} ${e.gate}: ${e.line}`);
    // The summary is printed once, from the stored loop.stopped event (the Notifier).
    else if (e.type !== 'summary') {
      const line = eng.formatLoopEvent(e);
      if (line) output.info(line);
    }
  });
  subs.push(loopLog);

  // Context keys for `when` clauses.
  let last = '';
  const updateContext = (): void => {
    const state: LoopStateKey = eng.loopState();
    const role = eng.role();
    const key = `${eng.isInitialized()}|${state}|${role}`;
    if (key === last) return;
    last = key;
    void vscode.commands.executeCommand('setContext', ContextKeys.initialized, eng.isInitialized());
    void vscode.commands.executeCommand('setContext', ContextKeys.loopState, state);
    void vscode.commands.executeCommand('setContext', ContextKeys.isWriter, role === 'writer');
    void vscode.commands.executeCommand('setContext', ContextKeys.isObserver, role === 'observer');
    backlogView.message =
      role === 'observer' ? 'Following the loop of another process (read-only; your commands go to its inbox).' : undefined;
  };
  subs.push(eng.onDidChangeState(updateContext));
  updateContext();

  // Commands and the monitor.
  subs.push(
    ...registerCommands({ extension: context, engine: eng, output, patches, backlog, backlogView, activationMs }),
    registerMonitor(context, () => ({
      source: eng.dataSource,
      actions: commandActions(context.extension.id),
      log: output,
      refreshMs: vscode.workspace.getConfiguration().get<number>(Settings.monitorRefresh, 250),
    })),
  );
  return { engine: eng, views: { backlog, deferred, agents } };
}
