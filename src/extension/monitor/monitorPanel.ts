// The monitor webview panel: one instance, restored across reloads by its serializer. It
// posts nothing before the page says `ready`, then one snapshot and batched incremental
// updates; it validates every message from the page and answers each request by id.
import * as vscode from 'vscode';
import type { MonitorDataSource } from '../../monitor/dataSource';
import { createUpdateBatcher } from '../../monitor/batcher';
import type { UpdateBatcher } from '../../monitor/batcher';
import { diffSnapshot } from '../../monitor/snapshotDiff';
import type { MonitorSnapshot, WebviewRequest } from '../../protocol/monitor';
import { ReplyMessage, SnapshotMessage, UpdateMessage, parseWebviewToHost } from '../../protocol/monitor';
import { createNonce, renderMonitorHtml } from './monitorHtml';

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

/** What the page's buttons do; rejections are reported back to the page. */
export interface MonitorActions {
  openTask(taskId: string): Thenable<unknown> | Promise<unknown> | void;
  showDiff(taskId: string, patchId: string | null): Thenable<unknown> | Promise<unknown> | void;
  resolveDeferred(taskId: string, decision: 'approve' | 'reject'): Thenable<unknown> | Promise<unknown> | void;
  openSettings(): Thenable<unknown> | Promise<unknown> | void;
}

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
  private readonly batcher: UpdateBatcher<true>;
  private ready = false;
  private lastSent: MonitorSnapshot | undefined;
  private seq = 0;
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
    this.batcher = createUpdateBatcher<true>(() => void this.pushUpdate(), deps.refreshMs ?? 250);

    panel.onDidDispose(() => this.dispose(), null, this._disposables);
    panel.webview.onDidReceiveMessage((m: unknown) => void this.onMessage(m), null, this._disposables);
    // A hidden webview without retainContextWhenHidden is torn down; when shown again the
    // page reloads and says `ready`, which resends the full snapshot.
    panel.onDidChangeViewState(
      (e) => {
        if (!e.webviewPanel.visible) this.ready = false;
      },
      null,
      this._disposables,
    );
    this._disposables.push(deps.source.onDidChange(() => this.batcher.push(true)));
    this._disposables.push({ dispose: () => this.batcher.dispose() });
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

  private async snapshot(): Promise<MonitorSnapshot | undefined> {
    try {
      return await this.deps.source.snapshot();
    } catch (e) {
      this.deps.log.error(`monitor: snapshot failed: ${(e as Error).stack ?? String(e)}`);
      return undefined;
    }
  }

  private async sendSnapshot(): Promise<void> {
    const snap = await this.snapshot();
    if (!snap || this.disposed) return;
    this.lastSent = snap;
    await this.panel.webview.postMessage(SnapshotMessage.create({ snapshot: snap }));
  }

  private async pushUpdate(): Promise<void> {
    if (!this.ready || this.disposed) return;
    const snap = await this.snapshot();
    if (!snap || this.disposed) return;
    if (!this.lastSent) return this.sendSnapshot();
    const patch = diffSnapshot(this.lastSent, snap);
    if (Object.keys(patch).length === 0) return;
    this.lastSent = snap;
    await this.panel.webview.postMessage(UpdateMessage.create({ seq: ++this.seq, patch }));
  }

  private async onMessage(raw: unknown): Promise<void> {
    const r = parseWebviewToHost(raw);
    if (!r.ok) {
      this.deps.log.warn(`monitor: dropped a message from the page: ${r.reason}`);
      return;
    }
    const m = r.message;
    switch (m.method) {
      case 'ready':
        this.ready = true;
        this.seq = 0;
        await this.sendSnapshot();
        return;
      case 'log':
        this.deps.log[m.params.level](`monitor page: ${m.params.text}`);
        return;
      default:
        await this.handleRequest(m);
    }
  }

  private async handleRequest(m: WebviewRequest): Promise<void> {
    const id = m.id ?? 0;
    try {
      const a = this.deps.actions;
      switch (m.method) {
        case 'openTask':
          await a.openTask(m.params.taskId);
          break;
        case 'showDiff':
          await a.showDiff(m.params.taskId, m.params.patchId);
          break;
        case 'resolveDeferred':
          await a.resolveDeferred(m.params.taskId, m.params.decision);
          break;
        case 'openSettings':
          await a.openSettings();
          break;
      }
      await this.panel.webview.postMessage(ReplyMessage.create({ requestId: id, ok: true }));
      this.batcher.push(true); // the action probably changed what is shown
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.deps.log.warn(`monitor: ${m.method} failed: ${error}`);
      await this.panel.webview.postMessage(ReplyMessage.create({ requestId: id, ok: false, error }));
    }
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
