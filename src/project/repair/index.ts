// The project layer's part of `ralph repair`: the checks that need only files and git.
// The lead's repair command adds the store's checks (integrity, tables, counts in sync,
// stuck claims, views equal to a rebuild) and applies control-plane fixes through events.
import { checkLocks, checkQueues, checkRalphTree, checkStateJson } from './fileChecks';
import type { Finding } from './findings';
import { checkGit } from './gitChecks';

export { applyLocalFixes } from './fixes';
export type { LocalFixOptions } from './fixes';
export { formatFindings, hasProblems } from './findings';
export type { Finding, FindingStatus, FixKind } from './findings';
export { checkLocks, checkQueues, checkRalphTree, checkStateJson } from './fileChecks';
export { checkGit } from './gitChecks';
export type { GitCheckOptions } from './gitChecks';

export interface ProjectCheckOptions {
  readonly maxRetries?: number;
  readonly activeWorktrees?: readonly string[];
}

/** Every filesystem and git check, in the reference's order. */
export async function runProjectChecks(projectDir: string, options: ProjectCheckOptions = {}): Promise<Finding[]> {
  return [
    ...(await checkRalphTree(projectDir)),
    ...(await checkGit(projectDir, options.activeWorktrees ? { activeWorktrees: options.activeWorktrees } : {})),
    ...(await checkStateJson(projectDir, options.maxRetries)),
    ...(await checkLocks(projectDir)),
    ...(await checkQueues(projectDir)),
  ];
}
