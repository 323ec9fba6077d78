// The Backlog view: waves, then tasks with an icon and colour per status, a description
// with effort / risk tier / owner and a tooltip with source, deps and the last event.
// Stable ids and getParent make `reveal` work for the task an agent is working on.
import * as vscode from 'vscode';
import type { Task } from '../../domain/model';
import type { Engine } from '../engine';
import { Disposable } from '../lifecycle';
import { RefreshBatcher, statusIcon, taskDescription, taskLabel } from './taskVisuals';

export class WaveItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.wave';
  constructor(
    readonly wave: number,
    readonly tasks: readonly Task[],
  ) {
    super(`Wave ${wave}`, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `wave:${wave}`;
    const done = tasks.filter((t) => t.status === 'done').length;
    const live = tasks.filter((t) => t.status !== 'dropped').length;
    this.description = `${done}/${live} done`;
    this.iconPath = new vscode.ThemeIcon(done === live && live > 0 ? 'layers-active' : 'layers');
  }
}

export class TaskItem extends vscode.TreeItem {
  constructor(
    readonly task: Task,
    readonly wave: number,
    lastEvent: { event_type: string; ts: string; actor: string } | undefined,
  ) {
    super(taskLabel(task), vscode.TreeItemCollapsibleState.None);
    this.id = `task:${task.task_id}`;
    this.contextValue = `ralph.task.${task.status}`;
    this.description = taskDescription(task);
    this.iconPath = statusIcon(task.status);
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**${task.task_id}** — ${escapeMd(task.title ?? '')}\n\n`);
    md.appendMarkdown(`Status: \`${task.status}\` · effort ${task.effort ?? '-'} · risk tier ${task.risk_tier} · wave ${task.wave}\n\n`);
    md.appendMarkdown(`Source: ${escapeMd(task.source ?? '-')}  \nDeps: ${escapeMd(task.deps || '-')}`);
    if (task.claimed_by) md.appendMarkdown(`  \nOwner: ${task.claimed_by}`);
    if (task.deferred_reason) md.appendMarkdown(`  \nDeferred: ${escapeMd(task.deferred_reason)}`);
    if (lastEvent) md.appendMarkdown(`\n\nLast event: \`${lastEvent.event_type}\` by ${lastEvent.actor} at ${lastEvent.ts}`);
    this.tooltip = md;
    this.accessibilityInformation = { label: `${task.task_id} ${task.title ?? ''}, ${task.status}` };
  }
}

function escapeMd(s: string): string {
  // Only what changes inline rendering; paths like specs/auth.md:3 stay readable and searchable.
  return s.replace(/[\\`*_[\]<>|]/g, '\\$&');
}

export type BacklogNode = WaveItem | TaskItem;

export class BacklogTreeProvider extends Disposable implements vscode.TreeDataProvider<BacklogNode> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<BacklogNode | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this.fireIfChanged()));
  /** What the tree last showed; an unchanged backlog does not re-render (hover and clicks survive). */
  private shown = '';
  private waves = new Map<number, WaveItem>();
  private items = new Map<string, TaskItem>();

  constructor(private readonly engine: Engine) {
    super();
    this._register(engine.onDidChangeData(() => this.refresh()));
    this._register(engine.onDidChangeState(() => this.refresh()));
  }

  refresh(): void {
    this.batcher.schedule();
  }

  private fireIfChanged(): void {
    const now = JSON.stringify(this.engine.tasks());
    if (now === this.shown) return;
    this.shown = now;
    this._onDidChangeTreeData.fire(undefined);
  }

  getTreeItem(element: BacklogNode): vscode.TreeItem {
    return element;
  }

  async getChildren(element?: BacklogNode): Promise<BacklogNode[]> {
    if (element instanceof TaskItem) return [];
    if (element instanceof WaveItem) return element.tasks.map((t) => this.taskItem(t));
    await this.engine.open();
    this.rebuild();
    this.shown = JSON.stringify(this.engine.tasks());
    return [...this.waves.values()];
  }

  getParent(element: BacklogNode): BacklogNode | undefined {
    if (element instanceof TaskItem) return this.waves.get(element.wave);
    return undefined;
  }

  /** The item for a task id (after a rebuild), for `TreeView.reveal`. */
  async find(taskId: string): Promise<TaskItem | undefined> {
    await this.engine.open();
    this.rebuild();
    return this.items.get(taskId);
  }

  private rebuild(): void {
    const byWave = new Map<number, Task[]>();
    for (const t of this.engine.tasks()) {
      const list = byWave.get(t.wave) ?? [];
      list.push(t);
      byWave.set(t.wave, list);
    }
    this.waves = new Map([...byWave.entries()].sort((a, b) => a[0] - b[0]).map(([w, ts]) => [w, new WaveItem(w, ts)]));
    this.items = new Map();
    for (const w of this.waves.values()) for (const t of w.tasks) this.items.set(t.task_id, this.taskItem(t));
  }

  private taskItem(t: Task): TaskItem {
    const cached = this.items.get(t.task_id);
    if (cached && cached.task === t) return cached;
    const item = new TaskItem(t, t.wave, this.engine.lastTaskEvent(t.task_id));
    this.items.set(t.task_id, item);
    return item;
  }
}
