// The checks that need only files and git, in the reference's order.
import { checkLocks, checkQueues, checkRalphTree, checkStateJson } from './fileChecks';
import type { Finding } from './findings';
import { checkGit } from './gitChecks';

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
