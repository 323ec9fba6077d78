// The Agents view: the primary and each worker with phase, task, elapsed time and cost so
// far. Live from the loop this window runs; when another process runs the loop, from that
// writer's agent.* events in the store.
import * as vscode from 'vscode';
import type { AgentRow } from '../agentsTracker';
import type { Engine } from '../engine';
import { Commands } from '../ids';
import { Disposable } from '../lifecycle';
import { formatElapsed } from '../../protocol/format';
import { RefreshBatcher } from './taskVisuals';

export class AgentItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.agent';
  constructor(
    readonly row: AgentRow,
    now: number,
  ) {
    super(row.name, vscode.TreeItemCollapsibleState.None);
    this.id = `agent:${row.name}`;
    const parts = [row.phase, row.taskId ?? 'no task'];
    if (row.startedAt) parts.push(formatElapsed(now - Date.parse(row.startedAt)));
    parts.push(`$${row.costUsd.toFixed(2)}`);
    this.description = parts.join(' · ');
    this.iconPath = new vscode.ThemeIcon(
      row.busy ? 'loading~spin' : row.role === 'judge' ? 'law' : 'person',
      row.busy ? new vscode.ThemeColor('charts.blue') : undefined,
    );
    this.tooltip = `${row.name} (${row.role})\nphase: ${row.phase}\ntask: ${row.taskId ?? '-'}\ninvocations: ${row.invocations}\ncost this run: $${row.costUsd.toFixed(4)}`;
    if (row.taskId) this.command = { command: Commands.revealTask, title: 'Reveal Task', arguments: [row.taskId] };
  }
}

export class AgentsTreeProvider extends Disposable implements vscode.TreeDataProvider<AgentItem> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<AgentItem | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this._onDidChangeTreeData.fire(undefined), 250));
  private ticker: NodeJS.Timeout | undefined;

  constructor(private readonly engine: Engine) {
    super();
    this._register(engine.onDidLoopEvent(() => this.refresh()));
    this._register(engine.onDidChangeState(() => this.refresh()));
    this._register(engine.onDidChangeData(() => this.refresh()));
    this._register({ dispose: () => this.ticker && clearInterval(this.ticker) });
  }

  refresh(): void {
    this.batcher.schedule();
  }

  getTreeItem(element: AgentItem): vscode.TreeItem {
    return element;
  }

  getParent(): undefined {
    return undefined;
  }

  async getChildren(element?: AgentItem): Promise<AgentItem[]> {
    if (element) return [];
    await this.engine.open();
    const now = Date.now();
    const rows: AgentRow[] = this.engine.agents();
    // Elapsed times tick while an agent is busy.
    const busy = rows.some((r) => r.busy && r.startedAt);
    if (busy && !this.ticker) this.ticker = setInterval(() => this.refresh(), 1000);
    if (!busy && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    return rows.map((r) => new AgentItem(r, now));
  }
}
