// Rebase of an agent's worktree onto a moved target-branch tip: the worktree's whole state
// (commits and uncommitted edits alike) is snapshotted as a commit and merged onto the new
// tip with `git merge-tree --write-tree` (git >= 2.38), so a conflict is found before the
// worktree is touched.
import { runGit } from './exec';
import { repoRoot, withSnapshotIndex } from './repo';

export interface RebaseOptions {
  /**
   * On conflict: 'keep' leaves the worktree exactly as it was (default); 'markers' writes the
   * merge result with conflict markers into the worktree, for an agent to resolve.
   */
  readonly onConflict?: 'keep' | 'markers';
}

export type RebaseResult =
  | { readonly status: 'rebased'; readonly base: string; readonly snapshot: string }
  | {
      readonly status: 'conflict';
      readonly base: string;
      readonly files: readonly string[];
      readonly messages: readonly string[];
      readonly snapshot: string;
      /** Whether conflict markers were written into the worktree. */
      readonly markersWritten: boolean;
    };

/** The installed git lacks a command this layer needs. */
export class GitTooOldError extends Error {
  override readonly name = 'GitTooOldError';
  constructor(
    readonly feature: string,
    readonly minimumVersion: string,
  ) {
    super(`${feature} needs git >= ${minimumVersion}; please upgrade git`);
  }
}

const SNAPSHOT_IDENT = {
  GIT_AUTHOR_NAME: 'Ralph Loop',
  GIT_AUTHOR_EMAIL: 'ralph@localhost',
  GIT_COMMITTER_NAME: 'Ralph Loop',
  GIT_COMMITTER_EMAIL: 'ralph@localhost',
};

/** Parses `git merge-tree --write-tree --name-only -z` output. */
export function parseMergeTree(out: string): { tree: string; files: string[]; messages: string[] } {
  const parts = out.split('\0');
  const tree = (parts[0] ?? '').trim();
  const files: string[] = [];
  let i = 1;
  for (; i < parts.length && parts[i] !== ''; i++) files.push(parts[i] as string);
  i++;
  const messages: string[] = [];
  while (i < parts.length) {
    const n = Number(parts[i]);
    if (!Number.isInteger(n) || parts[i] === '') break;
    i += 1 + n; // the paths
    i += 1; // the conflict type
    const msg = parts[i++];
    if (msg !== undefined) messages.push(msg.trim());
  }
  return { tree, files: [...new Set(files)], messages };
}

/** Moves the worktree's change onto `newBase`; the result is left uncommitted on top of it. */
export async function rebaseWorktree(worktree: string, newBase: string, options: RebaseOptions = {}): Promise<RebaseResult> {
  const top = await repoRoot(worktree);
  // Both in one git (each process costs ~10-20 ms on a loaded machine); a name that does not
  // resolve to a commit fails it, as `--verify` would.
  const [base, head] = (await runGit(top, ['rev-parse', `${newBase}^{commit}`, 'HEAD^{commit}', '--'])).stdout.trim().split('\n');
  if (base === undefined || head === undefined) throw new Error(`git rev-parse ${newBase} HEAD in ${top}: expected two commits`);
  const tree = await withSnapshotIndex(top, async (env) => (await runGit(top, ['write-tree'], { env })).stdout.trim());
  const snapshot = (
    await runGit(top, ['commit-tree', tree, '-p', head, '-F', '-'], { input: 'ralph: worktree snapshot\n', env: SNAPSHOT_IDENT })
  ).stdout.trim();
  const merged = await runGit(top, ['merge-tree', '--write-tree', '--name-only', '-z', '--messages', base, snapshot], {
    allowExitCodes: [1, 129],
  });
  if (merged.exitCode === 129) throw new GitTooOldError('git merge-tree --write-tree', '2.38');
  const parsed = parseMergeTree(merged.stdout);
  const clean = merged.exitCode === 0;
  if (clean || options.onConflict === 'markers') {
    // Everything the worktree held is in `snapshot`, so nothing is lost by resetting it.
    await runGit(top, ['reset', '--quiet', '--hard', base]);
    await runGit(top, ['clean', '--quiet', '-f', '-d', '-e', '.ralph']);
    await runGit(top, ['read-tree', '-m', '-u', base, parsed.tree]);
  }
  if (clean) return { status: 'rebased', base, snapshot };
  return {
    status: 'conflict',
    base,
    files: parsed.files,
    messages: parsed.messages,
    snapshot,
    markersWritten: options.onConflict === 'markers',
  };
}
