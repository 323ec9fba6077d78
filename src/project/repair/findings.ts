// What a repair check reports: one finding per problem (or one `ok` per clean check), and
// how it can be fixed. Fixes of kind `init` and `git-prune` are filesystem/git fixes this
// layer applies itself (fixes.ts); kind `control-plane` is for the lead's repair command,
// which must act through the control plane's commands (events, never direct SQL).

export type FindingStatus = 'ok' | 'warn' | 'fail';

export type FixKind =
  /** Re-run init without force: fills missing directories and files, touches nothing else. */
  | 'init'
  /** `git worktree prune` and removal of a stray directory under Ralph's worktree root. */
  | 'git-prune'
  /** Needs the event store / control plane (render views, take over a dead lock, ...). */
  | 'control-plane'
  /** Needs a human (a broken config, an interrupted merge). */
  | 'manual';

export interface Finding {
  /** Stable check id, e.g. `files.phase`, `state.json`, `locks.stale`, `git.worktree`. */
  readonly check: string;
  readonly status: FindingStatus;
  readonly message: string;
  /** Project-relative path the finding is about, if any. */
  readonly path?: string;
  readonly fix?: { readonly kind: FixKind; readonly description: string };
}

export function ok(check: string, message: string): Finding {
  return { check, status: 'ok', message };
}

/** Non-zero exit for `ralph repair` when problems remain. */
export function hasProblems(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.status === 'fail');
}

/** One line per finding, problems first: `FAIL files.phase: .ralph/phases/plan.md is missing (fix: ...)`. */
export function formatFindings(findings: readonly Finding[]): string {
  const rank: Record<FindingStatus, number> = { fail: 0, warn: 1, ok: 2 };
  return [...findings]
    .sort((a, b) => rank[a.status] - rank[b.status])
    .map((f) => `${f.status.toUpperCase().padEnd(4)} ${f.check}: ${f.message}${f.fix ? ` (fix: ${f.fix.description})` : ''}`)
    .join('\n');
}
