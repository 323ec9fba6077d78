// Non-blocking notifications from the event stream (this window's loop or the writer it
// follows) and from this window's live loop events. Quiet by default: toasts only for what
// needs attention (judge verdicts with Show Diff and Override, blocked tasks, incidents, a
// loop stopped by something other than a person, budget stops); promotions are a status-bar
// message and an Output line (`ralph.notifications.level: all` adds their toasts). The loop
// summary is printed once per stop, from its `loop.stopped` event. The loop never waits on any
// of this. The level comes from the `ralph.notifications.level` setting.
import * as vscode from 'vscode';
import type { LoopEvent } from '../loop/events';
import type { StoredEvent } from '../store';
import type { Engine } from './engine';
import type { NotificationLevel } from './ids';
import { Commands, Settings } from './ids';
import { Disposable } from './lifecycle';
import type { Toast } from './notificationRules';
import { noticeFor } from './notificationRules';

const FRESH_MS = 5 * 60_000;

export interface NotifierOutput {
  info(message: string): void;
  show(preserveFocus?: boolean): void;
}

export class Notifier extends Disposable {
  /** Budget toasts already shown this run (one per limit, not one per refused invocation). */
  private readonly budgetShown = new Set<string>();
  /** loop.stopped events whose summary was printed (a refresh may deliver one twice). */
  private readonly summarized = new Set<string>();

  constructor(
    private readonly engine: Engine,
    private readonly output: NotifierOutput,
  ) {
    super();
    this._register(engine.onDidChangeData((events) => this.onEvents(events)));
    this._register(engine.onDidLoopEvent((e) => this.onLoopEvent(e)));
  }

  private level(): NotificationLevel {
    return vscode.workspace.getConfiguration().get<NotificationLevel>(Settings.notificationLevel, 'verdicts');
  }

  private onEvents(events: readonly StoredEvent[]): void {
    const level = this.level();
    const now = Date.now();
    for (const e of events) {
      if (now - Date.parse(e.ts) > FRESH_MS) continue;
      if (e.event_type === 'loop.stopped') this.printSummary(e);
      const n = noticeFor(e, level);
      // This window's own loop already printed its promotions as they happened.
      if (n.output && !(this.engine.loopHost && e.event_type === 'patch.promoted')) this.output.info(n.output);
      if (n.status) void vscode.window.setStatusBarMessage(`$(check) Ralph: ${n.status}`, 8000);
      if (n.toast) this.show(n.toast, e);
    }
  }

  private onLoopEvent(e: LoopEvent): void {
    if (e.type === 'loop.state' && e.state === 'running') this.budgetShown.clear();
    if (e.type !== 'budget' || this.level() === 'none') return;
    const key = `${e.scope}:${e.message.replace(/\$[\d.]+/g, '')}`;
    if (this.budgetShown.has(key)) return;
    this.budgetShown.add(key);
    const text =
      e.scope === 'day'
        ? `Ralph paused: ${e.message}. Raise budgets.per_day in ralph.config.json or resume tomorrow.`
        : `Ralph: ${e.message}`;
    void vscode.window.showWarningMessage(text, 'Open ralph.config.json').then((c) => {
      if (c) return vscode.commands.executeCommand(Commands.openConfig);
      return undefined;
    });
  }

  private printSummary(e: StoredEvent): void {
    if (this.summarized.has(e.event_id)) return;
    this.summarized.add(e.event_id);
    void this.engine.formatSummary(e.payload).then((text) => this.output.info(text));
  }

  private show(n: Toast, e: StoredEvent): void {
    const show =
      n.kind === 'error'
        ? vscode.window.showErrorMessage
        : n.kind === 'warn'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    // Not awaited: the loop and the other notifications never wait for a click.
    void show(n.text, ...n.actions).then((choice) => {
      const p = e.payload as Record<string, unknown>;
      const taskId = e.event_type === 'patch.promoted' ? String(p.task_id) : e.entity_id;
      if (choice === 'Show Diff')
        return vscode.commands.executeCommand(Commands.openPatchDiff, e.event_type === 'patch.promoted' ? e.entity_id : taskId);
      if (choice === 'Override') return vscode.commands.executeCommand(Commands.overrideVerdict, taskId, String(p.decision));
      if (choice === 'Reveal') return vscode.commands.executeCommand(Commands.revealTask, taskId);
      if (choice === 'Show Output') this.output.show(true);
      return undefined;
    });
  }
}
