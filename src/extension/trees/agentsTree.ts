// The Agents view: the primary and each worker with phase, task, elapsed time and cost so
// far. Live from the loop this window runs; when another process runs the loop, from that
// writer's agent.* events in the store. With several folders, each folder's agents sit
// under its own node.
import * as vscode from 'vscode';
import type { AgentRow } from '../../session/agentsTracker';
import type { Engine } from '../../session/engine';
import { Commands } from '../ids';
import { Disposable } from '../../shared/lifecycle';
import type { Projects } from '../projects';
import { formatElapsed } from '../../protocol/format';
import { FolderItem, loopWord } from './folderItem';
import { RefreshBatcher } from './taskVisuals';

const VIEW = 'agents';

export class AgentItem extends vscode.TreeItem {
  override readonly contextValue: string;
  constructor(
    readonly engine: Engine,
    readonly row: AgentRow,
    now: number,
  ) {
    super(row.name, vscode.TreeItemCollapsibleState.None);
    this.contextValue = row.taskId ? 'ralph.agent.task' : 'ralph.agent';
    this.id = `agent:${engine.projectDir}:${row.name}`;
    const parts = [row.phase, row.taskId ?? 'no task'];
    if (row.busy && row.startedAt) parts.push(formatElapsed(now - Date.parse(row.startedAt)));
    parts.push(`$${row.costUsd.toFixed(2)}`);
    this.description = parts.join(' · ');
    this.iconPath = new vscode.ThemeIcon(
      row.busy ? 'loading~spin' : row.role === 'judge' ? 'law' : 'person',
      row.busy ? new vscode.ThemeColor('charts.blue') : undefined,
    );
    this.tooltip = `${row.name} (${row.role})\nphase: ${row.phase}\ntask: ${row.taskId ?? '-'}\ninvocations: ${row.invocations}\ncost this run: $${row.costUsd.toFixed(4)}\nClick to open its transcript.`;
    // What an agent is doing is its transcript; the task is one inline action away.
    this.command = { command: Commands.openTranscript, title: 'Open Transcript', arguments: [row.name, engine.projectDir] };
  }
}

type AgentsNode = FolderItem | AgentItem;

export class AgentsTreeProvider extends Disposable implements vscode.TreeDataProvider<AgentsNode> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<AgentsNode | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this._onDidChangeTreeData.fire(undefined), 250));
  private ticker: NodeJS.Timeout | undefined;

  constructor(private readonly projects: Projects) {
    super();
    this._register(projects.onDidLoopEvent(() => this.refresh()));
    this._register(projects.onDidChangeState(() => this.refresh()));
    this._register(projects.onDidChangeData(() => this.refresh()));
    this._register(projects.onDidChangeProjects(() => this.refresh()));
    this._register({ dispose: () => this.ticker && clearInterval(this.ticker) });
  }

  refresh(): void {
    this.batcher.schedule();
  }

  getTreeItem(element: AgentsNode): vscode.TreeItem {
    return element;
  }

  getParent(): undefined {
    return undefined;
  }

  async getChildren(element?: AgentsNode): Promise<AgentsNode[]> {
    if (element instanceof AgentItem) return [];
    const now = Date.now();
    if (element instanceof FolderItem) return element.engine.agents().map((r) => new AgentItem(element.engine, r, now));
    const all = this.projects.list();
    await Promise.all(all.map((e) => e.open()));
    const rows = all.map((e): readonly [Engine, AgentRow[]] => [e, e.agents()]);
    // Elapsed times tick while an agent is busy.
    const busy = rows.some(([, rs]) => rs.some((r) => r.busy && r.startedAt));
    if (busy && !this.ticker) this.ticker = setInterval(() => this.refresh(), 1000);
    if (!busy && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    if (!this.projects.multi) {
      const [first] = rows;
      return first ? first[1].map((r) => new AgentItem(first[0], r, now)) : [];
    }
    return rows.filter(([, rs]) => rs.length > 0).map(([e]) => new FolderItem(e, VIEW, loopWord(e)));
  }
}
