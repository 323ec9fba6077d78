// Late re-verification: a patch promoted long after its gates ran (a tier-2 patch approved
// by the judge or a human, a promotion that waited on the user's checkout) lands only on the
// commit its gates ran on. When the branch moved meanwhile, the agent's worktree is gone or
// reused, so the patch is replayed in a dedicated scratch worktree at the new tip and the
// harness's own gates run there again; the re-based patch is what gets promoted. This
// module owns that replay and the words a host shows when it fails; the promotion loop
// around it (queue, compare-and-swap promote, retry on a moved tip) is in harness.ts.
import { applyPatchToWorktree } from '../git/applyToWorktree';
import type { CapturedPatch } from '../git/capture';
import { touchedPaths } from '../git/patchParse';
import { ensureWorktree } from '../git/worktrees';
import type { GateResult } from './gates';
import type { LoopTask } from './ports';

/** The scratch worktree late re-verifications run in (never an agent's name). */
export const LATE_VERIFY_WORKTREE = 'verify';

/** Re-verifications of one late patch before giving up on a branch that keeps moving. */
export const MAX_LATE_REVERIFICATIONS = 3;

/** Why the promotion is late: the wording of a failure depends on it. */
export type LateOrigin = 'approved' | 'waiting' | 'recovered';

export type ReverifyOutcome =
  | { readonly kind: 'ok'; readonly patch: CapturedPatch; readonly gates: readonly GateResult[]; readonly durationMs: number }
  | { readonly kind: 'conflict'; readonly files: readonly string[]; readonly detail: string }
  | { readonly kind: 'failed'; readonly gate: GateResult }
  | { readonly kind: 'empty' }
  | { readonly kind: 'widened'; readonly added: readonly string[] }
  /** The re-based change may not be kept (tier 3, control files): nothing was captured. */
  | { readonly kind: 'restricted'; readonly reasons: readonly string[] }
  | { readonly kind: 'stopped' };

export interface ReverifyRequest {
  readonly projectDir: string;
  readonly branch: string;
  readonly task: LoopTask;
  /** The current branch tip, where the patch should land now. */
  readonly tip: string;
  readonly patchPath: string;
  /** The files the patch touched when it was verified (and approved, for a tier-2 patch). */
  readonly files: readonly string[];
  readonly signal: AbortSignal;
  /** The harness's own verify: command gates, capture against `base`, forbidden patterns. */
  readonly verify: (
    task: LoopTask,
    worktree: string,
    base: string,
    signal: AbortSignal,
  ) => Promise<{
    gates: GateResult[];
    patch: CapturedPatch | null;
    restricted?: { readonly risk: { readonly reasons: readonly string[] } };
  }>;
  readonly now: () => number;
}

/**
 * Resets the scratch worktree to `tip`, replays the patch with a 3-way apply and runs the
 * gates there. Ignored files (installed dependencies, caches) are kept between runs, as a
 * CI cache would; the tracked tree is exactly `tip` plus the patch.
 */
export async function reverifyOnTip(req: ReverifyRequest): Promise<ReverifyOutcome> {
  const started = req.now();
  const wt = await ensureWorktree(req.projectDir, { name: LATE_VERIFY_WORKTREE, branch: req.branch, base: req.tip, keepIgnored: true });
  const applied = await applyPatchToWorktree(wt.path, req.patchPath);
  if (applied.status === 'conflict') return { kind: 'conflict', files: applied.files, detail: applied.detail };
  const v = await req.verify(req.task, wt.path, req.tip, req.signal);
  if (req.signal.aborted) return { kind: 'stopped' };
  if (v.restricted !== undefined) return { kind: 'restricted', reasons: v.restricted.risk.reasons };
  const failed = v.gates.find((g) => !g.ok);
  if (failed !== undefined) return { kind: 'failed', gate: failed };
  if (v.patch === null || v.patch.isEmpty) return { kind: 'empty' };
  // The same change on a new base touches the same files or fewer (some may already be on
  // the branch); a new file would be a change nobody verified or approved.
  const before = new Set(req.files);
  const added = touchedPaths(v.patch.files).filter((f) => !before.has(f));
  if (added.length > 0) return { kind: 'widened', added };
  return { kind: 'ok', patch: v.patch, gates: v.gates, durationMs: req.now() - started };
}

function lead(origin: LateOrigin, failure: 'applies' | 'passes'): string {
  switch (origin) {
    case 'approved':
      return `the approval was for a patch that no longer ${failure === 'applies' ? 'applies' : 'passes its gates'}`;
    case 'waiting':
      return 'promotion failed after waiting';
    case 'recovered':
      return 're-evaluated after restart';
  }
}

/**
 * A gate's output in one short line for a reason: the first line that names an error or a
 * failed expectation (a stack trace's tail says nothing), else the last lines.
 */
export function gistOf(outputTail: string, maxChars = 300): string {
  const lines = outputTail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^at\s/.test(l) && !/^Node\.js v\d/.test(l) && !/^[{}()[\],;]+$/.test(l) && !/^\^+$/.test(l));
  // An error's own line (`AssertionError [ERR_ASSERTION]: …`, `TypeError: …`) beats a
  // source line that merely mentions one (`throw new AssertionError(obj)`).
  let i = lines.findIndex((l) => /^[\w.]*(Error|Exception)\b[^(]*:/.test(l));
  if (i < 0) i = lines.findIndex((l) => /\b(fail(ed|ure|ing)?|expected)\b/i.test(l));
  const picked = i >= 0 ? lines.slice(i, i + 4) : lines.slice(-3);
  const text = picked.join(' | ');
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}

/** The reason recorded when a late patch cannot be promoted (discarded, task back to pending). */
export function lateFailureReason(
  origin: LateOrigin,
  branch: string,
  tip: string,
  outcome: Exclude<ReverifyOutcome, { kind: 'ok' } | { kind: 'stopped' }>,
): string {
  const moved = `${branch} moved to ${tip.slice(0, 8)}`;
  switch (outcome.kind) {
    case 'conflict': {
      const where = outcome.files.length > 0 ? `conflicts in ${outcome.files.join(', ')}` : outcome.detail;
      return `${lead(origin, 'applies')}: ${moved} and the patch does not apply there (${where})`;
    }
    case 'failed': {
      const gist = gistOf(outcome.gate.outputTail);
      return `${lead(origin, 'passes')}: ${moved} and, re-verified there, the ${outcome.gate.gate} gate ${outcome.gate.status}${gist !== '' ? `: ${gist}` : ''}`;
    }
    case 'empty':
      return `${lead(origin, 'applies')}: ${moved} and the re-based patch changes nothing (its change is already there)`;
    case 'widened':
      return `${lead(origin, 'applies')}: ${moved} and the re-based patch touches files it did not before (${outcome.added.join(', ')})`;
    case 'restricted':
      return `${lead(origin, 'applies')}: ${moved} and the re-based change may not be kept (${outcome.reasons.join('; ')})`;
  }
}
