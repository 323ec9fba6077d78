// Over 400 lines because promotion's crash-ordered steps (index, apply, commit, update-ref, checkout follow, recovery) must be read together.
// Promotion: a captured patch becomes one commit on the target branch through plumbing
// (temp index, apply, write-tree, commit-tree, compare-and-swap update-ref), and, when the
// user has that branch checked out, their checkout follows like a fast-forward merge.
//
// Why the checkout step matters: moving the branch ref alone leaves
// the user's index at the old tree, so `git status` shows the promoted work as a reverse
// diff and the next ordinary commit silently reverts it. Here the ref and the checkout move
// together, or not at all: if the promotion would overwrite an uncommitted user edit, it
// waits and says which files.
//
// Crash safety outside the checkout step: the commit object is written before the ref
// moves (a crash leaves at most an unreachable object); once the ref moved, a repeated
// promotion of the same `patchId` finds the commit by its trailer instead of applying twice.
import { link, lstat, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve, sep } from 'node:path';
import { GitError, runGit, splitNul } from './exec';
import { writeFileAtomic } from '../shared/fs';
import { branchTip, branchTipAndTree, copyIndexFile, gitCommonDir, gitDir, listWorktrees, repoRoot, worktreeGitDir } from './repo';
import type { WorktreeInfo } from './repo';
import { legacyWorktreesRoot, worktreesRoot } from './repoCache';
import { pidAlive } from '../shared/process';

export class BranchNotFoundError extends Error {
  override readonly name = 'BranchNotFoundError';
  constructor(readonly branch: string) {
    super(`branch ${JSON.stringify(branch)} does not exist`);
  }
}

export class EmptyPatchError extends Error {
  override readonly name = 'EmptyPatchError';
  constructor(readonly patchFile: string) {
    super(`patch ${patchFile} is empty: there is nothing to promote`);
  }
}

/** The target branch is checked out in an agent's worktree; promotion must not move it. */
export class BranchCheckedOutByAgentError extends Error {
  override readonly name = 'BranchCheckedOutByAgentError';
  constructor(
    readonly branch: string,
    readonly worktree: string,
  ) {
    super(`branch ${JSON.stringify(branch)} is checked out in the agent worktree ${worktree}; promotion refused`);
  }
}

export interface Identity {
  readonly name: string;
  readonly email: string;
}

export interface PromoteOptions {
  /** Target branch (short name, e.g. `main`). */
  readonly branch: string;
  readonly patchFile: string;
  /** Full commit message; see formatPromotionMessage. */
  readonly message: string;
  readonly author?: Identity;
  /**
   * Adds a `Ralph-Patch: <id>` trailer and makes promotion idempotent: if a commit with that
   * trailer is already on the branch (a crash after the ref moved), it is returned instead.
   */
  readonly patchId?: string;
  /** Fall back to a 3-way merge when the patch does not apply exactly (default true). */
  readonly threeWay?: boolean;
  /**
   * The commit the patch was captured against: limits the search for an earlier promotion
   * of `patchId` to `baseCommit..branch` instead of the whole history.
   */
  readonly baseCommit?: string;
  /**
   * Promote only onto this commit. The gates ran on the patch applied to its base; if the
   * branch has moved since, a 3-way apply would commit code no gate has seen, so answer
   * `conflict` / `branch-moved` instead and let the caller rebase and re-verify.
   */
  readonly expectedTip?: string;
  /**
   * How long to wait for another git command's `index.lock` in the user's checkout (an
   * editor's periodic `git status` takes it briefly) before answering `waiting`. Default 2000.
   */
  readonly lockWaitMs?: number;
  /**
   * Told what recovery repaired when this promotion met an interrupted promotion's lock, or
   * after it failed (start-up recovery handles what a killed run left; see promotePatch).
   */
  readonly onRecovered?: (outcome: RecoveryOutcome) => void;
}

export type WaitingWhy = 'modified' | 'staged' | 'untracked' | 'ignored' | 'unmerged' | 'locked' | 'refused';

export interface WaitingFile {
  readonly path: string;
  readonly why: WaitingWhy;
}

export type PromoteResult =
  | {
      readonly status: 'promoted';
      readonly commit: string;
      readonly parent: string;
      /** The commit was already on the branch (found by its Ralph-Patch trailer). */
      readonly alreadyPromoted: boolean;
      /** The user's checkout that was brought forward, if the branch is checked out. */
      readonly checkout: string | null;
    }
  | { readonly status: 'conflict'; readonly reason: 'does-not-apply' | 'branch-moved' | 'no-change'; readonly detail: string }
  | { readonly status: 'waiting'; readonly reason: string; readonly worktree: string; readonly files: readonly WaitingFile[] };

