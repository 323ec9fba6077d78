// What `ralph status` adds about safety: how the last loop run confined its agents (from
// its `agents.confinement` event) and the incidents the integrity check recorded.
import type { SqlReader } from '../store/types';

export interface SafetyFacts {
  /** The last run's confinement per role; null when no run recorded one. */
  readonly confinement: {
    readonly roles: readonly { role: string; backend: string; kind: string; summary: string }[];
    readonly unconfined: boolean;
  } | null;
  readonly incidents: readonly { readonly id: string; readonly ts: string; readonly summary: string; readonly restore: string | null }[];
}

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

/** The roles the last run left unconfined, as `role (backend)`; empty when none was. */
export function unconfinedRoles(f: SafetyFacts): string[] {
  if (f.confinement?.unconfined !== true) return [];
  return f.confinement.roles.filter((r) => r.kind === 'none').map((r) => `${r.role} (${r.backend})`);
}

/** Lines after the status block; empty when there is nothing to warn about. */
export function safetyLines(f: SafetyFacts): string {
  const lines: string[] = [];
  const roles = unconfinedRoles(f);
  if (roles.length > 0) {
    lines.push(
      `WARNING: the last run's agents ran UNCONFINED: ${roles.join(', ')} could write anything your user can (agents.unconfined: true)`,
    );
  }
  if (f.incidents.length > 0) {
    const latest = f.incidents[f.incidents.length - 1];
    lines.push(
      `Incidents: ${f.incidents.length} | latest ${latest?.id ?? ''}: ${latest?.summary ?? ''}${latest?.restore ? ` (${latest.restore})` : ''}`,
    );
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
