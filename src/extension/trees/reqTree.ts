// The Requirements view (REQ mode, seed 001): specification.yaml's REQs grouped by
// topological level, each with its status icon (blocked(auto) distinct from blocked), the
// round and verification layer while it builds, its commit when done, and its acceptance
// criteria as children. A blocked REQ offers "Decide…" (skip / manual / stop / rollback)
// in its context menu. Read from the folder's session store, refreshed as events arrive.
import * as vscode from 'vscode';
import type { ReqStatusReport } from '../../domain/reqStatus';
import { reqTreeData } from '../../req/view';
import type { ReqTreeData } from '../../req/view';
import type { Engine } from '../../session/engine';
import { Disposable } from '../../shared/lifecycle';
import type { Projects } from '../projects';
import { FolderItem, HintItem } from './folderItem';
import { RefreshBatcher } from './taskVisuals';

const VIEW = 'requirements';

type ReqEntry = ReqStatusReport['reqs'][number];

const ICONS: Record<string, [icon: string, color: string | undefined]> = {
  pending: ['circle-large-outline', undefined],
  in_progress: ['sync~spin', 'charts.blue'],
  done: ['pass-filled', 'testing.iconPassed'],
  blocked: ['error', 'testing.iconFailed'],
  // Waits on a blocked REQ: not itself failed, so not the failure icon.
  blocked_auto: ['debug-pause', 'charts.orange'],
  manual: ['edit', 'charts.yellow'],
  skipped: ['debug-step-over', 'disabledForeground'],
};

export class ReqLevelItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.reqLevel';
  constructor(
    readonly engine: Engine,
    readonly level: number,
    readonly reqs: readonly ReqEntry[],
  ) {
    super(`Level ${level}`, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `${VIEW}:level:${engine.projectDir}:${level}`;
    const done = reqs.filter((r) => r.status === 'done').length;
    this.description = `${done}/${reqs.length} done`;
    this.iconPath = new vscode.ThemeIcon('layers');
  }
}

export class ReqItem extends vscode.TreeItem {
  constructor(
    readonly engine: Engine,
    readonly req: ReqEntry,
    readonly acs: readonly { readonly id: string; readonly criteria: string }[],
    readonly block: { readonly reason: string; readonly options: readonly string[] } | undefined,
  ) {
    super(`${req.id}  ${req.title}`, acs.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    this.id = `${VIEW}:req:${engine.projectDir}:${req.id}`;
    this.contextValue = `ralph.req.${req.status}`;
    const [icon, color] = ICONS[req.status] ?? ['question', undefined];
    this.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    const status = req.status === 'blocked_auto' ? `blocked(auto) by ${req.blocked_by ?? '?'}` : req.status.replace('_', ' ');
    const building = req.status === 'in_progress' && req.round > 0 ? `round ${req.round}${req.layer ? ` · ${req.layer}` : ''}` : '';
    this.description = [status, building, req.commit ? req.commit.slice(0, 8) : ''].filter((s) => s !== '').join(' · ');
    const md = new vscode.MarkdownString();
    md.appendMarkdown(`**${req.id}** — ${req.title}\n\nStatus: ${status}`);
    if (building) md.appendMarkdown(`\n\nBuilding: ${building}`);
    if (block) md.appendMarkdown(`\n\nBlocked: ${block.reason}\n\nDecide: ${block.options.join(' / ')} (right-click → Decide…)`);
    if (req.commit) md.appendMarkdown(`\n\nCommit: \`${req.commit}\``);
    this.tooltip = md;
  }
}

export class AcItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.reqAc';
  constructor(engine: Engine, reqId: string, ac: { readonly id: string; readonly criteria: string }, done: boolean) {
    super(ac.id, vscode.TreeItemCollapsibleState.None);
    this.id = `${VIEW}:ac:${engine.projectDir}:${reqId}:${ac.id}`;
    this.description = ac.criteria;
    this.tooltip = `${ac.id}: ${ac.criteria}`;
    this.iconPath = new vscode.ThemeIcon(done ? 'check' : 'circle-small');
  }
}

export type ReqNode = FolderItem | HintItem | ReqLevelItem | ReqItem | AcItem;

export class RequirementsTreeProvider extends Disposable implements vscode.TreeDataProvider<ReqNode> {
  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<ReqNode | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;
  private readonly batcher = this._register(new RefreshBatcher(() => this._onDidChangeTreeData.fire(undefined)));

  constructor(private readonly projects: Projects) {
    super();
    this._register(projects.onDidChangeData(() => this.refresh()));
    this._register(projects.onDidChangeState(() => this.refresh()));
    this._register(projects.onDidChangeProjects(() => this.refresh()));
    // specification.yaml edited by hand (statuses, new REQs): shown without a new event.
    const w = this._register(vscode.workspace.createFileSystemWatcher('**/specification.{yaml,yml}'));
    this._register(w.onDidChange(() => this.refresh()));
    this._register(w.onDidCreate(() => this.refresh()));
    this._register(w.onDidDelete(() => this.refresh()));
  }

  refresh(): void {
    this.batcher.schedule();
  }

  getTreeItem(element: ReqNode): vscode.TreeItem {
    return element;
  }

  getParent(): undefined {
    return undefined;
  }

  /** The folder's REQ data now (tests read it too). */
  data(e: Engine): ReturnType<typeof reqTreeData> {
    try {
      return reqTreeData(e.projectDir, e.view);
    } catch (err) {
      return { problem: err instanceof Error ? err.message : String(err) };
    }
  }

  async getChildren(element?: ReqNode): Promise<ReqNode[]> {
    if (element instanceof AcItem || element instanceof HintItem) return [];
    if (element instanceof ReqItem)
      return element.acs.map((ac) => new AcItem(element.engine, element.req.id, ac, element.req.status === 'done'));
    if (element instanceof ReqLevelItem) return this.reqItems(element);
    if (element instanceof FolderItem) return this.levels(element.engine);
    const all = this.projects.list();
    await Promise.all(all.map((e) => e.open()));
    if (!this.projects.multi) return all[0] ? this.levels(all[0]) : [];
    return all.filter((e) => this.data(e) !== null).map((e) => new FolderItem(e, VIEW, this.folderWord(e)));
  }

  private folderWord(e: Engine): string {
    const d = this.data(e);
    if (d === null) return 'no specification.yaml';
    if ('problem' in d) return 'specification.yaml has a problem';
    const q = d.report.requirements;
    return `${d.report.status} · ${q.done}/${q.total} done`;
  }

  private byDir = new Map<string, ReqTreeData>();

  private levels(e: Engine): ReqNode[] {
    const d = this.data(e);
    // No specification: the view's welcome content says how to start.
    if (d === null) return [];
    if ('problem' in d) return [new HintItem(e, VIEW, d.problem)];
    this.byDir.set(e.projectDir, d);
    const out: ReqNode[] = [];
    if (d.report.cycle) out.push(new HintItem(e, VIEW, `dependency cycle: ${d.report.cycle.join(' → ')}`));
    const levels = [...new Set(d.report.reqs.map((r) => r.level))].sort((a, b) => a - b);
    for (const l of levels)
      out.push(
        new ReqLevelItem(
          e,
          l,
          d.report.reqs.filter((r) => r.level === l),
        ),
      );
    return out;
  }

  private reqItems(level: ReqLevelItem): ReqItem[] {
    const d = this.byDir.get(level.engine.projectDir);
    return level.reqs.map((r) => new ReqItem(level.engine, r, d?.acs.get(r.id) ?? [], d?.blocked.get(r.id)));
  }
}
