// Patches through the shared git remote (team mode). A worker pushes its verified commit as
// `refs/ralph/patches/<patch id>` before it queues the patch, so the promoter on another
// machine can fetch exactly what the gates saw; the push refuses to replace an existing
// patch ref (a patch id names one commit forever). The promoter moves the target branch
// with a compare-and-swap push (`--force-with-lease=<branch>:<expected>`): if the remote
// branch moved since the promoter verified on it, the push is refused, never merged blind.
// Git runs with Ralph's environment (src/git/exec.ts: no hooks, no fsmonitor), remote side
// included when the remote is a path on this machine.
import { checkId } from '../domain/ids';
import { GitError, gitOut, runGit } from '../git/exec';

export const PATCH_REF_PREFIX = 'refs/ralph/patches/';

export function patchRef(patchId: string): string {
  checkId('patch', patchId, 'patch id');
  return `${PATCH_REF_PREFIX}${patchId}`;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function checkRemote(remote: string): void {
  // A remote is a name or a URL/path; one starting with '-' would be read as an option.
  if (remote === '' || remote.startsWith('-') || /[\0\n]/.test(remote)) throw new Error(`'${remote.slice(0, 80)}' is not a git remote`);
}

function checkSha(sha: string, what: string): void {
  if (!SHA.test(sha)) throw new Error(`${what} '${sha.slice(0, 80)}' is not a full commit id`);
}

/** Why a push was refused: `exists` (patch ref taken) or `stale` (the branch moved). */
export type PushOutcome =
  { readonly kind: 'pushed' } | { readonly kind: 'exists' | 'stale'; readonly remoteSha: string | null; readonly detail: string };

/** The commit a remote ref points at, or null when it does not exist. */
export async function remoteRefSha(repo: string, remote: string, ref: string): Promise<string | null> {
  checkRemote(remote);
  const out = await gitOut(repo, ['ls-remote', remote, ref]);
  const line = out.split('\n').find((l) => l.endsWith(`\t${ref}`));
  return line ? (line.split('\t')[0] ?? null) : null;
}

async function casPush(
  repo: string,
  remote: string,
  sha: string,
  ref: string,
  expected: string | null,
): Promise<{ ok: boolean; detail: string }> {
  // An empty expectation means "the ref must not exist yet".
  checkRemote(remote);
  const lease = `--force-with-lease=${ref}:${expected ?? ''}`;
  try {
    const r = await runGit(repo, ['push', '--porcelain', '--no-verify', lease, remote, `${sha}:${ref}`], { allowExitCodes: [1] });
    const rejected = r.exitCode !== 0 || /^!/m.test(r.stdout);
    return { ok: !rejected, detail: `${r.stdout}${r.stderr}`.trim().split('\n').slice(-3).join(' | ') };
  } catch (e) {
    if (e instanceof GitError) return { ok: false, detail: e.message };
    throw e;
  }
}

/** Pushes a worker's verified commit as the patch's ref; refuses to replace another commit. */
export async function pushPatchRef(repo: string, remote: string, patchId: string, sha: string): Promise<PushOutcome> {
  checkSha(sha, 'patch commit');
  const ref = patchRef(patchId);
  const r = await casPush(repo, remote, sha, ref, null);
  if (r.ok) return { kind: 'pushed' };
  const there = await remoteRefSha(repo, remote, ref);
  if (there === sha) return { kind: 'pushed' }; // a retry after an unanswered push
  return { kind: 'exists', remoteSha: there, detail: r.detail };
}

/** Fetches a patch ref into the local repository; returns its commit. */
export async function fetchPatchRef(repo: string, remote: string, patchId: string): Promise<string> {
  const ref = patchRef(patchId);
  checkRemote(remote);
  await runGit(repo, ['fetch', '--no-tags', '--no-write-fetch-head', remote, `+${ref}:${ref}`]);
  return gitOut(repo, ['rev-parse', '--verify', `${ref}^{commit}`]);
}

/**
 * Moves `branch` on the remote from `expected` to `sha`, only if it still is `expected`.
 * `stale` names what the branch is now: fetch, verify again on it, then retry.
 */
export async function pushBranchCas(repo: string, remote: string, branch: string, sha: string, expected: string): Promise<PushOutcome> {
  checkSha(sha, 'new branch tip');
  checkSha(expected, 'expected branch tip');
  if (!/^[A-Za-z0-9._/-]+$/.test(branch) || branch.startsWith('-') || branch.includes('..'))
    throw new Error(`'${branch.slice(0, 80)}' is not a branch name`);
  const ref = `refs/heads/${branch}`;
  const r = await casPush(repo, remote, sha, ref, expected);
  if (r.ok) return { kind: 'pushed' };
  const there = await remoteRefSha(repo, remote, ref);
  if (there === sha) return { kind: 'pushed' };
  return { kind: 'stale', remoteSha: there, detail: r.detail };
}

/** The patch refs on the remote, with their commits. */
export async function listPatchRefs(repo: string, remote: string): Promise<{ patchId: string; sha: string }[]> {
  checkRemote(remote);
  const out = await gitOut(repo, ['ls-remote', remote, `${PATCH_REF_PREFIX}*`]);
  return out
    .split('\n')
    .map((l) => l.split('\t'))
    .filter((f): f is [string, string] => f.length === 2 && SHA.test(f[0] as string) && (f[1] as string).startsWith(PATCH_REF_PREFIX))
    .map(([sha, ref]) => ({ patchId: ref.slice(PATCH_REF_PREFIX.length), sha }));
}

/** The task a patch id names (`patch_<task>_<stamp>[_n]`), or null for another shape. */
export function taskOfPatchId(patchId: string): string | null {
  const m = /^patch_(.+)_\d{17}(?:_\d+)?$/.exec(patchId);
  return m ? (m[1] as string) : null;
}

/** Deletes a patch ref from the remote, only while it still names `expected`; true when gone. */
export async function deletePatchRef(repo: string, remote: string, patchId: string, expected: string): Promise<boolean> {
  checkSha(expected, 'patch commit');
  const ref = patchRef(patchId);
  checkRemote(remote);
  try {
    const r = await runGit(repo, ['push', '--porcelain', '--no-verify', `--force-with-lease=${ref}:${expected}`, remote, `:${ref}`], {
      allowExitCodes: [1],
    });
    if (r.exitCode === 0 && !/^!/m.test(r.stdout)) return true;
  } catch (e) {
    if (!(e instanceof GitError)) throw e;
  }
  return (await remoteRefSha(repo, remote, ref)) === null;
}
