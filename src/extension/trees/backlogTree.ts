// The Backlog view: waves, then tasks with an icon and colour per status, a description
// with effort / risk tier / owner and a tooltip with source, deps and the last event. With
// several folders, each folder's waves sit under its own node. Stable ids and getParent make
// `reveal` work for the task an agent is working on.
import * as vscode from 'vscode';
import { ChatIds } from '../chat/chatIds';
import type { Task } from '../../domain/model';
import type { Engine } from '../../session/engine';
import { Commands } from '../ids';
import { Disposable } from '../../shared/lifecycle';
import type { Projects } from '../projects';
import { FolderItem, HintItem, loopWord } from './folderItem';
import { RefreshBatcher, statusIcon, taskDescription, taskLabel } from './taskVisuals';

const VIEW = 'backlog';

export class WaveItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.wave';
  constructor(
    readonly engine: Engine,
    readonly wave: number,
    readonly tasks: readonly Task[],
  ) {
    super(`Wave ${wave}`, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `wave:${engine.projectDir}:${wave}`;
    const done = tasks.filter((t) => t.status === 'done').length;
    const live = tasks.filter((t) => t.status !== 'dropped').length;
    this.description = `${done}/${live} done`;
    this.iconPath = new vscode.ThemeIcon(done === live && live > 0 ? 'layers-active' : 'layers');
  }
}

export class TaskItem extends vscode.TreeItem {
  constructor(
    readonly engine: Engine,
    readonly task: Task,
    readonly wave: number,
    lastEvent: { event_type: string; ts: string; actor: string } | undefined,
  ) {
    super(taskLabel(task), vscode.TreeItemCollapsibleState.None);
    this.id = `task:${engine.projectDir}:${task.task_id}`;
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
    // A click tells the task's story: its events, attempts, patches, decisions and transcripts.
    this.command = { command: ChatIds.showTaskStory, title: 'Show Task Story', arguments: [task.task_id, engine.projectDir] };
  }
}

function escapeMd(s: string): string {
  // Only what changes inline rendering; paths like specs/auth.md:3 stay readable and searchable.
  return s.replace(/[\\`*_[\]<>|]/g, '\\$&');
}

export type BacklogNode = FolderItem | HintItem | WaveItem | TaskItem;

interface ProjectItems {
  waves: Map<number, WaveItem>;
  items: Map<string, TaskItem>;
}

export class BacklogTreeProvider extends Disposable implements vscode.TreeDataProvider<BacklogNode> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<BacklogNode | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this.fireIfChanged()));
  /** What the tree last showed; an unchanged backlog does not re-render (hover and clicks survive). */
  private shown = '';
  private readonly byProject = new Map<Engine, ProjectItems>();
  private folders = new Map<Engine, FolderItem>();

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
    return JSON.stringify(this.projects.list().map((e) => [e.projectDir, e.isInitialized(), loopWord(e), e.tasks()]));
  }

  private fireIfChanged(): void {
    const now = this.signature();
    if (now === this.shown) return;
    this.shown = now;
    this._onDidChangeTreeData.fire(undefined);
  }

  getTreeItem(element: BacklogNode): vscode.TreeItem {
    return element;
  }

  async getChildren(element?: BacklogNode): Promise<BacklogNode[]> {
    if (element instanceof TaskItem || element instanceof HintItem) return [];
    if (element instanceof WaveItem) return element.tasks.map((t) => this.taskItem(element.engine, t));
    if (element instanceof FolderItem) return this.projectChildren(element.engine, true);
    const all = this.projects.list();
    await Promise.all(all.map((e) => e.open()));
    this.shown = this.signature();
    if (!this.projects.multi) return all[0] ? this.projectChildren(all[0], false) : [];
    this.folders = new Map(all.map((e) => [e, new FolderItem(e, VIEW, this.folderDescription(e))]));
    return [...this.folders.values()];
  }

  private folderDescription(e: Engine): string {
    const tasks = e.tasks();
    const done = tasks.filter((t) => t.status === 'done').length;
    return `${loopWord(e)} · ${done}/${tasks.filter((t) => t.status !== 'dropped').length} done`;
  }

  /** A project's waves; under a folder node, a hint instead of nothing (the view's welcome text only shows for one folder). */
  private projectChildren(e: Engine, underFolder: boolean): BacklogNode[] {
    const waves = [...this.rebuild(e).waves.values()];
    if (waves.length > 0 || !underFolder) return waves;
    if (!e.isInitialized()) {
      return [
        new HintItem(e, VIEW, 'Initialize Project…', {
          command: Commands.initialize,
          title: 'Initialize Project',
          arguments: [e.projectDir],
        }),
      ];
    }
    return [new HintItem(e, VIEW, 'No tasks yet: add specs under specs/ or a task, then Start Loop')];
  }

  getParent(element: BacklogNode): BacklogNode | undefined {
    if (element instanceof TaskItem) return this.byProject.get(element.engine)?.waves.get(element.wave);
    if ((element instanceof WaveItem || element instanceof HintItem) && this.projects.multi) return this.folders.get(element.engine);
    return undefined;
  }

  /** The item for a task id (after a rebuild), for `TreeView.reveal`. */
  async find(engine: Engine, taskId: string): Promise<TaskItem | undefined> {
    await engine.open();
    if (this.projects.multi && !this.folders.has(engine))
      this.folders.set(engine, new FolderItem(engine, VIEW, this.folderDescription(engine)));
    return this.rebuild(engine).items.get(taskId);
  }

  private rebuild(e: Engine): ProjectItems {
    const byWave = new Map<number, Task[]>();
    for (const t of e.tasks()) {
      const list = byWave.get(t.wave) ?? [];
      list.push(t);
      byWave.set(t.wave, list);
    }
    const previous = this.byProject.get(e);
    const p: ProjectItems = {
      waves: new Map([...byWave.entries()].sort((a, b) => a[0] - b[0]).map(([w, ts]) => [w, new WaveItem(e, w, ts)])),
      items: new Map(),
    };
    this.byProject.set(e, p);
    for (const w of p.waves.values()) for (const t of w.tasks) p.items.set(t.task_id, this.taskItem(e, t, previous));
    return p;
  }

  private taskItem(e: Engine, t: Task, previous = this.byProject.get(e)): TaskItem {
    const cached = previous?.items.get(t.task_id);
    if (cached && cached.task === t) return cached;
    const item = new TaskItem(e, t, t.wave, e.lastTaskEvent(t.task_id));
    this.byProject.get(e)?.items.set(t.task_id, item);
    return item;
  }
}
