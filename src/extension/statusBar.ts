// The one Ralph status bar item: loop state (spinning while this window's loop runs, an eye
// while following another process's loop), the primary's phase and task, and today's cost;
// a click opens the monitor. Recomputed from the monitor's snapshot, at most twice a second.
import * as vscode from 'vscode';
import type { Engine } from './engine';
import { Commands } from './ids';
import { Disposable } from './lifecycle';

export class RalphStatusBar extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('ralph.status', vscode.StatusBarAlignment.Left, 50));
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly engine: Engine) {
    super();
    this.item.name = 'Ralph Loop';
    this.item.command = Commands.showMonitor;
    this._register(engine.onDidChangeState(() => this.schedule()));
    this._register(engine.onDidLoopEvent(() => this.schedule()));
    this._register(engine.onDidChangeData(() => this.schedule()));
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
    if (!this.engine.isInitialized()) {
      this.item.text = '$(circle-large-outline) Ralph';
      this.item.tooltip = 'No Ralph project in this folder: run "Ralph: Initialize Project".';
      this.item.command = Commands.initialize;
      this.item.show();
      return;
    }
    this.item.command = Commands.showMonitor;
    await this.engine.open();
    let phase = '';
    let task: string | null = null;
    let cost = 0;
    try {
      const snap = await this.engine.dataSource.snapshot();
      phase = snap.state.phase;
      task = snap.state.currentTask;
      cost = snap.cost.cost;
    } catch {
      // the tooltip still shows the state below
    }
    const primary = this.engine.agents().find((a) => a.role === 'primary');
    if (primary && this.engine.loopHost) {
      phase = primary.phase;
      task = primary.taskId;
    }
    const state = this.engine.loopState();
    const observing = this.engine.role() === 'observer';
    const icon = observing ? '$(eye)' : state === 'running' ? '$(sync~spin)' : state === 'paused' ? '$(debug-pause)' : '$(debug-stop)';
    const parts = [
      observing ? 'observing' : undefined,
      state === 'running' ? phase || 'running' : state,
      state === 'stopped' ? undefined : (task ?? undefined),
      `$${cost.toFixed(2)} today`,
    ].filter((p): p is string => !!p);
    this.item.text = `${icon} Ralph: ${parts.join(' · ')}`;
    const who = observing
      ? `run by another process (pid ${this.engine.externalWriter()?.pid ?? '?'}); this window follows it`
      : state === 'stopped'
        ? 'not running'
        : 'run by this window';
    this.item.tooltip = `Ralph loop ${state}: ${who}\nPhase: ${state === 'stopped' ? 'stopped' : phase || '-'}\nTask: ${task ?? '-'}\nCost today: $${cost.toFixed(4)}\nClick to open the monitor.`;
    this.item.show();
  }
}
