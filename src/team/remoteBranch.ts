// The target branch as the shared remote has it (team mode). Workers start each task from
// the remote's tip; the promoter keeps its clone's branch level with the remote before each
// promotion and publishes each promotion there by compare-and-swap before the store records
// it, so a promotion the store knows of is always on the remote's branch. The remote's tip
// is fetched into a ref of Ralph's own (`refs/ralph/upstream/<branch>`), never into the
// user's branches or remote-tracking refs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PATCH_DIFF_ARGS } from '../git/capture';
import { gitOut, runGit } from '../git/exec';
import { writeFileAtomic } from '../shared/fs';
import { branchTip, currentBranch } from '../git/repo';
import { pushBranchCas, remoteRefSha } from './patchRefs';

const BRANCH = /^[A-Za-z0-9._/-]+$/;

function checkBranch(branch: string): void {
  if (!BRANCH.test(branch) || branch.startsWith('-') || branch.includes('..'))
    throw new Error(`'${branch.slice(0, 80)}' is not a branch name`);
}

export const upstreamRef = (branch: string): string => `refs/ralph/upstream/${branch}`;

/** The remote's branch differs from ours in a way Ralph may not settle (a push by hand that diverged). */
export class BranchDivergedError extends Error {
  override readonly name = 'BranchDivergedError';
  constructor(
    readonly branch: string,
    readonly local: string,
    readonly remote: string,
  ) {
    super(
      `${branch} here (${local.slice(0, 8)}) and on the remote (${remote.slice(0, 8)}) have diverged; ` +
        'promotion waits until a human brings them together (e.g. rebase the local commits onto the remote and push)',
    );
  }
}

async function isAncestorOf(repo: string, ancestor: string, of: string): Promise<boolean> {
  const r = await runGit(repo, ['merge-base', '--is-ancestor', ancestor, of], { allowExitCodes: [1, 128] });
  return r.exitCode === 0;
}

/** Fetches the remote's `branch` into Ralph's upstream ref; returns its commit. */
export async function fetchBranchTip(repo: string, remote: string, branch: string): Promise<string> {
  checkBranch(branch);
  if (remote === '' || remote.startsWith('-')) throw new Error(`'${remote.slice(0, 80)}' is not a git remote`);
  await runGit(repo, ['fetch', '--no-tags', '--no-write-fetch-head', remote, `+refs/heads/${branch}:${upstreamRef(branch)}`]);
  return gitOut(repo, ['rev-parse', '--verify', `${upstreamRef(branch)}^{commit}`]);
}

/**
 * Puts `commit` on the remote's `branch`: a no-op when it is there; a compare-and-swap push
 * when the remote's tip is an ancestor of it; BranchDivergedError otherwise.
 */
export async function publishBranch(repo: string, remote: string, branch: string, commit: string): Promise<void> {
  const ref = `refs/heads/${branch}`;
  for (let attempt = 0; ; attempt++) {
    const there = await remoteRefSha(repo, remote, ref);
    if (there === commit) return;
    // Already in the remote's history (published before a crash, found again by its trailer).
    if (there !== null && (await isAncestorOf(repo, commit, there))) return;
    if (there === null) throw new Error(`the remote has no branch ${branch}; create it (git push ${remote} ${branch}) first`);
    if (!(await isAncestorOf(repo, there, commit))) {
      // Maybe a commit we do not have yet: fetch it and look again, once.
      if (attempt === 0) {
        await fetchBranchTip(repo, remote, branch);
        continue;
      }
      throw new BranchDivergedError(branch, commit, there);
    }
    const r = await pushBranchCas(repo, remote, branch, commit, there);
    if (r.kind === 'pushed') return;
    if (attempt >= 2) throw new Error(`push of ${commit.slice(0, 8)} to ${branch} refused: ${r.detail}`);
  }
}

/**
 * Brings this clone's `branch` level with the remote's before a promotion: fast-forwards it
 * when the remote is ahead (another promoter's work), publishes our own commits when we are
 * ahead (a promotion whose push a crash cut off). Returns the tip both now have.
 */
export async function syncBranch(repo: string, remote: string, branch: string): Promise<string> {
  const theirs = await fetchBranchTip(repo, remote, branch);
  const ours = await branchTip(repo, branch);
  if (ours === theirs) return ours;
  if (ours === null || (await isAncestorOf(repo, ours, theirs))) {
    if ((await currentBranch(repo)) === branch) {
      // The branch is checked out here: the working tree comes along, or nothing moves.
      await runGit(repo, ['merge', '--ff-only', '--no-edit', '--quiet', theirs]);
    } else {
      await runGit(repo, ['update-ref', '-m', 'ralph: level with the remote', `refs/heads/${branch}`, theirs, ...(ours ? [ours] : [])]);
    }
    return theirs;
  }
  if (await isAncestorOf(repo, theirs, ours)) {
    await publishBranch(repo, remote, branch, ours);
    return ours;
  }
  throw new BranchDivergedError(branch, ours, theirs);
}

const RALPH_AUTHOR = {
  GIT_AUTHOR_NAME: 'Ralph',
  GIT_AUTHOR_EMAIL: 'ralph@localhost',
  GIT_COMMITTER_NAME: 'Ralph',
  GIT_COMMITTER_EMAIL: 'ralph@localhost',
};

/**
 * The commit of exactly `patchFile` on `base` (a temporary index; the worktree is not
 * touched): what a worker pushes as its patch ref, so the promoter gets what the gates saw.
 */
export async function commitOfPatch(repo: string, base: string, patchFile: string, message: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ralph-patch-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(dir, 'index'), ...RALPH_AUTHOR };
    await runGit(repo, ['read-tree', base], { env });
    await runGit(repo, ['apply', '--cached', '--binary', '--whitespace=nowarn', patchFile], { env });
    const tree = await gitOut(repo, ['write-tree'], { env });
    return await gitOut(repo, ['commit-tree', tree, '-p', base, '-F', '-'], { env, input: message });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The patch file of a worker's commit, for the promotion machinery: the commit must have
 * exactly one parent, the base the worker's gates ran on.
 */
export async function patchFileOfCommit(repo: string, commit: string, base: string, outFile: string): Promise<void> {
  const parents = (await gitOut(repo, ['rev-list', '--parents', '-n', '1', commit])).split(' ').slice(1);
  if (parents.length !== 1 || parents[0] !== base) {
    throw new Error(
      `patch commit ${commit.slice(0, 8)} is not one commit on ${base.slice(0, 8)} (parents: ${parents.join(', ') || 'none'})`,
    );
  }
  const diff = await runGit(repo, [
    '-c',
    'diff.noprefix=false',
    '-c',
    'diff.mnemonicPrefix=false',
    'diff',
    ...PATCH_DIFF_ARGS,
    base,
    commit,
  ]);
  await writeFileAtomic(outFile, diff.stdoutBuffer, { mkdir: true });
}
