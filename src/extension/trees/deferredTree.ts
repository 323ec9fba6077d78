// The Deferred view: tasks whose patch waits for a decision, with risk tier, reason and the
// judge's verdict when there is one. Inline Approve/Reject, Modify in the context menu;
// clicking an item opens its patch as a diff. With several folders, each folder's queue sits
// under its own node.
import * as vscode from 'vscode';
import type { Task } from '../../domain/model';
import type { Engine } from '../../session/engine';
import { Commands } from '../ids';
import { Disposable } from '../../shared/lifecycle';
import type { Projects } from '../projects';
import { FolderItem } from './folderItem';
import { RefreshBatcher, taskLabel } from './taskVisuals';

const VIEW = 'deferred';

export class DeferredItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.deferred';
  constructor(
    readonly engine: Engine,
    readonly task: Task,
    readonly patchId: string | null,
    verdict: { decision: string; rationale: string; actor: string; ts: string } | undefined,
  ) {
    super(taskLabel(task), vscode.TreeItemCollapsibleState.None);
    this.id = `deferred:${engine.projectDir}:${task.task_id}`;
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

type DeferredNode = FolderItem | DeferredItem;

export class DeferredTreeProvider extends Disposable implements vscode.TreeDataProvider<DeferredNode> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<DeferredNode | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this.fireIfChanged()));
  /** What the tree last showed; an unchanged queue does not re-render (hover and clicks survive). */
  private shown = '';

  constructor(private readonly projects: Projects) {
    super();
    this._register(projects.onDidChangeData(() => this.refresh()));
    this._register(projects.onDidChangeState(() => this.refresh()));
    this._register(projects.onDidChangeProjects(() => this.refresh()));
  }

  refresh(): void {
    this.batcher.schedule();
  }

  private signature(): string {
    return JSON.stringify(
      this.projects.list().map((e) => [e.projectDir, e.isInitialized(), e.deferred().map((t) => [t, e.lastVerdict(t.task_id)])]),
    );
  }

  private fireIfChanged(): void {
    const now = this.signature();
    if (now === this.shown) return;
    this.shown = now;
    this._onDidChangeTreeData.fire(undefined);
  }

  getTreeItem(element: DeferredNode): vscode.TreeItem {
    return element;
  }

  getParent(): undefined {
    return undefined;
  }

  async getChildren(element?: DeferredNode): Promise<DeferredNode[]> {
    if (element instanceof DeferredItem) return [];
    if (element instanceof FolderItem) return this.items(element.engine);
    const all = this.projects.list();
    await Promise.all(all.map((e) => e.open()));
    this.shown = this.signature();
    if (!this.projects.multi) return all[0] ? this.items(all[0]) : [];
    // Only folders with something to decide: an empty folder node would be noise.
    return all.filter((e) => e.deferred().length > 0).map((e) => new FolderItem(e, VIEW, `${e.deferred().length} waiting`));
  }

  private items(e: Engine): DeferredItem[] {
    return e.deferred().map((t) => new DeferredItem(e, t, e.patchOfTask(t.task_id)?.patch_id ?? null, e.lastVerdict(t.task_id)));
  }
}
