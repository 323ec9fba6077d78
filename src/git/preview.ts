// What a worktree changed relative to a base commit, read without writing anything: no
// index, no object. Capture (capture.ts) stages the whole worktree into a temporary index,
// which writes a blob for every changed file; a change that must not be kept (a tier-3
// secret file) is recognised here first, so Ralph's git never stores its content.
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit, splitNul } from './exec';
import { RALPH_EXCLUDE_PATHSPEC, repoRoot } from './repo';

export interface PreviewedPath {
  readonly path: string;
  /** Set when the path is a symbolic link in the worktree: its target. */
  readonly symlinkTarget?: string;
}

/**
 * Every path capture would include (tracked files changed, added or deleted against `base`,
 * and untracked files that are not ignored; never `.ralph/`), with symlink targets, from
 * `git diff --name-only` and `git ls-files --others` (neither writes the index or objects).
 */
export async function previewChanges(worktree: string, base: string): Promise<PreviewedPath[]> {
  const top = await repoRoot(worktree);
  const scope = ['--', ':(top)', RALPH_EXCLUDE_PATHSPEC];
  const [tracked, untracked] = await Promise.all([
    runGit(top, ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', base, ...scope]),
    runGit(top, ['ls-files', '--others', '--exclude-standard', '-z', ...scope]),
  ]);
  const paths = [...new Set([...splitNul(tracked.stdout), ...splitNul(untracked.stdout)])].sort();
  const out: PreviewedPath[] = [];
  for (const path of paths) {
    let symlinkTarget: string | undefined;
    try {
      if ((await lstat(join(top, path))).isSymbolicLink()) symlinkTarget = await readlink(join(top, path));
    } catch {
      // deleted in the worktree: no link to follow
    }
    out.push(symlinkTarget === undefined ? { path } : { path, symlinkTarget });
  }
  return out;
}
