// A follow-up attempt's starting point: after a reviewer's modify, the patch the review
// discarded is applied onto the agent's fresh worktree (`git apply --3way`), so the agent
// changes the reviewed work instead of redoing it. When it no longer applies, the worktree
// is put back to its clean start and the caller tells the agent it starts from scratch.
import { access } from 'node:fs/promises';
import { runGit } from '../git/exec';
import { resetWorktree } from '../git/worktrees';

export type StartFromPatchResult = { readonly applied: true } | { readonly applied: false; readonly reason: string };

/** Applies `patchFile` onto `worktree` (clean at `base`); on failure the worktree is clean at `base` again. */
export async function startFromPatch(worktree: string, base: string, patchFile: string): Promise<StartFromPatchResult> {
  try {
    await access(patchFile);
  } catch {
    return { applied: false, reason: `the patch file ${patchFile} is gone` };
  }
  const r = await runGit(worktree, ['apply', '--3way', '--whitespace=nowarn', patchFile], { allowExitCodes: [1, 128] });
  if (r.exitCode === 0) return { applied: true };
  // A 3-way apply that conflicts leaves markers and unmerged entries: none of it may stay.
  await resetWorktree(worktree, base);
  const detail = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .slice(0, 3)
    .join('; ');
  return { applied: false, reason: `it no longer applies to ${base.slice(0, 8)} (${detail || `git apply exit ${r.exitCode}`})` };
}
