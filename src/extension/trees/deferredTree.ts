// The Deferred view: tasks whose patch waits for a decision, with risk tier, reason and the
// judge's verdict when there is one. Inline Approve/Reject, Modify in the context menu;
// clicking an item opens its patch as a diff.
import * as vscode from 'vscode';
import type { Task } from '../../domain/model';
import type { Engine } from '../engine';
import { Commands } from '../ids';
import { Disposable } from '../lifecycle';
import { RefreshBatcher, taskLabel } from './taskVisuals';

export class DeferredItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.deferred';
  constructor(
    readonly task: Task,
    readonly patchId: string | null,
    verdict: { decision: string; rationale: string; actor: string; ts: string } | undefined,
  ) {
    super(taskLabel(task), vscode.TreeItemCollapsibleState.None);
    this.id = `deferred:${task.task_id}`;
    const reason = task.deferred_reason ?? 'deferred';
    this.description = `${/^tier \d/.test(reason) ? '' : `tier ${task.risk_tier} · `}${reason}${verdict ? ` · ${verdict.actor}: ${verdict.decision}` : ''}`;
    this.iconPath = new vscode.ThemeIcon(
      task.risk_tier >= 3 ? 'shield' : 'clock',
      new vscode.ThemeColor(task.risk_tier >= 3 ? 'charts.red' : 'charts.yellow'),
    );
    const md = new vscode.MarkdownString();
    md.appendMarkdown(
      `**${task.task_id}** — risk tier ${task.risk_tier}\n\nReason: ${reason}\n\nDeferred at: ${task.deferred_at ?? '-'}\n\nPatch: ${patchId ?? '(none)'}`,
    );
    if (verdict) md.appendMarkdown(`\n\nVerdict (${verdict.actor}, ${verdict.ts}): **${verdict.decision}** — ${verdict.rationale}`);
    this.tooltip = md;
    this.command = { command: Commands.openPatchDiff, title: 'Open Patch Diff', arguments: [this] };
  }
}

export class DeferredTreeProvider extends Disposable implements vscode.TreeDataProvider<DeferredItem> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<DeferredItem | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this.fireIfChanged()));
  /** What the tree last showed; an unchanged queue does not re-render (hover and clicks survive). */
  private shown = '';

  constructor(private readonly engine: Engine) {
    super();
    this._register(engine.onDidChangeData(() => this.refresh()));
    this._register(engine.onDidChangeState(() => this.refresh()));
  }

  refresh(): void {
    this.batcher.schedule();
  }

  private signature(): string {
    return JSON.stringify(this.engine.deferred().map((t) => [t, this.engine.lastVerdict(t.task_id)]));
  }

  private fireIfChanged(): void {
    const now = this.signature();
    if (now === this.shown) return;
    this.shown = now;
    this._onDidChangeTreeData.fire(undefined);
  }

  getTreeItem(element: DeferredItem): vscode.TreeItem {
    return element;
  }

  getParent(): undefined {
    return undefined;
  }

  async getChildren(element?: DeferredItem): Promise<DeferredItem[]> {
    if (element) return [];
    await this.engine.open();
    this.shown = this.signature();
    return this.engine
      .deferred()
      .map((t) => new DeferredItem(t, this.engine.patchOfTask(t.task_id)?.patch_id ?? null, this.engine.lastVerdict(t.task_id)));
  }
}
