// The monitor webview panel: one instance, restored across reloads by its serializer. It
// posts nothing before the page says `ready`, then one snapshot and batched incremental
// updates; it validates every message from the page and answers each request by id.
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

/** Actions that run the extension's commands (the deferred commands take the task id). */
export function commandActions(extensionId: string): MonitorActions {
  return {
    openTask: (taskId) => vscode.commands.executeCommand(MonitorIds.revealTask, taskId),
    showDiff: (taskId, patchId) => vscode.commands.executeCommand(MonitorIds.openPatchDiff, patchId ?? taskId),
    resolveDeferred: (taskId, decision) =>
      vscode.commands.executeCommand(decision === 'approve' ? MonitorIds.approveDeferred : MonitorIds.rejectDeferred, taskId),
    openSettings: () => vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${extensionId} ralph.monitor`),
  };
}

export class MonitorPanel {
  public static readonly viewType = MonitorIds.viewType;
  public static currentPanel: MonitorPanel | undefined;

  private readonly _disposables: vscode.Disposable[] = [];
  private readonly session: MonitorSession;
  private disposed = false;

  /** Shows the monitor, creating it beside the active editor when there is none. */
  public static createOrShow(extensionUri: vscode.Uri, deps: MonitorDeps): MonitorPanel {
    const column = vscode.window.activeTextEditor ? vscode.ViewColumn.Beside : vscode.ViewColumn.One;
    if (MonitorPanel.currentPanel) {
      MonitorPanel.currentPanel.panel.reveal(column);
      return MonitorPanel.currentPanel;
    }
    const panel = vscode.window.createWebviewPanel(MonitorPanel.viewType, 'Ralph Monitor', column, webviewOptions(extensionUri));
    MonitorPanel.currentPanel = new MonitorPanel(panel, extensionUri, deps);
    return MonitorPanel.currentPanel;
  }

  /** Takes over a panel VS Code restored after a reload (from the serializer). */
  public static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, deps: MonitorDeps): MonitorPanel {
    MonitorPanel.currentPanel?.dispose();
    MonitorPanel.currentPanel = new MonitorPanel(panel, extensionUri, deps);
    return MonitorPanel.currentPanel;
  }

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly deps: MonitorDeps,
  ) {
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
    if (MonitorPanel.currentPanel === this) MonitorPanel.currentPanel = undefined;
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
      codiconUri: asset('codicon.css'),
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

/** Restores the monitor after a window reload; the page restores its own last state. */
export class MonitorPanelSerializer implements vscode.WebviewPanelSerializer {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly deps: () => MonitorDeps,
  ) {}

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, _state: unknown): Promise<void> {
    MonitorPanel.revive(panel, this.extensionUri, this.deps());
  }
}

/**
 * Registers `ralph.showMonitor` and the serializer. `deps` is called when a panel is
 * created or restored, so the engine can be opened lazily.
 */
export function registerMonitor(context: vscode.ExtensionContext, deps: () => MonitorDeps): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand(MonitorIds.showMonitor, () => MonitorPanel.createOrShow(context.extensionUri, deps())),
    vscode.window.registerWebviewPanelSerializer(MonitorPanel.viewType, new MonitorPanelSerializer(context.extensionUri, deps)),
    { dispose: () => MonitorPanel.currentPanel?.dispose() },
  );
}
