// Repair checks of the repository: a work tree with a commit, no merge or rebase left
// half done, every registered worktree present (`git worktree list --porcelain`), no
// orphaned Ralph worktree (one no active agent owns, or a stray directory git forgot), and
// none left in the old place inside the git dir (both places are looked at).
import * as path from 'node:path';
import { GitError, runGit } from '../../git/exec';
import { gitDir, listWorktrees } from '../../git/repo';
import { legacyWorktreesRoot, listRalphWorktrees, worktreesRoot } from '../../git/worktrees';
import { ok } from './findings';
import type { Finding } from './findings';
import { pathExists } from '../../shared/fs';

export interface GitCheckOptions {
  /**
   * Names of the Ralph worktrees active agents own (from the control plane). When given,
   * any other Ralph worktree is reported as orphaned; when omitted, only worktrees whose
   * directory vanished or that git does not know are.
   */
  readonly activeWorktrees?: readonly string[];
}

export async function checkGit(projectDir: string, options: GitCheckOptions = {}): Promise<Finding[]> {
  const inside = await runGit(projectDir, ['rev-parse', '--is-inside-work-tree'], { allowExitCodes: [128] }).catch((e: unknown) => {
    if (e instanceof GitError) return { exitCode: 128, stdout: '' };
    throw e;
  });
  if (inside.exitCode !== 0 || inside.stdout.trim() !== 'true') {
    return [
      {
        check: 'git.repo',
        status: 'fail',
        message: `${projectDir} is not inside a git work tree`,
        fix: { kind: 'init', description: "ralph init --git-init creates a repository and commits Ralph's own files" },
      },
    ];
  }
  const findings: Finding[] = [];
  const head = await runGit(projectDir, ['rev-parse', '--verify', '--quiet', 'HEAD'], { allowExitCodes: [1, 128] });
  if (head.exitCode !== 0) {
    findings.push({
      check: 'git.head',
      status: 'fail',
      message: 'the repository has no commit; agents work in worktrees of HEAD',
      fix: { kind: 'manual', description: 'commit your files' },
    });
  }

  const dotGit = await gitDir(projectDir);
  for (const [marker, what] of [
    ['MERGE_HEAD', 'a merge'],
    ['rebase-merge', 'a rebase'],
    ['rebase-apply', 'a rebase or am'],
    ['CHERRY_PICK_HEAD', 'a cherry-pick'],
  ] as const) {
    if (await pathExists(path.join(dotGit, marker))) {
      findings.push({
        check: 'git.in_progress',
        status: 'warn',
        message: `${what} is in progress in the checkout`,
        fix: { kind: 'manual', description: 'finish or abort it' },
      });
    }
  }

  for (const w of await listWorktrees(projectDir)) {
    if (w.prunable || !(await pathExists(w.path))) {
      findings.push({
        check: 'git.worktree',
        status: 'fail',
        message: `registered worktree ${w.path} no longer exists`,
        path: w.path,
        fix: { kind: 'git-prune', description: 'git worktree prune' },
      });
    }
  }

  const active = options.activeWorktrees ? new Set(options.activeWorktrees) : undefined;
  const ralphWorktrees = await listRalphWorktrees(projectDir);
  const legacy = ralphWorktrees.filter((w) => w.legacy);
  if (legacy.length > 0) {
    findings.push({
      check: 'git.legacy_worktrees',
      status: 'warn',
      message: `${legacy.length} Ralph worktree(s) (${legacy.map((w) => w.name).join(', ')}) are in the old place inside the repository's git dir, where tools run in the checkout can see them; they now live in ${await worktreesRoot(projectDir)}`,
      path: await legacyWorktreesRoot(projectDir),
      fix: { kind: 'git-prune', description: 'move them out (the next ralph start does it too)' },
    });
  }
  for (const w of ralphWorktrees) {
    if (w.missing || w.legacy) continue; // reported above
    if (!w.registered) {
      findings.push({
        check: 'git.orphaned_worktree',
        status: 'fail',
        message: `${w.path} is a directory under Ralph's worktree root that git does not know`,
        path: w.path,
        fix: { kind: 'git-prune', description: 'remove the stray directory' },
      });
    } else if (active && !active.has(w.name)) {
      findings.push({
        check: 'git.orphaned_worktree',
        status: 'warn',
        message: `Ralph worktree ${w.name} (${w.branch ?? 'detached'}) is owned by no active agent`,
        path: w.path,
        fix: { kind: 'control-plane', description: 'release its task, then remove the worktree' },
      });
    }
  }
  return findings.length ? findings : [ok('git', 'repository and worktrees healthy')];
}
