// The extension's composition root: builds the engine session for the folder once,
// registers every view, command, provider and status item, and keeps two lifetimes apart —
// extension-lifetime registrations in `context.subscriptions`, loop-run-lifetime ones
// inside the Engine (restartable). Activation is kept cheap: the database is opened
// lazily (first view or command), off the activation path; activation time is measured.
import * as vscode from 'vscode';
import { COMMAND_FACTORIES, registerCommands } from './commands';
import { Engine } from './engine';
import { EventLogProvider } from './eventLog';
import type { LoopStateKey } from './ids';
import { ContextKeys, Settings, Views } from './ids';
import { registerMonitor, commandActions } from './monitor/monitorPanel';
import { Notifier } from './notifications';
import { PatchContentProvider } from './patchContent';
import { RalphStatusBar } from './statusBar';
import { AgentsTreeProvider } from './trees/agentsTree';
import { BacklogTreeProvider } from './trees/backlogTree';
import type { TaskItem, WaveItem } from './trees/backlogTree';
import { DeferredTreeProvider } from './trees/deferredTree';

let engine: Engine | undefined;
let activationMs = 0;

/** What tests read: the session, the tree providers and the activation time. */
export interface RalphApi {
  readonly engine: Engine | undefined;
  readonly views: RalphViews | undefined;
  readonly activationMs: number;
}

export interface RalphViews {
  readonly backlog: BacklogTreeProvider;
  readonly deferred: DeferredTreeProvider;
  readonly agents: AgentsTreeProvider;
}

let views: RalphViews | undefined;

export function activate(context: vscode.ExtensionContext): RalphApi {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Ralph', { log: true });
  context.subscriptions.push(output);
  try {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder || folder.uri.scheme !== 'file') {
      for (const id of Object.keys(COMMAND_FACTORIES)) {
        context.subscriptions.push(
          vscode.commands.registerCommand(id, () => vscode.window.showInformationMessage('Ralph needs an open folder (a git repository).')),
        );
      }
      return { engine: undefined, views: undefined, activationMs: performance.now() - started };
    }
    engine = buildEngine(context, folder, output);
    activationMs = performance.now() - started;
    output.info(`Ralph activated in ${activationMs.toFixed(1)} ms (database opens on first use)`);
    return {
      get engine() {
        return engine;
      },
      get views() {
        return views;
      },
      get activationMs() {
        return activationMs;
      },
    };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    output.error(`activation failed: ${e instanceof Error ? (e.stack ?? msg) : msg}`);
    void vscode.window.showErrorMessage(`Ralph failed to activate: ${msg}`);
    throw e;
  }
}

function buildEngine(context: vscode.ExtensionContext, folder: vscode.WorkspaceFolder, output: vscode.LogOutputChannel): Engine {
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
  views = { backlog, deferred, agents };
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
  subs.push(patches, new EventLogProvider(eng), new RalphStatusBar(eng), new Notifier(eng));

  // The loop's log lines go to the "Ralph" channel.
  const loopLog = eng.onDidLoopEvent((e) => {
    if (e.type === 'log') output[e.level](`${e.agent}: ${e.message}`);
    else if (e.type === 'gate.progress') output.trace(`${e.agent} ${e.gate}: ${e.line}`);
    else {
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
    ...registerCommands({ extension: context, engine: eng, output, patches, backlog, backlogView, activationMs: () => activationMs }),
    registerMonitor(context, () => ({
      source: eng.dataSource,
      actions: commandActions(context.extension.id),
      log: output,
      refreshMs: vscode.workspace.getConfiguration().get<number>(Settings.monitorRefresh, 250),
    })),
  );
  return eng;
}

export async function deactivate(): Promise<void> {
  // A running loop is stopped (agents aborted, claims released) and the store checkpointed.
  await engine?.shutdown();
  engine = undefined;
  views = undefined;
}
