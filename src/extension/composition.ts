// The composition root's body: builds one engine session per workspace folder on disk (a
// multi-root workspace has one Ralph project per folder) and registers every view, command,
// provider and status item once, keeping two lifetimes apart — extension-lifetime
// registrations in `context.subscriptions`, loop-run-lifetime ones inside each Engine
// (restartable). extension.ts loads this module right after activate() returns (its own
// chunk in the bundle, with the store and the control plane it needs), so VS Code's
// activation pays only for the entry point; the databases still open on first use.
import * as vscode from 'vscode';
import { registerChat, type RalphChat } from './chat';
import { registerCommands } from './commands';
import { registerCommitDocuments } from './commitDocuments';
import { workspaceEngine } from './engine';
import type { Engine, EngineLog } from '../session/engine';
import { EventLogProvider } from './eventLog';
import { ContextKeys, Settings, Views } from './ids';
import { registerMonitor, commandActions } from './monitor/monitorPanel';
import type { MonitorTarget } from './monitor/monitorPanel';
import { Notifier } from './notifications';
import { PatchContentProvider } from './patchContent';
import { Projects } from './projects';
import type { ProjectFolder } from './projects';
import { RalphStatusBar } from './statusBar';
import { registerTerminalPath } from './terminalPath';
import { AgentsTreeProvider } from './trees/agentsTree';
import { registerTranscriptCommand, TranscriptDocuments } from './transcripts/transcriptDocument';
import { BacklogTreeProvider } from './trees/backlogTree';
import type { BacklogNode } from './trees/backlogTree';
import { DeferredTreeProvider } from './trees/deferredTree';
import { RequirementsTreeProvider } from './trees/reqTree';
import { ReqBlockNotifier } from './reqCommands';
import { Walkthrough } from './walkthrough';

/** The tree providers (tests read them through the extension's API). */
export interface RalphViews {
  readonly backlog: BacklogTreeProvider;
  readonly deferred: DeferredTreeProvider;
  readonly agents: AgentsTreeProvider;
  readonly requirements: RequirementsTreeProvider;
}

/** What the composition built: the sessions, their views and the chat surfaces. */
export interface Composition {
  readonly projects: Projects;
  readonly views: RalphViews;
  readonly chat: RalphChat;
}

/** The workspace folders Ralph can work in (on disk). */
function diskFolders(): ProjectFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ dir: f.uri.fsPath, name: f.name }));
}

