// Read-only questions the loop asks of a repository: branches, tips, ancestry, cleanliness,
// the worktrees git knows about, and what a worktree changed relative to a base commit.
import { copyFile, lstat, mkdtemp, readFile, realpath, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { gitOut, runGit, splitNul } from './exec';
import type { PatchFileStatus } from './patchParse';

/** Paths Ralph keeps out of every patch: its own state lives there. */
export const RALPH_EXCLUDE_PATHSPEC = ':(top,exclude).ralph';

// A directory's top level and common git dir do not change while it exists, and the loop
// asks for them on every cycle, capture and promotion; remembering them saves a git process
// each time. Bounded so a long-lived extension host that sees many temporary repositories
// does not grow.
const CACHE_MAX = 256;
const toplevels = new Map<string, string>();
const commonDirs = new Map<string, string>();

function remember(cache: Map<string, string>, key: string, value: string): string {
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, value);
  return value;
}

/** The repository's top-level directory (of the worktree containing `dir`). */
export async function repoRoot(dir: string): Promise<string> {
  const key = resolve(dir);
  return toplevels.get(key) ?? remember(toplevels, key, await gitOut(dir, ['rev-parse', '--show-toplevel']));
}

/** The git directory shared by all worktrees (absolute). */
export async function gitCommonDir(dir: string): Promise<string> {
  const key = resolve(dir);
  const known = commonDirs.get(key);
  if (known !== undefined) return known;
  const p = await gitOut(dir, ['rev-parse', '--git-common-dir']);
  return remember(commonDirs, key, isAbsolute(p) ? p : resolve(dir, p));
}

/** The worktree's own git directory (absolute): where its index and HEAD live. */
export async function gitDir(dir: string): Promise<string> {
  const p = await gitOut(dir, ['rev-parse', '--git-dir']);
  return isAbsolute(p) ? p : resolve(dir, p);
}

/**
 * The git directory of the worktree whose top level is `top`, read from its `.git` entry
 * (a directory, or a `gitdir:` file for linked worktrees) without spawning git; null when
 * it is neither.
 */
export async function worktreeGitDir(top: string): Promise<string | null> {
  const dotGit = join(top, '.git');
  try {
    const st = await lstat(dotGit);
    if (st.isDirectory()) return dotGit;
    const m = /^gitdir: (.*)$/m.exec(await readFile(dotGit, 'utf8'));
    return m?.[1] === undefined ? null : resolve(top, m[1].trim());
  } catch {
    return null;
  }
}

/**
 * The commit and tree a local branch points at in one git call, or null when the branch
 * does not exist (promotion needs both: the parent, and the tree to detect a no-op).
 */
export async function branchTipAndTree(repo: string, branch: string): Promise<{ commit: string; tree: string } | null> {
  const ref = `refs/heads/${branch}`;
  const r = await runGit(repo, ['rev-parse', '--quiet', `${ref}^{commit}`, `${ref}^{tree}`, '--'], { allowExitCodes: [1, 128] });
  const [commit, tree] = r.stdout.trim().split('\n');
  if (r.exitCode !== 0 || commit === undefined || tree === undefined || !/^[0-9a-f]{40,64}$/.test(commit)) return null;
  return { commit, tree };
}

