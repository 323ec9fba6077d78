// What each stored event tells the user, and where (pure, so it is unit-tested without VS
// Code; notifications.ts shows it). Quiet by default: a toast only for what needs attention
// (a judge's verdict, a blocked task, an incident, a pause because every agent fails alike,
// a stop for budget or failures); a
// promotion is a status-bar message and an Output line, a toast only at level `all`.
import type { StoredEvent } from '../store';
import type { NotificationLevel } from './ids';

export function verdictWord(decision: string): string {
  return decision === 'approve'
    ? 'approved'
    : decision === 'reject'
      ? 'rejected'
      : decision === 'modify'
        ? 'sent back for changes'
        : decision;
}

export interface Toast {
  readonly kind: 'info' | 'warn' | 'error';
  readonly text: string;
  readonly actions: string[];
}

/** Where one event shows: a toast, a transient status-bar message, a line in the Output. */
export interface Notice {
  readonly toast?: Toast;
  readonly status?: string;
  readonly output?: string;
}

/**
 * The buttons of a pause because every agent fails alike. Short: with four buttons a toast
 * cuts longer labels to a few letters ("Res…"); the message says which file and command.
 */
export const PAUSE_ACTIONS = ['Resume', 'Open Config', 'Run Doctor', 'Show Output'] as const;

const firstLine = (v: unknown): string => (typeof v === 'string' ? (v.split('\n')[0] ?? '') : '');

/** Stop reasons of a loop that ended normally: no toast for those. */
const ROUTINE_STOP =
  /^(stopped|stopped (by|from) .*|backlog empty or blocked|backlog done except .*|VS Code is closing|host closing|SIG[A-Z]+ received|max iterations.*)$/i;

/** The toast for a stored event at the given level, or undefined (pure). */
export function notificationFor(e: StoredEvent, level: NotificationLevel): Toast | undefined {
  return noticeFor(e, level).toast;
}

/** Everything a stored event shows, at the given level (pure). */
export function noticeFor(e: StoredEvent, level: NotificationLevel): Notice {
  const p = e.payload as Record<string, unknown>;
  const toasts = level !== 'none';
  const attention = (t: Toast): Toast | undefined => (toasts ? t : undefined);
  if (e.event_type === 'task.deferral_resolved' && e.actor === 'judge') {
    const text = `${e.entity_id} ${verdictWord(String(p.decision))} by judge: ${firstLine(p.rationale)}`;
    return {
      ...(level === 'all' || level === 'verdicts' ? { toast: { kind: 'info' as const, text, actions: ['Show Diff', 'Override'] } } : {}),
      status: `${e.entity_id} ${verdictWord(String(p.decision))} by judge`,
    };
  }
  if (e.event_type === 'task.blocked') {
    const reason = firstLine(p.reason);
    const toast = attention({ kind: 'error', text: `${e.entity_id} is blocked${reason ? `: ${reason}` : ''}`, actions: ['Reveal'] });
    return toast ? { toast } : {};
  }
  if (e.event_type === 'patch.promoted') {
    const text = `${String(p.task_id)} promoted (${String(p.commit_hash).slice(0, 8)})`;
    return {
      ...(level === 'all' ? { toast: { kind: 'info' as const, text, actions: ['Show Diff'] } } : {}),
      status: text,
      output: `PROMOTED ${e.entity_id} → ${String(p.task_id)} done (commit ${String(p.commit_hash).slice(0, 8)})`,
    };
  }
  if (e.event_type.startsWith('incident.')) {
    const what = firstLine(p.message) || firstLine(p.reason) || e.event_type.slice('incident.'.length).replace(/_/g, ' ');
    const toast = attention({ kind: 'error', text: `Ralph incident (${e.entity_id}): ${what}`, actions: ['Show Output'] });
    return { ...(toast ? { toast } : {}), output: `INCIDENT ${e.event_type} ${e.entity_id}: ${what}` };
  }
  if (e.event_type === 'loop.paused') {
    const reason = firstLine(p.reason) || 'paused';
    // A person's pause needs no toast; every agent failing alike does, with what to do.
    const toast =
      p.cause === 'agents_failing'
        ? attention({ kind: 'warn', text: `Ralph paused the loop: ${reason}`, actions: [...PAUSE_ACTIONS] })
        : undefined;
    return { ...(toast ? { toast } : {}), output: `PAUSED ${reason}` };
  }
  if (e.event_type === 'loop.stopped') {
    const reason = firstLine(p.stopReason) || 'stopped';
    const toast = ROUTINE_STOP.test(reason)
      ? undefined
      : attention({ kind: 'warn', text: `Ralph loop stopped: ${reason}`, actions: ['Show Output'] });
    return { ...(toast ? { toast } : {}), status: `loop stopped: ${reason}` };
  }
  return {};
}

/**
 * REQ mode's block notices (seed 001: the user decides asynchronously, the run goes on): each
 * REQ blocked now that was not at the last read, as a warning whose buttons are its open
 * decisions. The first read (`before` undefined) shows none: the Requirements view shows what
 * was blocked already.
 */
export function reqBlockToasts(
  before: ReadonlySet<string> | undefined,
  blocked: ReadonlyMap<string, { readonly reason: string; readonly options: readonly string[] }>,
): { readonly reqId: string; readonly toast: Toast }[] {
  if (before === undefined) return [];
  return [...blocked]
    .filter(([id]) => !before.has(id))
    .map(([id, b]) => ({ reqId: id, toast: { kind: 'warn', text: `Ralph: ${id} is blocked: ${b.reason}`, actions: [...b.options] } }));
}
