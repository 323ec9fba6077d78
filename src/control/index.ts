// The control plane's public API: every reference command as a library function over an
// EventStore, the projections they need, and the inbox.
export { CONTROL_PROJECTIONS, taskViewProjection, patchViewProjection, getTask, getPatch, patchesOf, allTasks } from './views';
export {
  deferredTasksIn,
  recentEvents,
  lastTaskEvent,
  lastDeferralVerdict,
  eventsOfLatestRun,
  eventsSince,
  type TaskEventSummary,
  type DeferralVerdict,
} from './eventQueries';
export { controlContext, withClient, CONTROL_ACTOR, ralphPaths, type ControlContext, type CommandClient, type GitPort } from './context';
export {
  emitEvent,
  transitionTask,
  pickReadyTask,
  claimReadyTask,
  releaseClaims,
  parseRole,
  parseEfforts,
  decideAndAppend,
  type TransitionResult,
} from './tasks';
export {
  queuePatch,
  promotePatch,
  discardPatch,
  classifyTaskRisk,
  assessRisk,
  policyCheck,
  applyPolicy,
  patchFiles,
  formatPromoted,
  PatchFileError,
  type PromoteResult,
  type RiskAssessment,
  type PolicyCheckResult,
} from './patches';
export {
  getDeferredQueue,
  deferredTasks,
  shouldReviewDeferred,
  resolveDeferred,
  expireStaleDeferrals,
  parseDecision,
  type ResolveResult,
  type ReviewDue,
} from './deferred';
export { reprioritizeTask, type ReprioritizeCommand } from './reprioritize';
export { proposeTask, proposalOutcome, nextTaskId, type TaskDraft, type ProposeTaskCommand, type ProposeTaskResult } from './proposeTask';
export {
  processProposals,
  listProposalFiles,
  deferredProposals,
  resolveProposal,
  type ProposalCounts,
  type ProposalReport,
  type DeferredProposal,
} from './proposals';
export {
  importBacklog,
  renderBacklogFile,
  syncBacklog,
  renderState,
  statusText,
  statusFacts,
  rebuildViews,
  formatMigrated,
  formatSync,
  type ImportResult,
  type SyncResult,
} from './derived';
export { submitToInbox, drainInbox, inboxCommandSchema, type InboxCommand, type HostCommand, type InboxResult } from './inbox';
export { openControl, RiskPatternsNotLoadedError, type OpenControlOptions } from './open';
export { readTaskStory, renderTaskStory, withCommitFiles, type TaskStory } from './story';
export { readForecast, perDayBudgetOf } from './forecast';
export { parseMoment, statusFactsAt, type Moment, type PastStatus } from './timeTravel';
export { renderStatus } from '../domain/views';