/** The branch checked out in `repo` (short name), or null when HEAD is detached. */
export async function currentBranch(repo: string): Promise<string | null> {
  const r = await runGit(repo, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { allowExitCodes: [1] });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

/** The commit a local branch points at, or null when the branch does not exist. */
export async function branchTip(repo: string, branch: string): Promise<string | null> {
  const r = await runGit(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
    allowExitCodes: [1],
  });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

/** Whether `commit` is reachable from `branch` (a commit is its own ancestor). */
export async function isAncestor(repo: string, commit: string, branch: string): Promise<boolean> {
  const r = await runGit(repo, ['merge-base', '--is-ancestor', commit, `refs/heads/${branch}`], {
    allowExitCodes: [1],
  });
  return r.exitCode === 0;
}

/**
 * The commits after `from` up to `to` that changed any of `paths`, newest first, as
 * "<short sha> <subject>" (at most `limit`): what a conflicting patch collided with.
 */
export async function commitsTouching(repo: string, from: string, to: string, paths: readonly string[], limit = 5): Promise<string[]> {
  if (paths.length === 0) return [];
  const r = await runGit(repo, ['log', `--max-count=${limit}`, '--format=%h %s', `${from}..${to}`, '--', ...paths], {
    allowExitCodes: [128],
  });
  return r.exitCode === 0 ? r.stdout.split('\n').filter((l) => l.trim() !== '') : [];
}

/** Whether `hash` names a commit in the repository's object store. */
export async function commitExists(repo: string, hash: string): Promise<boolean> {
  const r = await runGit(repo, ['cat-file', '-e', `${hash}^{commit}`], { allowExitCodes: [1, 128] });
  return r.exitCode === 0;
}

/**
 * Whether the worktree has no staged, unstaged or untracked (non-ignored) changes outside
 * `.ralph/` (Ralph's own state never counts as a change, as in patches).
 */
export async function isClean(worktree: string): Promise<boolean> {
  const r = await runGit(worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--', ':(top)', RALPH_EXCLUDE_PATHSPEC]);
  return r.stdout === '';
}

/**
 * Which of `paths` have uncommitted changes in the worktree (modified, staged, untracked,
 * deleted). Literal pathspecs, so names with `*` or `:` are themselves.
 */
export async function dirtyPaths(worktree: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const r = await runGit(worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', '--', ...paths], {
    env: { GIT_LITERAL_PATHSPECS: '1' },
  });
  return splitNul(r.stdout).map((e) => e.slice(3));
}

export interface ChangedFile {
  readonly path: string;
  readonly oldPath?: string;
  readonly status: PatchFileStatus;
}

/**
 * Copies an index file keeping its modification time. Git trusts an entry's cached stat
 * data only if the file was last written before the index ("racy git"); a copy stamped
 * with the current time would make a same-size edit made within the index's timestamp
 * granularity look unchanged, and a checkout could then clobber it.
 */
export async function copyIndexFile(from: string, to: string): Promise<void> {
  const st = await stat(from);
  await copyFile(from, to);
  await utimes(to, st.atime, st.mtime);
}

/**
 * Runs `fn` with a temporary index holding the worktree's full state (tracked edits, new
 * untracked files, deletions; ignored files and `.ralph/` left out), without touching the
 * worktree's own index. Starting from a copy of the real index keeps git's stat cache, so
 * unchanged files are not re-hashed.
 */
export async function withSnapshotIndex<T>(worktree: string, fn: (env: { GIT_INDEX_FILE: string }) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ralph-idx-'));
  try {
    const indexFile = join(dir, 'index');
    // The index lives in the worktree's git dir (no GIT_INDEX_FILE: exec.ts clears it).
    const gd = await worktreeGitDir(worktree);
    const real = gd !== null ? join(gd, 'index') : await gitOut(worktree, ['rev-parse', '--path-format=absolute', '--git-path', 'index']);
    try {
      await copyIndexFile(real, indexFile);
    } catch {
      // A worktree without an index yet: git builds one from scratch.
    }
    const env = { GIT_INDEX_FILE: indexFile };
    await runGit(worktree, ['add', '--all', '--', ':(top)', RALPH_EXCLUDE_PATHSPEC], { env });
    // Files under .ralph/ that are tracked stay as the index had them: the diff below
    // excludes .ralph/ anyway.
    return await fn(env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function statusFromLetter(letter: string): PatchFileStatus {
  switch (letter[0]) {
    case 'A':
      return 'added';
    case 'D':
      return 'deleted';
    case 'R':
      return 'renamed';
    case 'C':
      return 'copied';
    default:
      return 'modified';
  }
}

/** Parses `git diff --name-status -z` output. */
export function parseNameStatusZ(out: string): ChangedFile[] {
  const parts = splitNul(out);
  const files: ChangedFile[] = [];
  for (let i = 0; i < parts.length;) {
    const letter = parts[i++] as string;
    const status = statusFromLetter(letter);
    if (status === 'renamed' || status === 'copied') {
      const oldPath = parts[i++] as string;
      const path = parts[i++] as string;
      files.push({ path, oldPath, status });
    } else {
      files.push({ path: parts[i++] as string, status });
    }
  }
  return files;
}

/** Everything the worktree changed relative to `base`, including untracked files. */
export async function changedFiles(worktree: string, base: string): Promise<ChangedFile[]> {
  const top = await repoRoot(worktree);
  return withSnapshotIndex(top, async (env) => {
    const r = await runGit(top, ['diff', '--cached', '--name-status', '-z', '-M', base, '--', ':(top)', RALPH_EXCLUDE_PATHSPEC], { env });
    return parseNameStatusZ(r.stdout);
  });
}

export interface WorktreeInfo {
  readonly path: string;
  /** null for a bare repository entry or a worktree with no commit yet. */
  readonly head: string | null;
  /** Short branch name, or null when detached. */
  readonly branch: string | null;
  readonly bare: boolean;
  readonly locked: boolean;
  readonly prunable: boolean;
}

/** Parses `git worktree list --porcelain -z`. */
export function parseWorktreeList(out: string): WorktreeInfo[] {
  const entries: WorktreeInfo[] = [];
  let cur: { path: string; head: string | null; branch: string | null; bare: boolean; locked: boolean; prunable: boolean } | null = null;
  for (const field of out.split('\0')) {
    if (field === '') {
      if (cur !== null) entries.push(cur);
      cur = null;
      continue;
    }
    const sp = field.indexOf(' ');
    const key = sp < 0 ? field : field.slice(0, sp);
    const value = sp < 0 ? '' : field.slice(sp + 1);
    if (key === 'worktree') {
      if (cur !== null) entries.push(cur);
      cur = { path: value, head: null, branch: null, bare: false, locked: false, prunable: false };
    } else if (cur !== null) {
      if (key === 'HEAD') cur.head = value;
      else if (key === 'branch') cur.branch = value.replace(/^refs\/heads\//, '');
      else if (key === 'bare') cur.bare = true;
      else if (key === 'locked') cur.locked = true;
      else if (key === 'prunable') cur.prunable = true;
    }
  }
  if (cur !== null) entries.push(cur);
  return entries;
}

// `git worktree add/prune/remove/list` of one repository must not overlap: an `add`
// half-way through writing `.git/worktrees/<name>/` makes a concurrent one fail with
// "failed to read .git/worktrees/<name>/commondir". Workers start together and a promotion
// lists worktrees while another agent's is being created, so they queue per repository.
const adminQueues = new Map<string, Promise<void>>();

/** Runs `fn` when no other worktree administration of the same repository is running. */
export async function withWorktreeAdmin<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  // One queue per repository however it is reached (a symlinked path, a worktree's path).
  const common = await gitCommonDir(repo);
  const key = await realpath(common).catch(() => common);
  const before = adminQueues.get(key) ?? Promise.resolve();
  const run = before.then(fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  adminQueues.set(key, settled);
  try {
    return await run;
  } finally {
    if (adminQueues.get(key) === settled) adminQueues.delete(key);
  }
}

/** All worktrees of the repository, the main one first. */
export async function listWorktrees(repo: string): Promise<WorktreeInfo[]> {
  const r = await withWorktreeAdmin(repo, () => runGit(repo, ['worktree', 'list', '--porcelain', '-z']));
  return parseWorktreeList(r.stdout);
}
