// The safety facts `ralph status` adds, read from the log: how the last loop run confined
// its agents (from its `agents.confinement` event) and the incidents the integrity check
// recorded. What they look like and how they are worded: domain/safetyFacts.ts.
import type { SqlReader } from '../store/types';
import type { SafetyFacts } from '../domain/safetyFacts';

export { safetyLines, unconfinedRoles, type SafetyFacts } from '../domain/safetyFacts';

export function safetyFacts(store: SqlReader): SafetyFacts {
  const last = store.all<{ payload: string }>(
    "SELECT payload FROM events WHERE event_type = 'agents.confinement' ORDER BY rowid DESC LIMIT 1",
  )[0];
  let confinement: SafetyFacts['confinement'] = null;
  if (last !== undefined) {
    try {
      const p = JSON.parse(last.payload) as {
        roles?: { role: string; backend: string; kind: string; summary: string }[];
        unconfined?: boolean;
      };
      confinement = { roles: p.roles ?? [], unconfined: p.unconfined === true };
    } catch {
      confinement = null;
    }
  }
  const incidents = store
    .all<{ entity_id: string; ts: string; payload: string }>(
      "SELECT entity_id, ts, payload FROM events WHERE event_type = 'incident' ORDER BY rowid",
    )
    .map((r) => {
      let summary = '';
      let restore: string | null = null;
      try {
        const p = JSON.parse(r.payload) as { summary?: string; restore?: string | null };
        summary = p.summary ?? '';
        restore = p.restore ?? null;
      } catch {
        // an unreadable payload still counts
      }
      return { id: r.entity_id, ts: r.ts, summary, restore };
    });
  return { confinement, incidents };
}
