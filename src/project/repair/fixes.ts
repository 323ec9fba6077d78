// The repair fixes this layer may apply itself, in a safe order: git bookkeeping first
// (prune vanished worktrees, remove stray directories under Ralph's worktree root), then
// re-running init to fill in missing files. Anything needing the event store is left to
// the control plane (the lead's `ralph repair --fix`), which must act through events.
import { promises as fs } from 'node:fs';
import { runGit } from '../../git/exec';
import { migrateLegacyWorktrees } from '../../git/worktrees';
import { initProject } from '../init';
import type { InitOptions } from '../init';
import type { Finding } from './findings';

export interface LocalFixOptions {
  /** Passed to init when it recreates a missing database file; omitted = not recreated. */
  readonly createDatabase?: InitOptions['createDatabase'];
}

/** Applies the `init` and `git-prune` fixes of the findings; returns one line per change made. */
export async function applyLocalFixes(projectDir: string, findings: readonly Finding[], options: LocalFixOptions = {}): Promise<string[]> {
  const changes: string[] = [];
  const gitFixes = findings.filter((f) => f.status !== 'ok' && f.fix?.kind === 'git-prune');
  if (gitFixes.some((f) => f.check === 'git.worktree')) {
    await runGit(projectDir, ['worktree', 'prune']);
    changes.push('git worktree prune');
  }
  if (gitFixes.some((f) => f.check === 'git.legacy_worktrees')) {
    const moved = await migrateLegacyWorktrees(projectDir);
    changes.push(`moved ${moved.length} worktree(s) out of the repository's git dir`);
  }
  for (const f of gitFixes) {
    if (f.check === 'git.orphaned_worktree' && f.path) {
      await fs.rm(f.path, { recursive: true, force: true });
      changes.push(`removed stray directory ${f.path}`);
    }
  }
  if (findings.some((f) => f.status !== 'ok' && f.fix?.kind === 'init')) {
    // Asking for the fix of a missing repository is asking for one (with Ralph's files only committed).
    const gitInit = findings.some((f) => f.status !== 'ok' && f.check === 'git.repo');
    const report = await initProject({
      dir: projectDir,
      gitInit,
      ...(options.createDatabase ? { createDatabase: options.createDatabase } : {}),
    });
    for (const p of report.created) changes.push(`created ${p}`);
    for (const p of report.updated) changes.push(`updated ${p}`);
  }
  return changes;
}
