// The git layer's public surface: worktrees, patch capture and parsing, promotion onto the
// target branch (keeping the user's checkout consistent), rebase, and repository queries.
export { GitError, gitCallCount, runGit } from './exec';
export type { GitResult, GitRunOptions } from './exec';
export { addedLines, filesTouchedByPatch, touchedPaths, PatchParseError } from './patchParse';
export type { AddedLine, FileAddedLines, PatchFile, PatchFileStatus } from './patchParse';
export { branchTip, changedFiles, commitExists, currentBranch, gitCommonDir, isAncestor, isClean, listWorktrees, repoRoot } from './repo';
export type { ChangedFile, WorktreeInfo } from './repo';
export {
  ensureWorktree,
  findOrphanedWorktrees,
  InvalidWorktreeNameError,
  listRalphWorktrees,
  ralphBranchName,
  removeWorktree,
  resetWorktree,
  UnknownBaseError,
  worktreesRoot,
} from './worktrees';
export type { EnsureWorktreeOptions, ListedRalphWorktree, RalphWorktree } from './worktrees';
export { capturePatch } from './capture';
export { writeFileAtomic } from '../shared/fs';
export type { CapturedPatch, PatchStats } from './capture';
export {
  BranchCheckedOutByAgentError,
  BranchNotFoundError,
  describeRecovery,
  EmptyPatchError,
  filesBlockingCheckout,
  findPromotedCommit,
  formatPromotionMessage,
  promotePatch,
  recoverInterruptedPromotion,
} from './promote';
export type { Identity, PromoteOptions, PromoteResult, PromotionMarker, RecoveryOutcome, WaitingFile, WaitingWhy } from './promote';
export { GitTooOldError, rebaseWorktree } from './rebase';
export type { RebaseOptions, RebaseResult } from './rebase';
