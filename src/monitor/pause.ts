// Why the loop is paused, from its last lifecycle event in the store (so an observer window
// and the window running the loop say the same): the loop.paused event's reason, and a few
// words of it for a status bar or a header. A pause because every agent failed alike
// (`cause: agents_failing`, src/domain/agentFailure.ts) is named by its failure class.
import type { SqlReader } from '../store/types';

export interface PauseFacts {
  readonly reason: string;
  /** A few words: the failure class's, or the reason cut short. */
  readonly short: string;
  readonly eventId: string;
  readonly failureClass?: string;
}

/** The few words each shared failure class is named by. */
const SHORT: Readonly<Record<string, string>> = {
  not_logged_in: 'agent CLI not logged in',
  rate_limited: 'API rate limit (429)',
  overloaded: 'API overloaded (529)',
  cli_missing: 'agent CLI missing',
  cli_crashed: 'agent CLI crashes at start',
};

const MAX_SHORT = 48;

/** A few words for a pause: the failure class's, else the reason's first clause, cut at 48 characters. */
export function pauseShort(reason: string, failureClass?: string): string {
  const known = failureClass === undefined ? undefined : SHORT[failureClass];
  if (known !== undefined) return known;
  const clause = (reason.split(/[\n;:]/)[0] ?? '').trim() || 'paused';
  return clause.length > MAX_SHORT ? `${clause.slice(0, MAX_SHORT - 1)}…` : clause;
}

/** The pause, when the loop's last lifecycle event is loop.paused; null otherwise (or without an events table). */
export function readPause(db: SqlReader): PauseFacts | null {
  let last: { event_id: string; event_type: string; payload: string } | undefined;
  try {
    last = db.get<{ event_id: string; event_type: string; payload: string }>(
      "SELECT event_id, event_type, payload FROM events WHERE event_type IN ('loop.started', 'loop.paused', 'loop.resumed', 'loop.stopped') ORDER BY event_id DESC LIMIT 1",
    );
  } catch {
    return null;
  }
  if (last?.event_type !== 'loop.paused') return null;
  let p: Record<string, unknown> = {};
  try {
    p = JSON.parse(last.payload) as Record<string, unknown>;
  } catch {
    // the store writes JSON; an unreadable payload still says the loop is paused
  }
  const reason = typeof p['reason'] === 'string' && p['reason'] !== '' ? p['reason'] : 'paused';
  const failureClass = p['cause'] === 'agents_failing' && typeof p['failure_class'] === 'string' ? p['failure_class'] : undefined;
  return {
    reason,
    short: pauseShort(reason, failureClass),
    eventId: last.event_id,
    ...(failureClass !== undefined ? { failureClass } : {}),
  };
}
