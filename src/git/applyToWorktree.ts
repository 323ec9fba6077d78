// Replaying a captured patch in a scratch worktree already reset to the commit it should
// land on (the late re-verification of an approved or long-waiting patch after the target
// branch moved). `git apply --3way`: context that merely moved is merged through the blob
// ids the patch names; a real conflict is an answer with its files, never a half-applied
// tree passed off as success.
import { runGit } from './exec';

export type ApplyToWorktreeResult =
  | { readonly status: 'applied' }
  | {
      readonly status: 'conflict';
      /** Files left unmerged (empty when git refused the patch outright). */
      readonly files: readonly string[];
      /** git's own words, a few lines. */
      readonly detail: string;
    };

/** Applies `patchFile` to the worktree and its index; the caller resets the worktree afterwards. */
export async function applyPatchToWorktree(worktree: string, patchFile: string): Promise<ApplyToWorktreeResult> {
  const r = await runGit(worktree, ['apply', '--3way', '--whitespace=nowarn', patchFile], { allowExitCodes: [1, 128] });
  if (r.exitCode === 0) return { status: 'applied' };
  const unmerged = await runGit(worktree, ['diff', '--name-only', '-z', '--diff-filter=U'], { allowExitCodes: [128] });
  const files = [...new Set(unmerged.stdout.split('\0').filter((f) => f !== ''))];
  const detail = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^(Applied patch|Applying patch|Checking patch|Falling back)/.test(l))
    .slice(0, 5)
    .join(' | ');
  return { status: 'conflict', files, detail: detail || `git apply exited ${r.exitCode}` };
}
