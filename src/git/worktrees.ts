// Agents' worktrees: created under `<git-common-dir>/ralph/worktrees/<name>` (invisible to
// the user's build tools, watchers and searches), each on its own branch `ralph/<name>`,
// reset to a given commit, removed, and found again after a crash.
import { readFile, readdir, realpath, rm } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { runGit } from './exec';
import { branchTip, gitCommonDir, listWorktrees, withWorktreeAdmin, worktreeGitDir } from './repo';
import { pathExists } from '../shared/fs';

/** A worktree name that cannot be a directory and branch component. */
export class InvalidWorktreeNameError extends Error {
  override readonly name = 'InvalidWorktreeNameError';
  constructor(readonly worktreeName: string) {
    super(`invalid worktree name ${JSON.stringify(worktreeName)}: use letters, digits, '.', '_' or '-'`);
  }
}

/** The commit or branch a worktree should start from does not exist. */
export class UnknownBaseError extends Error {
  override readonly name = 'UnknownBaseError';
  constructor(readonly base: string) {
    super(`cannot start a worktree from ${JSON.stringify(base)}: no such branch or commit`);
  }
}

export interface RalphWorktree {
  readonly name: string;
  readonly path: string;
  /** `ralph/<name>` */
  readonly branch: string;
  /** The commit the worktree was (re)started from. */
  readonly base: string;
}

export interface EnsureWorktreeOptions {
  /** The agent's worktree name, e.g. `worker-1` or `primary`. */
  readonly name: string;
  /** The target branch whose current tip the worktree starts from. */
  readonly branch: string;
  /** An explicit start commit; defaults to the tip of `branch`. */
  readonly base?: string;
  /** Keep ignored files (node_modules, build output) when resetting an existing worktree. */
  readonly keepIgnored?: boolean;
}

const validName = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function ralphBranchName(name: string): string {
  return `ralph/${name}`;
}

/** Where Ralph keeps its worktrees for this repository. */
export async function worktreesRoot(repo: string): Promise<string> {
  return join(await gitCommonDir(repo), 'ralph', 'worktrees');
}

async function canonical(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return p;
  }
}

async function resolveCommit(repo: string, rev: string): Promise<string> {
  const r = await runGit(repo, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { allowExitCodes: [1] });
  if (r.exitCode !== 0) throw new UnknownBaseError(rev);
  return r.stdout.trim();
}

/**
 * Creates the agent's worktree, or resets the existing one, at the target branch's current
 * tip (or `base`), on branch `ralph/<name>`. Anything the agent left there is discarded.
 */
export async function ensureWorktree(repo: string, options: EnsureWorktreeOptions): Promise<RalphWorktree> {
  const { name } = options;
  if (!validName.test(name)) throw new InvalidWorktreeNameError(name);
  let base: string;
  if (options.base !== undefined) base = await resolveCommit(repo, options.base);
  else {
    const tip = await branchTip(repo, options.branch);
    if (tip === null) throw new UnknownBaseError(options.branch);
    base = tip;
  }
  const root = await worktreesRoot(repo);
  const path = join(root, name);
  const branch = ralphBranchName(name);
  if (await isLinkedWorktree(path, root)) {
    await resetWorktree(path, base, { keepIgnored: options.keepIgnored ?? false, branch });
    return { name, path, branch, base };
  }
  // A directory git does not know (or a registration whose directory is gone) is debris of
  // a crash: clear both before adding afresh.
  await withWorktreeAdmin(repo, async () => {
    await rm(path, { recursive: true, force: true });
    await runGit(repo, ['worktree', 'prune']);
    await runGit(repo, ['worktree', 'add', '--force', '--quiet', '-B', branch, path, base]);
  });
  return { name, path, branch, base };
}

/**
 * Whether `path` is a live linked worktree of the repository whose worktrees root is
 * `root`, read from the two files git links them with (`<path>/.git` names the admin dir
 * under the common dir, whose `gitdir` names `<path>/.git` back): the loop asks this every
 * cycle, and reading two small files is far cheaper than `git worktree list`.
 */
async function isLinkedWorktree(path: string, root: string): Promise<boolean> {
  try {
    const m = /^gitdir: (.*)$/m.exec(await readFile(join(path, '.git'), 'utf8'));
    if (m?.[1] === undefined) return false;
    const admin = resolve(path, m[1].trim());
    const commonDir = resolve(root, '..', '..');
    if ((await canonical(resolve(admin, '..', '..'))) !== (await canonical(commonDir))) return false;
    const back = (await readFile(join(admin, 'gitdir'), 'utf8')).trim();
    if ((await canonical(resolve(admin, back))) !== (await canonical(join(path, '.git')))) return false;
    // A half-written admin dir (a crash inside `worktree add`) is not a usable worktree.
    return (await pathExists(join(admin, 'commondir'))) && (await pathExists(join(admin, 'HEAD')));
  } catch {
    return false;
  }
}

