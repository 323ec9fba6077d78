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
 * and untracked files that are not ignored; never `.ralph/`), with symlink targets. Neither
 * git command used writes the index or an object.
 */
export async function previewChanges(worktree: string, base: string): Promise<PreviewedPath[]> {
  const top = await repoRoot(worktree);
  const paths = (await changedSinceHead(top, base)) ?? (await changedSince(top, base));
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

const SCOPE = ['--', ':(top)', RALPH_EXCLUDE_PATHSPEC];

/**
 * One `git status` when the worktree's HEAD is `base` (as the harness leaves every worktree
 * it gives an agent): a path whose file differs from HEAD differs from the index or the
 * index from HEAD, so status lists it; untracked files come in the same call. It may list
 * more than the diff would (a staged change undone in the file), never less. Null when
 * HEAD is elsewhere (an agent that could commit did).
 */
async function changedSinceHead(top: string, base: string): Promise<string[] | null> {
  const st = await runGit(top, [
    'status',
    '--porcelain=v2',
    '-z',
    '--branch',
    '--untracked-files=all',
    '--no-renames',
    '--ignore-submodules=none',
    ...SCOPE,
  ]);
  const entries = splitNul(st.stdout);
  if (!entries.includes(`# branch.oid ${base}`)) return null;
  const paths = new Set<string>();
  for (const e of entries) {
    if (e.startsWith('# ')) continue;
    // Fields before the path: 8 for a changed entry (`1 XY sub mH mI mW hH hI`), 10 for an
    // unmerged one (`u XY sub m1 m2 m3 mW h1 h2 h3`), 1 for an untracked one (`?`). Any
    // other shape (a rename despite --no-renames) is left to the two-command path.
    const fields = e.startsWith('1 ') ? 8 : e.startsWith('u ') ? 10 : e.startsWith('? ') ? 1 : 0;
    const path = fields > 0 ? afterFields(e, fields) : null;
    if (path === null) return null;
    paths.add(path);
  }
  return [...paths].sort();
}

/** What follows the first `n` space-separated fields of `entry`, or null when it has fewer. */
function afterFields(entry: string, n: number): string | null {
  let at = 0;
  for (let i = 0; i < n; i++) {
    const space = entry.indexOf(' ', at);
    if (space < 0) return null;
    at = space + 1;
  }
  return at < entry.length ? entry.slice(at) : null;
}

/** `git diff --name-only` against `base` and `git ls-files --others`, for any HEAD. */
async function changedSince(top: string, base: string): Promise<string[]> {
  const [tracked, untracked] = await Promise.all([
    runGit(top, ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', base, ...SCOPE]),
    runGit(top, ['ls-files', '--others', '--exclude-standard', '-z', ...SCOPE]),
  ]);
  return [...new Set([...splitNul(tracked.stdout), ...splitNul(untracked.stdout)])].sort();
}
