// Non-blocking notifications from the event stream (this window's loop or the writer it
// follows) and from this window's live loop events. Quiet by default: toasts only for what
// needs attention (judge verdicts with Show Diff and Override, blocked tasks, incidents, a
// loop paused because every agent fails alike, with Resume / Open Config (ralph.config.json) /
// Run Doctor (`ralph doctor` in a terminal) / Show Output, a loop stopped by something other than a person, budget stops); promotions are a status-bar
// message and an Output line (`ralph.notifications.level: all` adds their toasts). The loop
// summary is printed once per stop, from its `loop.stopped` event. The loop never waits on any
// of this. The level comes from the `ralph.notifications.level` setting.
import * as vscode from 'vscode';
import type { LoopEvent } from '../loop/events';
import type { StoredEvent } from '../store';
import type { Engine } from '../session/engine';
import type { NotificationLevel } from './ids';
import type { Projects } from './projects';
import { Commands, Settings } from './ids';
import { Disposable } from '../shared/lifecycle';
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
  /** Events already told (toast, status, Output): a refresh that delivers one again tells nothing new. */
  private readonly told = new Set<string>();

  constructor(
    private readonly projects: Projects,
    private readonly output: NotifierOutput,
  ) {
    super();
    this._register(projects.onDidChangeData(({ engine, events }) => this.onEvents(engine, events)));
    this._register(projects.onDidLoopEvent(({ engine, event }) => this.onLoopEvent(engine, event)));
  }

  /** "[api] " when the window has several folders: every message says which. */
  private tag(engine: Engine): string {
    return this.projects.multi ? `[${engine.name}] ` : '';
  }

  private level(): NotificationLevel {
    return vscode.workspace.getConfiguration().get<NotificationLevel>(Settings.notificationLevel, 'verdicts');
  }

  private onEvents(engine: Engine, events: readonly StoredEvent[]): void {
    const level = this.level();
    const now = Date.now();
    const tag = this.tag(engine);
    for (const e of events) {
      if (now - Date.parse(e.ts) > FRESH_MS) continue;
      if (e.event_type === 'loop.stopped') this.printSummary(engine, e);
      const n = noticeFor(e, level);
      if ((n.toast === undefined && n.status === undefined && n.output === undefined) || this.told.has(e.event_id)) continue;
      this.told.add(e.event_id);
      // This window's own loop already printed its promotions as they happened.
      if (n.output && !(engine.loopHost && e.event_type === 'patch.promoted')) this.output.info(`${tag}${n.output}`);
      if (n.status) void vscode.window.setStatusBarMessage(`$(check) Ralph: ${tag}${n.status}`, 8000);
      if (n.toast) this.show(engine, { ...n.toast, text: `${tag}${n.toast.text}` }, e);
    }
  }

  private onLoopEvent(engine: Engine, e: LoopEvent): void {
    if (e.type === 'loop.state' && e.state === 'running') this.budgetShown.clear();
    if (e.type !== 'budget' || this.level() === 'none') return;
    const key = `${engine.projectDir}:${e.scope}:${e.message.replace(/\$[\d.]+/g, '')}`;
    if (this.budgetShown.has(key)) return;
    this.budgetShown.add(key);
    const text =
      e.scope === 'day'
        ? `Ralph ${this.tag(engine)}paused: ${e.message}. Raise budgets.per_day in ralph.config.json or resume tomorrow.`
        : `Ralph: ${this.tag(engine)}${e.message}`;
    void vscode.window.showWarningMessage(text, 'Open ralph.config.json').then((c) => {
      if (c) return vscode.commands.executeCommand(Commands.openConfig, engine.projectDir);
      return undefined;
    });
  }

  private printSummary(engine: Engine, e: StoredEvent): void {
    if (this.summarized.has(e.event_id)) return;
    this.summarized.add(e.event_id);
    const tag = this.tag(engine);
    void engine.formatSummary(e.payload).then((text) => this.output.info(`${tag}${text}`));
  }

  private show(engine: Engine, n: Toast, e: StoredEvent): void {
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
      // Every button names the folder: several folders may have the same task ids.
      const dir = engine.projectDir;
      if (choice === 'Show Diff')
        return vscode.commands.executeCommand(Commands.openPatchDiff, e.event_type === 'patch.promoted' ? e.entity_id : taskId, dir);
      if (choice === 'Override') return vscode.commands.executeCommand(Commands.overrideVerdict, taskId, String(p.decision), dir);
      if (choice === 'Reveal') return vscode.commands.executeCommand(Commands.revealTask, taskId, dir);
      if (choice === 'Show Output') this.output.show(true);
      // The pause's buttons: Resume goes through the loop's inbox when another process runs it.
      if (choice === 'Resume') return vscode.commands.executeCommand(Commands.resumeLoop, dir);
      if (choice === 'Open Config') return vscode.commands.executeCommand(Commands.openConfig, dir);
      if (choice === 'Run Doctor') runDoctor(dir);
      return undefined;
    });
  }
}

/** `ralph doctor` in a terminal of its own, in the project's folder: the user sees every check. */
function runDoctor(projectDir: string): void {
  const terminal = vscode.window.createTerminal({ name: 'Ralph: doctor', cwd: projectDir });
  terminal.show();
  terminal.sendText('ralph doctor', true);
}
