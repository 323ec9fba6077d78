// Which stored events become notifications at which level, and their text (pure, so it is
// unit-tested without VS Code; notifications.ts shows them).
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

/** The notification for a stored event at the given level, or undefined (pure). */
export function notificationFor(
  e: StoredEvent,
  level: NotificationLevel,
): { kind: 'info' | 'warn' | 'error'; text: string; actions: string[] } | undefined {
  if (level === 'none') return undefined;
  const p = e.payload as Record<string, unknown>;
  if (e.event_type === 'task.deferral_resolved' && e.actor === 'judge' && level !== 'errors') {
    const rationale = typeof p.rationale === 'string' ? (p.rationale.split('\n')[0] ?? '') : '';
    return {
      kind: 'info',
      text: `${e.entity_id} ${verdictWord(String(p.decision))} by judge: ${rationale}`,
      actions: ['Show Diff', 'Override'],
    };
  }
  if (e.event_type === 'task.blocked') {
    return { kind: 'error', text: `${e.entity_id} is blocked${typeof p.reason === 'string' ? `: ${p.reason}` : ''}`, actions: ['Reveal'] };
  }
  if (e.event_type === 'patch.promoted' && level === 'all') {
    return { kind: 'info', text: `${String(p.task_id)} promoted (${String(p.commit_hash).slice(0, 8)})`, actions: ['Show Diff'] };
  }
  return undefined;
}
