// How a task status looks in every tree: a codicon and a theme colour per status, and the
// one-line description (effort · risk tier · owner).
import * as vscode from 'vscode';
import type { Task, TaskStatus } from '../../domain/model';

const ICONS: Record<TaskStatus, [icon: string, color: string | undefined]> = {
  pending: ['circle-large-outline', undefined],
  claimed: ['sync~spin', 'charts.blue'],
  proposed: ['git-pull-request', 'charts.purple'],
  done: ['pass-filled', 'testing.iconPassed'],
  deferred: ['clock', 'charts.yellow'],
  blocked: ['error', 'testing.iconFailed'],
  dropped: ['circle-slash', 'disabledForeground'],
};

export function statusIcon(status: string): vscode.ThemeIcon {
  const [icon, color] = ICONS[status as TaskStatus] ?? ['question', undefined];
  return new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
}

export function taskDescription(t: Task): string {
  // The owner while claimed; otherwise the status (owners stay recorded after a task is done).
  const who = t.status === 'claimed' ? (t.claimed_by ?? 'claimed') : t.status === 'pending' ? '' : t.status;
  return [t.effort ?? '-', `tier ${t.risk_tier}`, who].filter((s) => s.length > 0).join(' · ');
}

export function taskLabel(t: Task): string {
  return t.title ? `${t.task_id}  ${t.title}` : t.task_id;
}

/** Batches refresh requests: VS Code debounces too, but a burst of appends should cost one rebuild. */
export class RefreshBatcher implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly fire: () => void,
    private readonly delayMs = 150,
  ) {}
  schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, this.delayMs);
  }
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
