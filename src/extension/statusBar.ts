// The one Ralph status bar item: loop state (spinning while this window's loop runs, an eye
// while following another process's loop), the primary's phase and task, and today's cost;
// the tooltip adds the spend forecast; a click opens the monitor. With several folders it
// speaks of the folder of the active editor (else one whose loop runs, else the first
// initialized) and names it; the tooltip lists every folder. Agents running unconfined turn it
// the warning colour. Recomputed from the monitor's snapshot, at most twice a second.
import * as vscode from 'vscode';
import type { Engine } from '../session/engine';
import { Commands } from './ids';
import { Disposable } from '../shared/lifecycle';
import type { Projects } from './projects';
import { statusBarView } from './statusBarText';

export class RalphStatusBar extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('ralph.status', vscode.StatusBarAlignment.Left, 50));
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly projects: Projects) {
    super();
    this.item.name = 'Ralph Loop';
    this._register(projects.onDidChangeState(() => this.schedule()));
    this._register(projects.onDidLoopEvent(() => this.schedule()));
    this._register(projects.onDidChangeData(() => this.schedule()));
    this._register(projects.onDidChangeProjects(() => this.schedule(0)));
    this._register(vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)));
    this._register({ dispose: () => this.timer && clearTimeout(this.timer) });
    this.schedule(0);
  }

  schedule(delayMs = 500): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.update();
    }, delayMs);
  }

  private async update(): Promise<void> {
    if (this.isDisposed) return;
    const engine = this.projects.focus(vscode.window.activeTextEditor?.document.uri.fsPath);
    if (!engine) {
      this.item.hide();
      return;
    }
    const name = this.projects.multi ? ` [${engine.name}]` : '';
    if (!engine.isInitialized()) {
      this.item.text = `$(circle-large-outline) Ralph${name}`;
      this.item.tooltip = `No Ralph project in ${engine.name}: run "Ralph: Initialize Project".${this.others(engine)}`;
      this.item.command = { command: Commands.initialize, title: 'Initialize Project', arguments: [engine.projectDir] };
      this.item.show();
      return;
    }
    this.item.command = { command: Commands.showMonitor, title: 'Show Monitor', arguments: [engine.projectDir] };
    await engine.open();
    let phase = '';
    let task: string | null = null;
    let cost = 0;
    let forecast: string | null = null;
    let unconfined: readonly string[] = [];
    let pause: { reason: string; short: string } | null = null;
    let observedPaused = false;
    try {
      const snap = await engine.dataSource.snapshot();
      phase = snap.state.phase;
      task = snap.state.currentTask;
      cost = snap.cost.cost;
      forecast = snap.forecast;
      unconfined = snap.safety.unconfined;
      pause = snap.state.pause ?? null;
      // A window following another process's loop knows of its pause from the store only.
      observedPaused = snap.state.run === 'paused';
    } catch {
      // the tooltip still shows the state below
    }
    const primary = engine.agents().find((a) => a.role === 'primary');
    if (primary && engine.loopHost) {
      phase = primary.phase;
      task = primary.taskId;
    }
    const view = statusBarView({
      name,
      state: observedPaused && engine.loopState() === 'running' && !engine.loopHost ? 'paused' : engine.loopState(),
      observing: engine.role() === 'observer',
      observedPid: engine.externalWriter()?.pid ?? null,
      phase,
      task,
      cost,
      forecast,
      unconfined,
      others: this.others(engine),
      pause,
    });
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
  }

  /** The other folders' loops, for the tooltip. */
  private others(shown: Engine): string {
    const rest = this.projects.list().filter((e) => e !== shown);
    if (rest.length === 0) return '';
    return `\n\nOther folders:\n${rest.map((e) => `${e.name}: ${e.isInitialized() ? `loop ${e.loopState()}${e.role() === 'observer' ? ' (observing)' : ''}` : 'no Ralph project'}`).join('\n')}`;
  }
}
