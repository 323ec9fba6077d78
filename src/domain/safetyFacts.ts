// What `ralph status` says about safety: how the last loop run confined its agents (its
// `agents.confinement` event) and the incidents the integrity check recorded. The facts are
// read from the log by control/safetyStatus.ts, or from the status image (statusImage.ts).

export interface SafetyFacts {
  /** The last run's confinement per role; null when no run recorded one. */
  readonly confinement: {
    readonly roles: readonly { role: string; backend: string; kind: string; summary: string }[];
    readonly unconfined: boolean;
  } | null;
  readonly incidents: readonly { readonly id: string; readonly ts: string; readonly summary: string; readonly restore: string | null }[];
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
