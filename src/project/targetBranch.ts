// The branch promoted commits land on: ralph.config.json `target_branch`, else the branch
// checked out in the project when the loop starts.
import { currentBranch } from '../git/repo';
import type { RalphConfig } from './config';

export class NoTargetBranchError extends Error {
  override readonly name = 'NoTargetBranchError';
  constructor(readonly projectDir: string) {
    super(`${projectDir}: HEAD is detached and ralph.config.json sets no "target_branch"; check out a branch or set target_branch`);
  }
}

export async function resolveTargetBranch(projectDir: string, config: Pick<RalphConfig, 'target_branch'>): Promise<string> {
  if (config.target_branch) return config.target_branch;
  const branch = await currentBranch(projectDir);
  if (!branch) throw new NoTargetBranchError(projectDir);
  return branch;
}