/** Builds one engine session per folder on disk and registers everything that shows them. */
export function composeRalph(context: vscode.ExtensionContext, output: vscode.LogOutputChannel, activationMs: () => number): Composition {
  const subs = context.subscriptions;
  // Several folders: every line of the shared output says which one it is about.
  const logFor = (name: string): EngineLog => {
    const tag = (m: string): string => (list.multi ? `[${name}] ${m}` : m);
    return { info: (m) => output.info(tag(m)), warn: (m) => output.warn(tag(m)), error: (m) => output.error(tag(m)) };
  };
  const list: Projects = new Projects((folder) => workspaceEngine(folder, logFor(folder.name)));
  list.setFolders(diskFolders());
  subs.push(
    { dispose: () => void list.shutdown() },
    vscode.workspace.onDidChangeWorkspaceFolders(() => list.setFolders(diskFolders())),
  );

  // Views.
  const backlog = new BacklogTreeProvider(list);
  const backlogView = vscode.window.createTreeView<BacklogNode>(Views.backlog, { treeDataProvider: backlog, showCollapseAll: true });
  const deferred = new DeferredTreeProvider(list);
  const deferredView = vscode.window.createTreeView(Views.deferred, { treeDataProvider: deferred });
  const agents = new AgentsTreeProvider(list);
  const agentsView = vscode.window.createTreeView(Views.agents, { treeDataProvider: agents });
  subs.push(backlog, backlogView, deferred, deferredView, agents, agentsView);
  // REQ mode: specification.yaml's REQs by level, and block decisions as notifications.
  const requirements = new RequirementsTreeProvider(list);
  const requirementsView = vscode.window.createTreeView(Views.requirements, { treeDataProvider: requirements, showCollapseAll: true });
  subs.push(requirements, requirementsView, new ReqBlockNotifier(list));
  const updateBadge = (): void => {
    const n = list.list().reduce((a, e) => a + e.deferred().length, 0);
    deferredView.badge = n > 0 ? { value: n, tooltip: `${n} patch(es) wait for a decision` } : undefined;
    deferredView.description = n > 0 ? `${n} waiting` : undefined;
  };
  subs.push(list.onDidChangeData(updateBadge), list.onDidChangeProjects(updateBadge));

  // Content providers, status bar, notifications, the walkthrough's real state.
  const patches = new PatchContentProvider((patchId) => list.list().find((e) => e.patch(patchId) !== undefined));
  subs.push(patches, new EventLogProvider(list), new RalphStatusBar(list), new Notifier(list, output), new Walkthrough(list));
  const transcripts = new TranscriptDocuments();
  subs.push(transcripts, registerTranscriptCommand(list, transcripts));

  // The CLI that ships in the extension, on the integrated terminal's PATH.
  subs.push(registerTerminalPath(context, output));

  // The loops' log lines go to the "Ralph" channel.
  subs.push(
    list.onDidLoopEvent(({ engine, event: e }) => {
      const tag = list.multi ? `[${engine.name}] ` : '';
      if (e.type === 'log') output[e.level](`${tag}${e.agent}: ${e.message}`);
      else if (e.type === 'gate.progress') output.trace(`${tag}${e.agent} ${e.gate}: ${e.line}`);
      // The summary is printed once, from the stored loop.stopped event (the Notifier).
      else if (e.type !== 'summary') {
        const line = engine.formatLoopEvent(e);
        if (line) output.info(`${tag}${line}`);
      }
    }),
  );

  // Context keys for `when` clauses: what some folder allows (commands then ask which folder).
  let last = '';
  const updateContext = (): void => {
    const engines = list.list();
    const focus = list.focus(vscode.window.activeTextEditor?.document.uri.fsPath);
    const initialized = engines.filter((e) => e.isInitialized());
    const keys: Record<string, boolean | string> = {
      [ContextKeys.initialized]: initialized.length > 0,
      [ContextKeys.loopState]: focus?.loopState() ?? 'stopped',
      [ContextKeys.canStart]: initialized.some((e) => e.loopState() === 'stopped'),
      [ContextKeys.canStop]: initialized.some((e) => e.loopState() !== 'stopped'),
      [ContextKeys.canPause]: initialized.some((e) => e.loopState() === 'running'),
      [ContextKeys.canResume]: initialized.some((e) => e.loopState() === 'paused'),
      [ContextKeys.isWriter]: engines.some((e) => e.role() === 'writer'),
      [ContextKeys.isObserver]: engines.some((e) => e.role() === 'observer'),
      [ContextKeys.multiRoot]: list.multi,
      [ContextKeys.hasSpecs]: (focus?.specCount() ?? 0) > 0,
    };
    const key = JSON.stringify(keys);
    if (key === last) return;
    last = key;
    for (const [k, v] of Object.entries(keys)) void vscode.commands.executeCommand('setContext', k, v);
    const observed = engines.filter((e) => e.role() === 'observer');
    backlogView.message =
      observed.length === 0
        ? undefined
        : `Following the loop of another process${list.multi ? ` in ${observed.map((e) => e.name).join(', ')}` : ''} (read-only; your commands go to its inbox).`;
  };
  subs.push(
    list.onDidChangeState(updateContext),
    list.onDidChangeProjects(updateContext),
    vscode.window.onDidChangeActiveTextEditor(updateContext),
  );
  updateContext();

  // Commands and the monitors (one per folder).
  const target = (e: Engine): MonitorTarget => ({
    key: e.projectDir,
    title: list.multi ? `Ralph Monitor — ${e.name}` : 'Ralph Monitor',
    deps: {
      source: e.dataSource,
      actions: commandActions(context.extension.id, e.projectDir),
      log: output,
      refreshMs: vscode.workspace.getConfiguration().get<number>(Settings.monitorRefresh, 250),
    },
  });
  subs.push(
    ...registerCommands({ extension: context, projects: list, output, patches, backlog, backlogView, activationMs }),
    ...registerCommitDocuments(),
    registerMonitor(
      context,
      async (args) => {
        const byArg = args.find((a): a is string => typeof a === 'string' && list.get(a) !== undefined);
        const engines = list.list().filter((e) => e.isInitialized());
        let e = byArg ? list.get(byArg) : engines.length <= 1 ? (engines[0] ?? list.list()[0]) : undefined;
        if (!e) {
          const pick = await vscode.window.showQuickPick(
            engines.map((x) => ({ label: x.name, description: x.projectDir, engine: x })),
            { title: 'Ralph: show the monitor of which folder?' },
          );
          e = pick?.engine;
        }
        return e ? target(e) : undefined;
      },
      (state) => {
        // The page saved its last snapshot, which names its folder.
        const name = (state as { snapshot?: { project?: { name?: unknown } } } | undefined)?.snapshot?.project?.name;
        const e = list.list().find((x) => x.name === name) ?? (list.multi ? undefined : list.list()[0]);
        return e ? target(e) : undefined;
      },
    ),
  );
  // Chat: the @ralph participant, the language-model tools, the MCP server definitions. With
  // several folders a request goes to the one it means (chat/folders.ts) or asks which.
  const chat = registerChat({
    extension: context,
    engines: () => list.list(),
    activeFile: () => vscode.window.activeTextEditor?.document.uri.fsPath,
    log: output,
  });
  subs.push(...chat.disposables);
  return { projects: list, views: { backlog, deferred, agents, requirements }, chat: chat.chat };
}
