// Non-blocking notifications from the event stream (this window's loop or the writer it
// follows): each judge verdict with Show Diff and Override, promotions, blocked tasks.
// The loop never waits on them. The level comes from the `ralph.notifications.level` setting.
import * as vscode from 'vscode';
import type { StoredEvent } from '../store';
import type { Engine } from './engine';
import type { NotificationLevel } from './ids';
import { Commands, Settings } from './ids';
import { Disposable } from './lifecycle';
import { notificationFor } from './notificationRules';

const FRESH_MS = 5 * 60_000;

export class Notifier extends Disposable {
  constructor(private readonly engine: Engine) {
    super();
    this._register(engine.onDidChangeData((events) => this.onEvents(events)));
  }

  private level(): NotificationLevel {
    return vscode.workspace.getConfiguration().get<NotificationLevel>(Settings.notificationLevel, 'verdicts');
  }

  private onEvents(events: readonly StoredEvent[]): void {
    const level = this.level();
    const now = Date.now();
    for (const e of events) {
      if (now - Date.parse(e.ts) > FRESH_MS) continue;
      const n = notificationFor(e, level);
      if (!n) continue;
      const show =
        n.kind === 'error'
          ? vscode.window.showErrorMessage
          : n.kind === 'warn'
            ? vscode.window.showWarningMessage
            : vscode.window.showInformationMessage;
      // Not awaited: the loop and the other notifications never wait for a click.
      void show(n.text, ...n.actions).then((choice) => {
        const taskId = e.event_type === 'patch.promoted' ? String((e.payload as Record<string, unknown>).task_id) : e.entity_id;
        if (choice === 'Show Diff')
          return vscode.commands.executeCommand(Commands.openPatchDiff, e.event_type === 'patch.promoted' ? e.entity_id : taskId);
        if (choice === 'Override')
          return vscode.commands.executeCommand(Commands.overrideVerdict, taskId, String((e.payload as Record<string, unknown>).decision));
        if (choice === 'Reveal') return vscode.commands.executeCommand(Commands.revealTask, taskId);
        return undefined;
      });
    }
  }
}
