// Every id the extension shares with package.json in one place: commands, views, the view
// container, context keys, settings and URI schemes. package.json must spell them the same
// (the extension-host tests check that each command here is contributed and registered).
// No `vscode` import, so plain-Node tests can read it; the monitor's ids
// (MonitorIds in monitor/monitorPanel.ts) are spelled the same and a test checks that.

export const Commands = {
  initialize: 'ralph.initialize',
  startLoop: 'ralph.startLoop',
  stopLoop: 'ralph.stopLoop',
  pauseLoop: 'ralph.pauseLoop',
  resumeLoop: 'ralph.resumeLoop',
  showMonitor: 'ralph.showMonitor',
  showStatus: 'ralph.showStatus',
  repair: 'ralph.repair',
  approveDeferred: 'ralph.approveDeferred',
  rejectDeferred: 'ralph.rejectDeferred',
  modifyDeferred: 'ralph.modifyDeferred',
  openPatchDiff: 'ralph.openPatchDiff',
  addTask: 'ralph.addTask',
  dropTask: 'ralph.dropTask',
  reprioritizeTask: 'ralph.reprioritizeTask',
  openTaskSource: 'ralph.openTaskSource',
  revealTask: 'ralph.revealTask',
  openEventLog: 'ralph.openEventLog',
  refresh: 'ralph.refresh',
  overrideVerdict: 'ralph.overrideVerdict',
  openConfig: 'ralph.openConfig',
  openTranscript: 'ralph.openTranscript',
  runReqLoop: 'ralph.runReqLoop',
  decideReq: 'ralph.decideReq',
  /** A commit's diff (the task story's commit link): arguments hash, folder. */
  openCommit: 'ralph.openCommit',
  /** A file as it is at a commit: arguments path, hash, folder. */
  openFileAtCommit: 'ralph.openFileAtCommit',
} as const;
export type CommandId = (typeof Commands)[keyof typeof Commands];

export const ViewContainer = 'ralph';

export const Views = {
  backlog: 'ralph.backlog',
  deferred: 'ralph.deferred',
  agents: 'ralph.agents',
  requirements: 'ralph.requirements',
} as const;

/** Context keys used in `when` clauses. */
export const ContextKeys = {
  initialized: 'ralph.initialized',
  /** running | paused | stopped */
  loopState: 'ralph.loopState',
  /** This window runs the loop (holds the writer lock). */
  isWriter: 'ralph.isWriter',
  /** Another process holds the writer lock; this window follows it. */
  isObserver: 'ralph.isObserver',
  /** At least one task is done (its patch promoted): the walkthrough's last step. */
  hasPromoted: 'ralph.hasPromoted',
  /** Some initialized folder's loop is stopped / runs / runs or is paused / is paused. */
  canStart: 'ralph.canStart',
  canPause: 'ralph.canPause',
  canStop: 'ralph.canStop',
  canResume: 'ralph.canResume',
  /** The window has several folders (one Ralph project each). */
  multiRoot: 'ralph.multiRoot',
  /** The focused folder has spec files (the empty Backlog says to start, not to add specs). */
  hasSpecs: 'ralph.hasSpecs',
  /** Walkthrough steps done, from the real state of the folders. */
  gitRepository: 'ralph.walkthrough.gitRepository',
  trusted: 'ralph.walkthrough.trusted',
  configured: 'ralph.walkthrough.configured',
  started: 'ralph.walkthrough.started',
  reviewed: 'ralph.walkthrough.reviewed',
} as const;

export type { LoopStateKey } from '../session/names';

export const Settings = {
  section: 'ralph',
  notificationLevel: 'ralph.notifications.level',
  monitorRefresh: 'ralph.monitor.refreshIntervalMs',
  defaultBackend: 'ralph.defaultBackend',
} as const;

export type NotificationLevel = 'all' | 'verdicts' | 'errors' | 'none';

export const Schemes = {
  /** Read-only file contents before/after a patch: ralph-patch:/<path>?patch=<patchId>&side=<side> */
  patch: 'ralph-patch',
  /** Read-only rendering of the event log: ralph-events:/<query>.jsonl */
  events: 'ralph-events',
  /** An agent invocation's transcript, following the file: ralph-transcript:/<absolute path of the .log> */
  transcript: 'ralph-transcript',
  /** A file at a commit or its parent: ralph-git:/<path>?commit=<hash>&side=<commit|parent>&folder=<dir> */
  commit: 'ralph-git',
} as const;

/** Actor recorded on every command a person issues from VS Code (the session's). */
export { HUMAN_ACTOR } from '../session/names';