/** `ralph(<task>): <title>` plus an optional body. */
export function formatPromotionMessage(taskId: string, title: string, body?: string): string {
  const subject = `ralph(${taskId}): ${title.replace(/\s+/g, ' ').trim()}`;
  return body === undefined || body.trim() === '' ? subject : `${subject}\n\n${body.trim()}`;
}

const RALPH_IDENTITY: Identity = { name: 'Ralph Loop', email: 'ralph@localhost' };
const TRAILER = 'Ralph-Patch';

async function topOrRepo(repo: string): Promise<string> {
  try {
    return (await repoRoot(repo)) || repo;
  } catch {
    return repo; // a bare repository has no top level
  }
}

/** The commit on `branch` that carries `Ralph-Patch: <patchId>`, if any. */
export async function findPromotedCommit(repo: string, branch: string, patchId: string, sinceCommit?: string): Promise<string | null> {
  const range = sinceCommit === undefined ? `refs/heads/${branch}` : `${sinceCommit}..refs/heads/${branch}`;
  const r = await runGit(repo, [
    'log',
    '--fixed-strings',
    `--grep=${TRAILER}: ${patchId}`,
    `--format=%H%x00%(trailers:key=${TRAILER},valueonly,separator=%x01)%x00`,
    range,
    '--',
  ]);
  const parts = splitNul(r.stdout.replace(/\n/g, ''));
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const values = (parts[i + 1] as string).split('\x01').map((v) => v.trim());
    if (values.includes(patchId)) return parts[i] as string;
  }
  return null;
}

// Whether git can find a committer identity, per repository (it is looked up on every
// promotion otherwise; configuration rarely changes while the loop runs, and a stale
// answer only means committing as Ralph or failing once).
const identityKnown = new Map<string, boolean>();

async function identityEnv(repo: string, author: Identity | undefined): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  let known = identityKnown.get(repo);
  if (known !== true) {
    known = (await runGit(repo, ['var', 'GIT_COMMITTER_IDENT'], { allowExitCodes: [128] })).exitCode === 0;
    identityKnown.set(repo, known);
  }
  const committer = { exitCode: known ? 0 : 128 };
  if (committer.exitCode !== 0) {
    // No identity configured (a CI box, a fresh container): commit as Ralph rather than fail.
    env['GIT_COMMITTER_NAME'] = RALPH_IDENTITY.name;
    env['GIT_COMMITTER_EMAIL'] = RALPH_IDENTITY.email;
  }
  const a = author ?? (committer.exitCode !== 0 ? RALPH_IDENTITY : undefined);
  if (a !== undefined) {
    env['GIT_AUTHOR_NAME'] = a.name;
    env['GIT_AUTHOR_EMAIL'] = a.email;
  }
  return env;
}

type TreeResult = { ok: true; tree: string } | { ok: false; detail: string };

