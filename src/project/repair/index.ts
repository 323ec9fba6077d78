// `ralph repair`: the checks that need only files and git (projectChecks), those that need
// the event store (storeChecks), the local fixes (fixes) and the whole command (repair),
// which applies the store's fixes through the control plane's commands (events only).
export { applyLocalFixes } from './fixes';
export type { LocalFixOptions } from './fixes';
export { formatFindings, hasProblems } from './findings';
export type { Finding, FindingStatus, FixKind } from './findings';
export { checkLocks, checkQueues, checkRalphTree, checkStateJson } from './fileChecks';
export { checkGit } from './gitChecks';
export type { GitCheckOptions } from './gitChecks';
export { runProjectChecks } from './projectChecks';
export type { ProjectCheckOptions } from './projectChecks';
export {
  checkStoreFiles,
  diffViewsAgainstRebuild,
  inspectWriterLock,
  runStoreChecks,
  DEFAULT_CLAIM_STALE_MS,
  REQUIRED_TABLES,
  type StoreCheckOptions,
  type WriterState,
} from './storeChecks';
export {
  checkProject,
  formatRepairReport,
  runRepair,
  REPAIR_ACTOR,
  type RepairAction,
  type RepairOptions,
  type RepairReport,
} from './repair';
