// Agents' worktrees: created in Ralph's cache directory, keyed by the repository
// (`<cache>/<repo key>/worktrees/<name>`, src/git/repoCache.ts), outside the repository tree,
// so no tool run in the checkout (a test runner, a build, a watcher, a search) sees an
// agent's half-done work; each on its own branch `ralph/<name>`, reset to a given commit,
// removed, and found again after a crash. Worktrees of older versions, under
// `<git-common-dir>/ralph/worktrees/`, are listed too and moved out on the next start.
import { readFile, readdir, realpath, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { runGit } from './exec';
import { branchTip, gitCommonDir, listWorktrees, withWorktreeAdmin, worktreeGitDir } from './repo';
import { legacyWorktreesRoot, worktreesRoot } from './repoCache';
import { pathExists } from '../shared/fs';

export { legacyWorktreesRoot, worktreesRoot };

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
  const common = await gitCommonDir(repo);
  const path = join(root, name);
  const branch = ralphBranchName(name);
  if (await isLinkedWorktree(path, common)) {
    await resetWorktree(path, base, { keepIgnored: options.keepIgnored ?? false, branch });
    return { name, path, branch, base };
  }
  // A same-named worktree in the old place holds the branch `worktree add -B` needs.
  const legacy = join(await legacyWorktreesRoot(repo), name);
  if (await pathExists(legacy)) await removeWorktreeAt(repo, legacy, common);
  // A directory git does not know (or a registration whose directory is gone) is debris of
  // a crash: clear both before adding afresh (a first start has neither, and needs no prune).
  await withWorktreeAdmin(repo, async () => {
    await rm(path, { recursive: true, force: true });
    if (await anyRegistrationGone(common)) await runGit(repo, ['worktree', 'prune']);
    await runGit(repo, ['worktree', 'add', '--force', '--quiet', '-B', branch, path, base]);
  });
  return { name, path, branch, base };
}

/**
 * Whether `git worktree prune` would find something: an admin dir under
 * `<commonDir>/worktrees/` whose worktree is gone (or that it cannot read). Such a
 * registration would keep its branch from `worktree add -B`, even with --force.
 */
async function anyRegistrationGone(commonDir: string): Promise<boolean> {
  let admins: string[];
  try {
    admins = await readdir(join(commonDir, 'worktrees'));
  } catch {
    return false;
  }
  const gone = await Promise.all(
    admins.map(async (a) => {
      const back = await readFile(join(commonDir, 'worktrees', a, 'gitdir'), 'utf8').catch(() => null);
      return back === null || !(await pathExists(resolve(commonDir, 'worktrees', a, back.trim())));
    }),
  );
  return gone.includes(true);
}

/** Unregisters and deletes the worktree at `path` (registered or not). */
async function removeWorktreeAt(repo: string, path: string, common: string): Promise<void> {
  await withWorktreeAdmin(repo, async () => {
    if (await isLinkedWorktree(path, common)) {
      await runGit(repo, ['worktree', 'remove', '--force', '--force', path], { allowExitCodes: [128] });
    }
    await rm(path, { recursive: true, force: true });
    await runGit(repo, ['worktree', 'prune']);
  });
}

/**
 * Moves a project from the old layout: every worktree under `<git-common-dir>/ralph/worktrees`
 * is removed (its branch stays; a worktree is reset at every claim, so nothing in it is kept
 * across runs) and the folder deleted. Worktrees are created in the cache on demand. Returns
 * the names removed.
 */
export async function migrateLegacyWorktrees(repo: string): Promise<string[]> {
  const root = await legacyWorktreesRoot(repo);
  if (!(await pathExists(root))) return [];
  const common = await gitCommonDir(repo);
  const names = (await listRalphWorktrees(repo)).filter((w) => w.legacy).map((w) => w.name);
  for (const name of names) await removeWorktreeAt(repo, join(root, name), common);
  await rm(root, { recursive: true, force: true });
  // `<common>/ralph` was Ralph's alone; leave it only if someone put something else there.
  await rmdir(dirname(root)).catch(() => undefined);
  return names;
}

/**
 * Whether `path` is a live linked worktree of the repository whose common git dir is
 * `commonDir`, read from the two files git links them with (`<path>/.git` names the admin dir
 * under the common dir, whose `gitdir` names `<path>/.git` back): the loop asks this every
 * cycle, and reading two small files is far cheaper than `git worktree list`.
 */
async function isLinkedWorktree(path: string, commonDir: string): Promise<boolean> {
  try {
    const m = /^gitdir: (.*)$/m.exec(await readFile(join(path, '.git'), 'utf8'));
    if (m?.[1] === undefined) return false;
    const admin = resolve(path, m[1].trim());
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
  const common = await gitCommonDir(repo);
  for (const root of [await worktreesRoot(repo), await legacyWorktreesRoot(repo)]) {
    const path = join(root, name);
    if (await pathExists(path)) await removeWorktreeAt(repo, path, common);
  }
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
  /** In the old place inside the repository's git dir (moved out on the next start). */
  readonly legacy: boolean;
}

/**
 * Ralph's worktrees: those git has registered under either worktrees root (the cache's and
 * the old one in the git dir) and stray directories there.
 */
export async function listRalphWorktrees(repo: string): Promise<ListedRalphWorktree[]> {
  const roots = [
    { root: await worktreesRoot(repo), legacy: false },
    { root: await legacyWorktreesRoot(repo), legacy: true },
  ];
  const registered = await listWorktrees(repo);
  const found = new Map<string, ListedRalphWorktree>();
  for (const { root, legacy } of roots) {
    const canonRoot = await canonical(root);
    const byName = new Map<string, ListedRalphWorktree>();
    for (const w of registered) {
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
            legacy,
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
        byName.set(d, { name: d, path: join(root, d), registered: false, missing: false, branch: null, head: null, legacy });
      }
    }
    for (const [name, w] of byName) found.set(`${legacy ? 1 : 0}:${name}`, w);
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name) || Number(a.legacy) - Number(b.legacy));
}

/**
 * Ralph worktrees no active agent owns (after a crash or a reconfiguration), and stray
 * directories git no longer knows. Prunes git's records of vanished worktrees first.
 */
export async function findOrphanedWorktrees(repo: string, activeNames: readonly string[]): Promise<ListedRalphWorktree[]> {
  await withWorktreeAdmin(repo, () => runGit(repo, ['worktree', 'prune']));
  const active = new Set(activeNames);
  return (await listRalphWorktrees(repo)).filter((w) => w.legacy || !active.has(w.name) || !w.registered);
}
