// The Agents view: the primary and each worker with phase, task, elapsed time and cost so
// far. Live from the loop this window runs; when another process runs the loop, from that
// writer's agent.* events in the store. With several folders, each folder's agents sit
// under its own node. Attached to the team's store, the agents of every machine sit under
// their machine (`worker-1@machine-a` under machine-a), with today's phase and cost.
import * as vscode from 'vscode';
import { splitAgentName } from '../../domain/agentName';
import type { AgentRow } from '../../session/agentsTracker';
import type { Engine, MachineAgents } from '../../session/engine';
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
    /** Under its machine's node: the name without the machine, the cost today's. */
    team = false,
  ) {
    super(team ? splitAgentName(row.name).local : row.name, vscode.TreeItemCollapsibleState.None);
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
    this.tooltip = `${row.name} (${row.role})\nphase: ${row.phase}\ntask: ${row.taskId ?? '-'}\ninvocations: ${row.invocations}\ncost ${team ? 'today' : 'this run'}: $${row.costUsd.toFixed(4)}\nClick to open its transcript.`;
    // What an agent is doing is its transcript; the task is one inline action away.
    this.command = { command: Commands.openTranscript, title: 'Open Transcript', arguments: [row.name, engine.projectDir] };
  }
}

/** One machine of the team, its agents under it. */
export class MachineItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.machine';
  constructor(
    readonly engine: Engine,
    readonly group: MachineAgents,
  ) {
    super(group.machine ?? 'no machine', vscode.TreeItemCollapsibleState.Expanded);
    this.id = `machine:${engine.projectDir}:${group.machine ?? ''}`;
    const n = group.agents.length;
    this.description = `${n} agent${n === 1 ? '' : 's'} · ${group.busy} busy · $${group.costUsd.toFixed(2)} today`;
    this.iconPath = new vscode.ThemeIcon('vm', group.busy > 0 ? new vscode.ThemeColor('charts.blue') : undefined);
    this.tooltip =
      group.machine === null
        ? 'Agents whose names carry no machine (the promoter runs the judge as `judge`)'
        : `${group.machine}: the agents named <name>@${group.machine} (RALPH_MACHINE, else the hostname, of the process that runs them)`;
  }
}

type AgentsNode = FolderItem | MachineItem | AgentItem;

/** A folder's agents: by machine on the team's store, else the loop's agents as they are. */
function agentNodes(engine: Engine, now: number): AgentsNode[] {
  const groups = engine.agentsByMachine();
  if (groups !== undefined) return groups.map((g) => new MachineItem(engine, g));
  return engine.agents().map((r) => new AgentItem(engine, r, now));
}

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
    if (element instanceof MachineItem) return element.group.agents.map((r) => new AgentItem(element.engine, r, now, true));
    if (element instanceof FolderItem) return agentNodes(element.engine, now);
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
      return first ? agentNodes(first[0], now) : [];
    }
    return rows.filter(([, rs]) => rs.length > 0).map(([e]) => new FolderItem(e, VIEW, loopWord(e)));
  }
}