/** Applies the patch onto `base` in a temporary index; no working tree is involved. */
async function treeWithPatch(top: string, base: string, patchFile: string, threeWay: boolean): Promise<TreeResult> {
  const dir = await mkdtemp(join(tmpdir(), 'ralph-promote-'));
  try {
    const env = { GIT_INDEX_FILE: join(dir, 'index') };
    await runGit(top, ['read-tree', base], { env });
    const apply = await runGit(
      top,
      [
        'apply',
        '--cached',
        ...(threeWay ? ['--3way'] : []),
        '--whitespace=nowarn',
        '--exclude=.ralph/*',
        '--exclude=.ralph',
        resolve(patchFile),
      ],
      { env, allowExitCodes: [1, 128] },
    );
    // A 3-way apply with conflicts exits 1 and leaves unmerged entries, on which write-tree
    // fails: either way the patch does not apply cleanly.
    const written = apply.exitCode === 0 ? await runGit(top, ['write-tree'], { env, allowExitCodes: [128] }) : null;
    if (written === null || written.exitCode !== 0) {
      return { ok: false, detail: `${apply.stderr}${apply.stdout}`.trim() || 'git apply reported conflicts' };
    }
    return { ok: true, tree: written.stdout.trim() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

type CasOutcome = { ok: true } | { ok: false; why: 'moved' | 'locked'; detail: string };

/** Compare-and-swap of the branch ref: fails when it no longer points at `old` or is locked. */
async function casBranch(repo: string, branch: string, next: string, old: string, reason: string): Promise<CasOutcome> {
  const r = await runGit(repo, ['update-ref', '-m', reason, `refs/heads/${branch}`, next, old], { allowExitCodes: [1, 128] });
  if (r.exitCode === 0) return { ok: true };
  if ((await branchTip(repo, branch)) !== old) {
    return { ok: false, why: 'moved', detail: `${branch} moved away from ${old} during promotion` };
  }
  if (/cannot lock ref|Unable to create .*\.lock/.test(r.stderr)) {
    return { ok: false, why: 'locked', detail: r.stderr.trim() };
  }
  throw new GitError(['update-ref', `refs/heads/${branch}`, next, old], repo, r.exitCode, r.stdout, r.stderr);
}

function refLocked(branch: string, detail: string, worktree: string): PromoteResult {
  return {
    status: 'waiting',
    reason: `another process holds the lock of refs/heads/${branch}: ${detail}`,
    worktree,
    files: [{ path: `refs/heads/${branch}.lock`, why: 'locked' }],
  };
}

function isUnder(p: string, root: string): boolean {
  return p === root || p.startsWith(root + sep);
}

async function rebasingBranch(wt: WorktreeInfo): Promise<string | null> {
  const gd = await worktreeGitDir(wt.path);
  if (gd === null) return null;
  for (const d of ['rebase-merge', 'rebase-apply']) {
    try {
      return (await readFile(join(gd, d, 'head-name'), 'utf8')).trim().replace(/^refs\/heads\//, '');
    } catch {
      // not rebasing with this backend
    }
  }
  return null;
}

/**
 * A promotion stopped at a lock or marker that an interrupted promotion (its owner gone)
 * left in `worktree`: recovery repairs it, then the promotion starts again.
 */
interface Interrupted {
  readonly status: 'interrupted';
  readonly worktree: string;
}

export type PromoteAttempt = PromoteResult | Interrupted;

/**
 * Promotes `patchFile` onto `branch` as one commit; see the module header.
 *
 * Crash recovery is not run before each promotion: start-up recovery repairs what a killed
 * run left, and a promotion repairs only what stands in its way (an interrupted
 * promotion's lock where it needs one) or what its own failure left (a git process killed
 * while the user's checkout was being updated leaves the lock and its marker, as a crash
 * would, and recovery puts the checkout back at once).
 */
export async function promotePatch(repo: string, options: PromoteOptions): Promise<PromoteResult> {
  const patch = await readFile(options.patchFile);
  if (patch.length === 0) throw new EmptyPatchError(options.patchFile);
  const top = await topOrRepo(repo);
  const recover = async (): Promise<void> => {
    for (const o of await recoverInterruptedPromotion(top)) options.onRecovered?.(o);
  };
  const attempt = async (): Promise<PromoteAttempt> => {
    try {
      return await promoteOnce(top, options);
    } catch (e) {
      await recover().catch((r: unknown) =>
        options.onRecovered?.({ worktree: top, action: 'skipped', reason: `recovery after the failed promotion failed: ${String(r)}` }),
      );
      throw e;
    }
  };
  const first = await attempt();
  if (first.status !== 'interrupted') return first;
  await recover();
  const again = await attempt();
  if (again.status !== 'interrupted') return again;
  return {
    status: 'waiting',
    reason: `an interrupted promotion's lock in ${again.worktree} is still there after recovery`,
    worktree: again.worktree,
    files: [{ path: 'index.lock', why: 'locked' }],
  };
}

type EarlyTree = Promise<{ readonly built: TreeResult } | { readonly error: unknown }>;

async function promoteOnce(top: string, options: PromoteOptions): Promise<PromoteAttempt> {
  // A patch verified on a tip is usually promoted onto that same tip: its tree is built
  // while the tip is read, and thrown away when the tip has moved.
  const early: EarlyTree | undefined =
    options.expectedTip === undefined
      ? undefined
      : treeWithPatch(top, options.expectedTip, options.patchFile, options.threeWay ?? true).then(
          (built) => ({ built }),
          (error: unknown) => ({ error }),
        );
  try {
    return await promoteOntoTip(top, options, early);
  } finally {
    // Its git processes and temp folder end before the promotion returns.
    await early;
  }
}

async function promoteOntoTip(top: string, options: PromoteOptions, early: EarlyTree | undefined): Promise<PromoteAttempt> {
  const { branch } = options;
  const [worktrees, tip] = await Promise.all([listWorktrees(top), branchTipAndTree(top, branch)]);
  if (tip === null) throw new BranchNotFoundError(branch);
  const old = tip.commit;
  // A patch verified on the current tip cannot have been promoted yet (its commit would be a
  // child of that tip, so the tip would have moved): no history search then.
  if (options.patchId !== undefined && options.expectedTip !== old) {
    const done = await findPromotedCommit(top, branch, options.patchId, options.baseCommit);
    if (done !== null) {
      const parent = (await runGit(top, ['rev-parse', `${done}^`])).stdout.trim();
      return { status: 'promoted', commit: done, parent, alreadyPromoted: true, checkout: null };
    }
  }
  if (options.expectedTip !== undefined && options.expectedTip !== old) {
    return {
      status: 'conflict',
      reason: 'branch-moved',
      detail: `${branch} moved from ${options.expectedTip.slice(0, 8)} to ${old.slice(0, 8)} since the patch was verified`,
    };
  }

  const ralphRoots = [await worktreesRoot(top), await legacyWorktreesRoot(top)];
  const holders: WorktreeInfo[] = [];
  for (const wt of worktrees) {
    if (wt.bare) continue;
    if (wt.branch === branch || (await rebasingBranch(wt)) === branch) {
      if (ralphRoots.some((r) => isUnder(wt.path, r))) throw new BranchCheckedOutByAgentError(branch, wt.path);
      holders.push(wt);
    }
  }
  for (const wt of holders) {
    if (wt.branch !== branch) {
      return { status: 'waiting', reason: `the branch is being rebased in ${wt.path}`, worktree: wt.path, files: [] };
    }
  }

  const speculated = options.expectedTip === old ? await early : undefined;
  if (speculated !== undefined && 'error' in speculated) throw speculated.error;
  const built = speculated?.built ?? (await treeWithPatch(top, old, options.patchFile, options.threeWay ?? true));
  if (!built.ok) return { status: 'conflict', reason: 'does-not-apply', detail: built.detail };
  if (built.tree === tip.tree) {
    return { status: 'conflict', reason: 'no-change', detail: `the patch changes nothing on ${branch} at ${old}` };
  }
  const message = options.patchId === undefined ? options.message : `${options.message.trimEnd()}\n\n${TRAILER}: ${options.patchId}\n`;
  const commit = (
    await runGit(top, ['commit-tree', built.tree, '-p', old, '-F', '-'], {
      input: message,
      env: await identityEnv(top, options.author),
    })
  ).stdout.trim();
  const reflog = `ralph: promote ${options.message.split('\n')[0] ?? ''}`;

  const checkout = holders[0];
  if (checkout === undefined) {
    // A marker beside the ref update lets recovery tell a lock left by a killed update-ref
    // of ours from someone else's.
    const markerFile = join(await gitCommonDir(top), 'ralph', REF_MARKER);
    // An interrupted promotion's marker names the ref lock it may have left: repaired
    // first, not overwritten (its lock would then look like someone else's).
    if (await refMarkerInterrupted(markerFile)) return { status: 'interrupted', worktree: top };
    const token = randomUUID();
    await writeFileAtomic(markerFile, JSON.stringify({ pid: process.pid, token, branch, next: commit }), { mkdir: true });
    activeTokens.add(token);
    let cas: CasOutcome | undefined;
    try {
      cas = await casBranch(top, branch, commit, old, reflog);
    } finally {
      activeTokens.delete(token);
      // A killed update-ref may have left the ref's lock: the marker stays for recovery.
      if (cas !== undefined) await rm(markerFile, { force: true });
    }
    if (!cas.ok && cas.why === 'locked') return refLocked(branch, cas.detail, top);
    if (!cas.ok) return { status: 'conflict', reason: 'branch-moved', detail: cas.detail };
    return { status: 'promoted', commit, parent: old, alreadyPromoted: false, checkout: null };
  }
  const synced = await promoteIntoCheckout(checkout.path, branch, old, commit, reflog, options.lockWaitMs ?? 2000);
  if (synced.status !== 'promoted') return synced;
  return { status: 'promoted', commit, parent: old, alreadyPromoted: false, checkout: checkout.path };
}

/** What a crash in the middle of promoteIntoCheckout leaves in `<gitdir>/index.lock`. */
export interface PromotionMarker {
  readonly ralphPromotion: 1;
  readonly pid: number;
  /** Unique per promotion: tells a marker of this process from one of a dead process that had the same pid. */
  readonly token?: string;
  readonly branch: string;
  readonly old: string;
  readonly next: string;
  readonly tempIndex: string;
}

const TEMP_INDEX = 'ralph-promote-index';
const REF_MARKER = 'promote-ref.json';

// Promotions of this process in progress, by marker token.
const activeTokens = new Set<string>();

// A promotion holds the checkout's lock for well under a second; a marker lock older than
// this belongs to a dead process even if its pid has been reused by another.
const STALE_MARKER_MS = 10 * 60 * 1000;

/**
 * Moves the branch and the user's checkout of it from `old` to `next` together.
 *
 * Order, and what a crash at each point leaves (recoverInterruptedPromotion repairs it):
 *  1. Take the checkout's `index.lock` (O_EXCL, the lock git itself uses), holding a JSON
 *     marker. While we hold it no git command of the user (commit, add, checkout) can touch
 *     the index, so the check below stays true. Crash: a stale lock, nothing else changed.
 *  2. Check the checkout's own changes against the files `old..next` changes; any overlap
 *     (edited, staged, untracked or ignored file in the way, unresolved merge) -> release
 *     the lock and return `waiting`, nothing changed.
 *  3. Copy the index to a temp index and refresh it (both while step 2 runs: stopped and
 *     thrown away when it says no), then run `git read-tree -m -u old next` on it: git's
 *     own two-tree "switch" merge, which refuses to clobber local changes and updates only
 *     the files that differ. Crash: branch still at old, some files already at next ->
 *     recovery restores exactly the files whose content is next's.
 *  4. Compare-and-swap the branch ref old -> next. If the ref moved meanwhile: undo step 3
 *     with `read-tree -m -u next old` and return `conflict`. Crash after it: the ref and the
 *     working tree are at next, the real index still at old -> recovery installs the temp
 *     index (which is complete) — the stale lock keeps the user from committing until then.
 *  5. Rename the temp index over the real index (atomic), then 6. release the lock.
 * A git process that fails from step 3 on (killed, out of memory) is handled as a crash
 * there: the lock and its marker stay for recoverInterruptedPromotion. A lock that an
 * interrupted promotion left is answered `interrupted`, at once, for the caller to recover.
 */
export async function promoteIntoCheckout(
  worktree: string,
  branch: string,
  old: string,
  next: string,
  reflog: string,
  lockWaitMs = 0,
): Promise<PromoteAttempt> {
  const gd = (await worktreeGitDir(worktree)) ?? (await gitDir(worktree));
  const lockPath = join(gd, 'index.lock');
  const tempIndex = join(gd, TEMP_INDEX);
  const marker: PromotionMarker = { ralphPromotion: 1, pid: process.pid, token: randomUUID(), branch, old, next, tempIndex };
  const acquired = await acquireLock(lockPath, `${JSON.stringify(marker)}\n`, lockWaitMs);
  if (acquired === 'interrupted') return { status: 'interrupted', worktree };
  if (acquired === 'acquired') activeTokens.add(marker.token as string);
  if (acquired === 'held') {
    return {
      status: 'waiting',
      reason: `another git command holds ${lockPath} in the user's checkout`,
      worktree,
      files: [{ path: 'index.lock', why: 'locked' }],
    };
  }
  let lockHeld = true;
  // From the checkout's update until it is finished or undone, a failure leaves the lock.
  let updating = false;
  try {
    // Holding the lock, the user's git cannot commit; a ref moved by anything else is
    // still caught by the compare-and-swap below.
    // The checks only read, so they run together, and the temp index (ours alone while we
    // hold index.lock) is prepared beside them. A check that says no, or fails, stops the
    // preparation (its refresh stats every tracked file: the lock is not held for it) and
    // throws the temp index away; the lock goes only once no git of ours is running.
    const stopPreparing = new AbortController();
    const prepared = prepareTempIndex(worktree, gd, tempIndex, old, stopPreparing.signal).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    const [tipNow, blocking] = await Promise.allSettled([branchTip(worktree, branch), filesBlockingCheckout(worktree, old, next)]);
    const go = tipNow.status === 'fulfilled' && tipNow.value === old && blocking.status === 'fulfilled' && blocking.value.length === 0;
    if (!go) stopPreparing.abort();
    const failed = await prepared;
    if (!go || failed !== null) await discardTempIndex(tempIndex);
    if (tipNow.status === 'rejected') throw tipNow.reason;
    if (blocking.status === 'rejected') throw blocking.reason;
    if (tipNow.value !== old) {
      return { status: 'conflict', reason: 'branch-moved', detail: `${branch} moved away from ${old} before promotion` };
    }
    if (blocking.value.length > 0) return waitingFor(worktree, blocking.value);
    if (failed !== null) throw failed.error;
    const env = { GIT_INDEX_FILE: tempIndex };
    updating = true;
    const merged = await runGit(worktree, ['read-tree', '-m', '-u', old, next], { env, allowExitCodes: [128] });
    if (merged.exitCode !== 0) {
      // git checks every file before it writes one: a refusal changed nothing.
      updating = false;
      await rm(tempIndex, { force: true });
      return {
        status: 'waiting',
        reason: `git refused to update the user's checkout: ${merged.stderr.trim()}`,
        worktree,
        files: pathsFromReadTreeError(merged.stderr).map((path) => ({ path, why: 'refused' as const })),
      };
    }
    const cas = await casBranch(worktree, branch, next, old, reflog);
    if (!cas.ok) {
      await runGit(worktree, ['read-tree', '-m', '-u', next, old], { env });
      updating = false;
      await rm(tempIndex, { force: true });
      if (cas.why === 'locked') return refLocked(branch, cas.detail, worktree);
      return { status: 'conflict', reason: 'branch-moved', detail: cas.detail };
    }
    await rename(tempIndex, join(gd, 'index'));
    updating = false;
    await rm(lockPath, { force: true });
    lockHeld = false;
    return { status: 'promoted', commit: next, parent: old, alreadyPromoted: false, checkout: worktree };
  } finally {
    if (lockHeld && !updating) await rm(lockPath, { force: true });
    activeTokens.delete(marker.token as string);
  }
}

/**
 * The user's index copied to `tempIndex` (or `old`'s tree read into it when there is none)
 * and refreshed: read-tree trusts cached stat data, so a file whose timestamp changed but not
 * its content (touched by a build tool, saved unchanged) would count as "not uptodate".
 * `git checkout` refreshes internally too; exit 1 only means some files really are modified.
 */
async function prepareTempIndex(worktree: string, gd: string, tempIndex: string, old: string, signal: AbortSignal): Promise<void> {
  // A crash inside read-tree can leave its own lock on the temp index behind; we hold
  // index.lock, so no other promotion is using it.
  await discardTempIndex(tempIndex);
  const env = { GIT_INDEX_FILE: tempIndex };
  await copyIndexFile(join(gd, 'index'), tempIndex).catch(async () => {
    await runGit(worktree, ['read-tree', old], { env, signal });
  });
  await runGit(worktree, ['update-index', '-q', '--refresh'], { env, allowExitCodes: [1], signal });
}

/** The temp index and a lock on it that a stopped or killed git left. */
async function discardTempIndex(tempIndex: string): Promise<void> {
  await rm(`${tempIndex}.lock`, { force: true });
  await rm(tempIndex, { force: true });
}

const LOCK_STAGING_PREFIX = 'ralph-lock-';

/**
 * Creates `lockPath` exclusively with `content` already in it (written to a staging file,
 * then hard-linked into place, which fails if the lock exists), so a crash never leaves a
 * lock without the marker that lets recovery recognise it. Retries with back-off for up to
 * `waitMs` ('held' if the lock is still held), except for a lock an interrupted promotion
 * left: no one will release that one.
 */
async function acquireLock(lockPath: string, content: string, waitMs: number): Promise<'acquired' | 'held' | 'interrupted'> {
  const staging = join(dirname(lockPath), `${LOCK_STAGING_PREFIX}${process.pid}`);
  const fh = await open(staging, 'w');
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    const deadline = Date.now() + waitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
      try {
        await link(staging, lockPath);
        return 'acquired';
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const held = await readMarker(lockPath);
        if (held !== null && !(await markerInUse(held, lockPath))) return 'interrupted';
        if (Date.now() + delay > deadline) return 'held';
        // Back-off on a lock held by another process: there is no event to wait on.
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  } finally {
    await rm(staging, { force: true });
  }
}

function waitingFor(worktree: string, files: readonly WaitingFile[]): PromoteResult {
  const list = files.map((f) => `${f.path} (${f.why})`).join(', ');
  return {
    status: 'waiting',
    reason: `the promotion would overwrite the user's uncommitted changes in ${worktree}: ${list}; commit, stash or revert them`,
    worktree,
    files,
  };
}

function pathsFromReadTreeError(stderr: string): string[] {
  // git lists the files after a line ending in ':' and indents them with a tab.
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('\t'))
    .map((l) => l.trim());
}

async function existsOnDisk(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

// Above this many changed paths, one full status is cheaper than a long pathspec list.
const MAX_STATUS_PATHSPECS = 1000;

/** The user's own changes that a checkout move from `old` to `next` would overwrite. */
export async function filesBlockingCheckout(worktree: string, old: string, next: string): Promise<WaitingFile[]> {
  // read-tree -m refuses an index with unresolved conflicts, whatever the paths.
  const [diff, um] = await Promise.all([
    runGit(worktree, ['diff-tree', '-r', '-z', '--name-status', '--no-renames', old, next]),
    runGit(worktree, ['ls-files', '--unmerged', '-z']),
  ]);
  const parts = splitNul(diff.stdout);
  const changed: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) changed.push({ status: parts[i] as string, path: parts[i + 1] as string });

  const unmerged = [...new Set(splitNul(um.stdout).map((e) => e.slice(e.indexOf('\t') + 1)))];
  if (unmerged.length > 0) return unmerged.map((path) => ({ path, why: 'unmerged' as const }));

  // Status of the changed paths only: on a large checkout a full scan would hold the
  // user's index lock for seconds. Literal pathspecs, so names with * or : are themselves.
  const limited = changed.length <= MAX_STATUS_PATHSPECS;
  const st = await runGit(
    worktree,
    ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', ...(limited ? ['--', ...changed.map((c) => c.path)] : [])],
    { env: { GIT_LITERAL_PATHSPECS: '1' } },
  );
  const status = new Map<string, string>();
  for (const entry of splitNul(st.stdout)) status.set(entry.slice(3), entry.slice(0, 2));

  const removed = new Set(changed.filter((c) => c.status === 'D').map((c) => c.path));
  const out: WaitingFile[] = [];
  for (const { status: s, path } of changed) {
    const xy = status.get(path);
    if (xy === '??') out.push({ path, why: 'untracked' });
    else if (xy !== undefined && xy[0] !== ' ') out.push({ path, why: 'staged' });
    else if (xy !== undefined) out.push({ path, why: 'modified' });
    else if (s === 'A' && (await existsOnDisk(join(worktree, path)))) out.push({ path, why: 'ignored' });
    else if (s === 'A') {
      // A file in the way of a directory the promotion creates (unless the promotion
      // itself removes that file: a tracked file becoming a directory).
      const segs = path.split('/');
      for (let i = 1; i < segs.length; i++) {
        const dir = segs.slice(0, i).join('/');
        if (removed.has(dir)) break;
        try {
          const info = await lstat(join(worktree, dir));
          if (!info.isDirectory()) {
            out.push({ path: dir, why: 'untracked' });
            break;
          }
        } catch {
          break;
        }
      }
    }
  }
  return out;
}

export type RecoveryOutcome =
  | { readonly worktree: string; readonly action: 'completed'; readonly branch: string }
  | {
      readonly worktree: string;
      readonly action: 'rolled-back';
      readonly branch: string;
      /** Changed files whose content was neither old's nor next's: left as found. */
      readonly keptUserFiles: readonly string[];
    }
  | { readonly worktree: string; readonly action: 'skipped'; readonly reason: string };

/** Ralph's marker in a checkout's `index.lock`, or null (no lock, or git's own). */
async function readMarker(lockPath: string): Promise<PromotionMarker | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(lockPath, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || (parsed as PromotionMarker).ralphPromotion !== 1) return null;
    return parsed as PromotionMarker;
  } catch {
    return null;
  }
}

/** What a promotion of a branch nobody has checked out notes beside its ref update. */
interface RefMarker {
  readonly pid: number;
  readonly token: string;
  readonly branch: string;
  readonly next: string;
}

function refMarkerInUse(m: RefMarker): boolean {
  return m.pid === process.pid ? activeTokens.has(m.token) : pidAlive(m.pid);
}

/** Whether `markerFile` is the marker of a ref update whose promotion is not running. */
async function refMarkerInterrupted(markerFile: string): Promise<boolean> {
  try {
    return !refMarkerInUse(JSON.parse(await readFile(markerFile, 'utf8')) as RefMarker);
  } catch {
    return false; // none (writeFileAtomic never leaves half a marker)
  }
}

/** One line for a log: what recovery did in a checkout. */
export function describeRecovery(o: RecoveryOutcome): string {
  if (o.action === 'completed') return `completed (${o.branch} and the checkout at the promoted commit)`;
  if (o.action === 'skipped') return `skipped: ${o.reason}`;
  const kept = o.keptUserFiles.length === 0 ? '' : `; kept as the user left them: ${o.keptUserFiles.join(', ')}`;
  return `rolled back (${o.branch} and the checkout as they were${kept})`;
}

/** Whether the promotion that wrote `marker` may still be running. */
async function markerInUse(marker: PromotionMarker, lockPath: string): Promise<boolean> {
  if (marker.pid === process.pid) return marker.token !== undefined && activeTokens.has(marker.token);
  if (!pidAlive(marker.pid)) return false;
  try {
    return Date.now() - (await lstat(lockPath)).mtimeMs < STALE_MARKER_MS;
  } catch {
    return false;
  }
}

/**
 * Repairs what a crash inside promoteIntoCheckout left in any of the repository's
 * checkouts (see the order documented there). Locks without Ralph's marker, or whose owner
 * is alive, are left alone.
 */
export async function recoverInterruptedPromotion(repo: string): Promise<RecoveryOutcome[]> {
  const outcomes: RecoveryOutcome[] = [];
  const common = await gitCommonDir(repo);
  const refMarker = join(common, 'ralph', REF_MARKER);
  try {
    const m = JSON.parse(await readFile(refMarker, 'utf8')) as RefMarker;
    if (!refMarkerInUse(m)) {
      const refLock = join(common, 'refs', 'heads', `${m.branch}.lock`);
      const content = await readFile(refLock, 'utf8').catch(() => null);
      // A lock is renamed onto the ref when the update succeeds: one still there means the
      // ref kept its old value.
      if (content !== null && (content.trim() === '' || content.trim() === m.next)) {
        await rm(refLock, { force: true });
        outcomes.push({ worktree: repo, action: 'rolled-back', branch: m.branch, keptUserFiles: [] });
      }
      await rm(refMarker, { force: true });
    }
  } catch {
    // no marker (or an unreadable one from a write cut short: writeFileAtomic never leaves one)
  }
  for (const wt of await listWorktrees(repo)) {
    if (wt.bare) continue;
    const gd = await worktreeGitDir(wt.path);
    if (gd === null) continue;
    const lockPath = join(gd, 'index.lock');
    for (const f of await readdir(gd).catch(() => [] as string[])) {
      const pid = f.startsWith(LOCK_STAGING_PREFIX) ? Number(f.slice(LOCK_STAGING_PREFIX.length)) : NaN;
      if (Number.isInteger(pid) && pid !== process.pid && !pidAlive(pid)) await rm(join(gd, f), { force: true });
    }
    const marker = await readMarker(lockPath);
    if (marker === null) continue;
    if (await markerInUse(marker, lockPath)) {
      outcomes.push({ worktree: wt.path, action: 'skipped', reason: `promotion in progress (process ${marker.pid})` });
      continue;
    }
    await rm(`${marker.tempIndex}.lock`, { force: true });
    // A killed `update-ref` leaves the ref's lock. While our marker held the checkout's index
    // lock, nothing else could update this checked-out branch, so a lock that is empty or
    // holds our new commit is ours.
    // Updating a branch that HEAD points at also locks the checkout's HEAD (for its reflog).
    const ours = new Set(['', marker.next, `ref: refs/heads/${marker.branch}`]);
    for (const refLock of [join(await gitCommonDir(wt.path), 'refs', 'heads', `${marker.branch}.lock`), join(gd, 'HEAD.lock')]) {
      try {
        if (ours.has((await readFile(refLock, 'utf8')).trim())) await rm(refLock, { force: true });
      } catch {
        // no such lock
      }
    }
    const tip = await branchTip(wt.path, marker.branch);
    if (tip === marker.next) {
      // The ref moved; the temp index (complete before the ref moved) becomes the index.
      if (await existsOnDisk(marker.tempIndex)) await rename(marker.tempIndex, join(gd, 'index'));
      await rm(lockPath, { force: true });
      outcomes.push({ worktree: wt.path, action: 'completed', branch: marker.branch });
      continue;
    }
    const kept = await restoreFilesAtNext(wt.path, gd, marker);
    await rm(marker.tempIndex, { force: true });
    await rm(lockPath, { force: true });
    outcomes.push({ worktree: wt.path, action: 'rolled-back', branch: marker.branch, keptUserFiles: kept });
  }
  return outcomes;
}

/**
 * Puts back old's version of each file the interrupted checkout update had reached: content
 * equal to next's, a prefix of it (a write cut short), or missing. Anything else can only be
 * an edit the user made after the crash (the files were unmodified when the lock was
 * taken): it is kept and returned.
 */
async function restoreFilesAtNext(worktree: string, gd: string, marker: PromotionMarker): Promise<string[]> {
  const diff = await runGit(worktree, ['diff-tree', '-r', '-z', '--no-renames', marker.old, marker.next]);
  // raw format: ":<oldmode> <newmode> <oldsha> <newsha> <status>\0<path>\0"
  const parts = splitNul(diff.stdout);
  const restore: string[] = [];
  const remove: string[] = [];
  const kept: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = (parts[i] as string).split(' ');
    const path = parts[i + 1] as string;
    const oldSha = meta[2] as string;
    const newSha = meta[3] as string;
    const status = meta[4] as string;
    const file = join(worktree, path);
    if (!(await existsOnDisk(file))) {
      // git unlinks a file before writing its new version: missing means reached.
      if (status !== 'A') restore.push(path);
      continue;
    }
    if (status === 'D') continue; // not reached yet: still old's content
    const h = await runGit(worktree, ['hash-object', '--', path], { allowExitCodes: [128] });
    const sha = h.stdout.trim();
    if (h.exitCode === 0 && sha === oldSha) continue;
    let reached = h.exitCode === 0 && sha === newSha;
    if (!reached) {
      const want = await runGit(worktree, ['cat-file', '--filters', `--path=${path}`, newSha], { allowExitCodes: [128] });
      const have = await readFile(file).catch(() => null);
      reached = want.exitCode === 0 && have !== null && want.stdoutBuffer.subarray(0, have.length).equals(have);
    }
    if (!reached) kept.push(path);
    else if (status === 'A') remove.push(path);
    else restore.push(path);
  }
  for (const p of remove) await rm(join(worktree, p), { force: true });
  // Removing first makes checkout-index write them whatever their cached stat data says.
  for (const p of restore) await rm(join(worktree, p), { force: true });
  if (restore.length > 0) {
    // The real index still holds old's entries for these paths (they were unmodified);
    // check out from a copy because index.lock is ours and stale.
    const dir = await mkdtemp(join(tmpdir(), 'ralph-recover-'));
    try {
      const idx = join(dir, 'index');
      await copyIndexFile(join(gd, 'index'), idx);
      await runGit(worktree, ['checkout-index', '-f', '-q', '-z', '--stdin'], {
        env: { GIT_INDEX_FILE: idx },
        input: restore.map((p) => `${p}\0`).join(''),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return kept;
}
