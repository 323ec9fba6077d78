// The monitor webview panel: one per project (folder), restored across reloads by its
// serializer. It posts nothing before the page says `ready`, then one snapshot and batched
// incremental updates; it validates every message from the page and answers each request by id.
import * as vscode from 'vscode';
import type { MonitorDataSource } from '../../monitor/dataSource';
import { MonitorSession } from '../../monitor/session';
import type { MonitorActions } from '../../monitor/session';
import { createNonce, renderMonitorHtml } from './monitorHtml';

export type { MonitorActions } from '../../monitor/session';
export type { MonitorDataSource } from '../../monitor/dataSource';

/** Command and setting ids the monitor uses (the composition root registers the commands). */
export const MonitorIds = {
  viewType: 'ralph.monitor',
  showMonitor: 'ralph.showMonitor',
  revealTask: 'ralph.revealTask',
  openPatchDiff: 'ralph.openPatchDiff',
  approveDeferred: 'ralph.approveDeferred',
  rejectDeferred: 'ralph.rejectDeferred',
  refreshSetting: 'ralph.monitor.refreshIntervalMs',
} as const;

export interface MonitorDeps {
  readonly source: MonitorDataSource;
  readonly actions: MonitorActions;
  /** Where dropped messages and page errors go (the "Ralph" LogOutputChannel). */
  readonly log: Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'error'>;
  /** At most one update per this many ms (default 250). */
  readonly refreshMs?: number;
}

/**
 * Actions that run the extension's commands (they take the task id, then the project's
 * folder, so a window with several folders acts on this monitor's one).
 */
export function commandActions(extensionId: string, projectDir: string): MonitorActions {
  return {
    openTask: (taskId) => vscode.commands.executeCommand(MonitorIds.revealTask, taskId, projectDir),
    showDiff: (taskId, patchId) => vscode.commands.executeCommand(MonitorIds.openPatchDiff, patchId ?? taskId, projectDir),
    resolveDeferred: (taskId, decision) =>
      vscode.commands.executeCommand(decision === 'approve' ? MonitorIds.approveDeferred : MonitorIds.rejectDeferred, taskId, projectDir),
    openSettings: () => vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${extensionId} ralph.monitor`),
  };
}

/** Which project a monitor shows: its key (the folder), its tab title and its data. */
export interface MonitorTarget {
  readonly key: string;
  readonly title: string;
  readonly deps: MonitorDeps;
}

export class MonitorPanel {
  public static readonly viewType = MonitorIds.viewType;
  /** The open monitors, one per project. */
  public static readonly panels = new Map<string, MonitorPanel>();

  /** The only or the first open monitor (tests). */
  public static get currentPanel(): MonitorPanel | undefined {
    return MonitorPanel.panels.values().next().value;
  }

  private readonly _disposables: vscode.Disposable[] = [];
  private readonly session: MonitorSession;
  private disposed = false;

  /** Shows the project's monitor, creating it beside the active editor when there is none. */
  public static createOrShow(extensionUri: vscode.Uri, target: MonitorTarget): MonitorPanel {
    const column = vscode.window.activeTextEditor ? vscode.ViewColumn.Beside : vscode.ViewColumn.One;
    const open = MonitorPanel.panels.get(target.key);
    if (open) {
      open.panel.reveal(column);
      return open;
    }
    const panel = vscode.window.createWebviewPanel(MonitorPanel.viewType, target.title, column, webviewOptions(extensionUri));
    return new MonitorPanel(panel, extensionUri, target);
  }

  /** Takes over a panel VS Code restored after a reload (from the serializer). */
  public static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, target: MonitorTarget): MonitorPanel {
    MonitorPanel.panels.get(target.key)?.dispose();
    return new MonitorPanel(panel, extensionUri, target);
  }

  private readonly deps: MonitorDeps;
  private readonly key: string;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    target: MonitorTarget,
  ) {
    this.deps = target.deps;
    this.key = target.key;
    MonitorPanel.panels.set(this.key, this);
    const deps = this.deps;
    panel.title = target.title;
    panel.webview.options = webviewOptions(extensionUri);
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'ralph.svg');
    panel.webview.html = this.html();
    this.session = new MonitorSession({
      port: panel.webview,
      source: deps.source,
      actions: deps.actions,
      log: deps.log,
      ...(deps.refreshMs === undefined ? {} : { refreshMs: deps.refreshMs }),
    });
    this._disposables.push(this.session);

    panel.onDidDispose(() => this.dispose(), null, this._disposables);
    panel.webview.onDidReceiveMessage((m: unknown) => void this.session.receive(m), null, this._disposables);
    // Without retainContextWhenHidden a hidden webview is torn down; when shown again the
    // page reloads, restores its state and says `ready`, which resends the full snapshot.
    panel.onDidChangeViewState(
      (e) => {
        if (!e.webviewPanel.visible) this.session.pageGone();
      },
      null,
      this._disposables,
    );
  }

  public dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (MonitorPanel.panels.get(this.key) === this) MonitorPanel.panels.delete(this.key);
    this.panel.dispose();
    while (this._disposables.length) {
      try {
        this._disposables.pop()?.dispose();
      } catch (e) {
        this.deps.log.error(`monitor: dispose failed: ${String(e)}`);
      }
    }
  }

  private html(): string {
    const webview = this.panel.webview;
    const asset = (f: string): string => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview', f)).toString();
    return renderMonitorHtml({
      cspSource: webview.cspSource,
      nonce: createNonce(),
      scriptUri: asset('monitor.js'),
      styleUri: asset('monitor.css'),
    });
  }
}

function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')],
  };
}

/**
 * Restores the monitors after a window reload; each page restores its own last state, whose
 * snapshot names the project it showed.
 */
export class MonitorPanelSerializer implements vscode.WebviewPanelSerializer {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly targetOf: (state: unknown) => MonitorTarget | undefined,
  ) {}

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const target = this.targetOf(state);
    if (target) MonitorPanel.revive(panel, this.extensionUri, target);
    else panel.dispose(); // its folder left the workspace
  }
}

/**
 * Registers `ralph.showMonitor` and the serializer. `targetFor` picks the project a command
 * invocation means (its arguments, or the user's choice) and is called when a panel is
 * created, so the engine can be opened lazily; `targetOf` finds the project of a restored page.
 */
export function registerMonitor(
  context: vscode.ExtensionContext,
  targetFor: (args: readonly unknown[]) => Promise<MonitorTarget | undefined>,
  targetOf: (state: unknown) => MonitorTarget | undefined,
): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand(MonitorIds.showMonitor, async (...args: unknown[]) => {
      const target = await targetFor(args);
      return target ? MonitorPanel.createOrShow(context.extensionUri, target) : undefined;
    }),
    vscode.window.registerWebviewPanelSerializer(MonitorPanel.viewType, new MonitorPanelSerializer(context.extensionUri, targetOf)),
    { dispose: () => [...MonitorPanel.panels.values()].forEach((p) => p.dispose()) },
  );
}