export interface ResetWorktreeOptions {
  /** Keep ignored files (dependencies, build output); default false keeps nothing. */
  readonly keepIgnored?: boolean;
  /** Also point this branch at the commit (the worktree's own `ralph/<name>` branch). */
  readonly branch?: string;
}

/** Hard-resets the worktree to `commit` and removes every untracked file. */
export async function resetWorktree(worktree: string, commit: string, options: ResetWorktreeOptions = {}): Promise<void> {
  // A half-finished merge or rebase would make checkout refuse; clear them first (their
  // state files tell, without spawning git on every reset).
  const gd = await worktreeGitDir(worktree);
  const busy = gd === null ? ['rebase', 'merge'] : await unfinishedOperations(gd);
  if (busy.includes('rebase')) await runGit(worktree, ['rebase', '--abort'], { allowExitCodes: [1, 128] });
  if (busy.includes('merge')) await runGit(worktree, ['merge', '--abort'], { allowExitCodes: [1, 128] });
  if (options.branch !== undefined) {
    await runGit(worktree, ['checkout', '--quiet', '--force', '-B', options.branch, commit]);
  } else {
    await runGit(worktree, ['reset', '--quiet', '--hard', commit]);
  }
  await runGit(worktree, ['clean', '--quiet', '-f', '-f', '-d', ...(options.keepIgnored === true ? [] : ['-x'])]);
}

/** Which of rebase / merge is half-finished in the git dir `gd`. */
async function unfinishedOperations(gd: string): Promise<Array<'rebase' | 'merge'>> {
  const out: Array<'rebase' | 'merge'> = [];
  if ((await pathExists(join(gd, 'rebase-merge'))) || (await pathExists(join(gd, 'rebase-apply')))) out.push('rebase');
  if ((await pathExists(join(gd, 'MERGE_HEAD'))) || (await pathExists(join(gd, 'AUTO_MERGE')))) out.push('merge');
  return out;
}

export interface RemoveWorktreeOptions {
  /** Delete the `ralph/<name>` branch too (default true). */
  readonly deleteBranch?: boolean;
}

/** Removes the agent's worktree (registered or not) and, by default, its branch. */
export async function removeWorktree(repo: string, name: string, options: RemoveWorktreeOptions = {}): Promise<void> {
  if (!validName.test(name)) throw new InvalidWorktreeNameError(name);
  const path = join(await worktreesRoot(repo), name);
  await withWorktreeAdmin(repo, async () => {
    if (await isLinkedWorktree(path, await worktreesRoot(repo))) {
      await runGit(repo, ['worktree', 'remove', '--force', '--force', path], { allowExitCodes: [128] });
    }
    await rm(path, { recursive: true, force: true });
    await runGit(repo, ['worktree', 'prune']);
  });
  if (options.deleteBranch ?? true) {
    await runGit(repo, ['branch', '--quiet', '-D', ralphBranchName(name)], { allowExitCodes: [1] });
  }
}

export interface ListedRalphWorktree {
  readonly name: string;
  readonly path: string;
  /** Known to `git worktree list`. */
  readonly registered: boolean;
  /** Registered, but its directory is gone (git would prune it). */
  readonly missing: boolean;
  readonly branch: string | null;
  readonly head: string | null;
}

/** Ralph's worktrees: those git has registered under the worktrees root and stray directories there. */
export async function listRalphWorktrees(repo: string): Promise<ListedRalphWorktree[]> {
  const root = await worktreesRoot(repo);
  const canonRoot = await canonical(root);
  const byName = new Map<string, ListedRalphWorktree>();
  for (const w of await listWorktrees(repo)) {
    const p = await canonical(w.path);
    for (const r of new Set([root, canonRoot])) {
      if (p.startsWith(r + sep) || w.path.startsWith(r + sep)) {
        const rest = (w.path.startsWith(r + sep) ? w.path : p).slice(r.length + 1);
        if (rest.includes(sep)) continue;
        byName.set(rest, {
          name: rest,
          path: join(root, rest),
          registered: true,
          missing: w.prunable || !(await pathExists(w.path)),
          branch: w.branch,
          head: w.head,
        });
      }
    }
  }
  let dirs: string[] = [];
  try {
    dirs = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    dirs = [];
  }
  for (const d of dirs) {
    if (!byName.has(d)) {
      byName.set(d, { name: d, path: join(root, d), registered: false, missing: false, branch: null, head: null });
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Ralph worktrees no active agent owns (after a crash or a reconfiguration), and stray
 * directories git no longer knows. Prunes git's records of vanished worktrees first.
 */
export async function findOrphanedWorktrees(repo: string, activeNames: readonly string[]): Promise<ListedRalphWorktree[]> {
  await withWorktreeAdmin(repo, () => runGit(repo, ['worktree', 'prune']));
  const active = new Set(activeNames);
  return (await listRalphWorktrees(repo)).filter((w) => !active.has(w.name) || !w.registered);
}
