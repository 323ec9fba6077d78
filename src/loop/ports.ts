// What the loop needs from the rest of the engine, as narrow interfaces. The real
// implementations are adapters over src/control (commands on the event store), src/project
// (spec discovery) and src/agents (prompts, metrics); keeping the seams here lets the
// loop's orchestration be read in one place and lets each adapter follow its module.
import type { DomainEvent } from '../domain/events';
import type { Patch, Task } from '../domain/model';
import type { StoredEvent } from '../store/types';
import type { RiskTier } from '../domain/risk';
import type { PromotionRecord, WaitingPromotion } from '../control/promotionView';

export type { PromotionRecord, WaitingPromotion };

/** Releases the harness counts by their cause. */
export type ReleaseCause = 'no_change';

/** A task as the loop reads it: the domain's row, typed status included, without its version and provenance. */
export type LoopTask = Pick<
  Task,
  | 'task_id'
  | 'status'
  | 'title'
  | 'source'
  | 'effort'
  | 'deps'
  | 'wave'
  | 'risk_tier'
  | 'claimed_by'
  | 'patch_id'
  | 'deferred_reason'
  | 'deferred_at'
>;

/** A patch as the loop reads it: the domain's row, typed status included. */
export type LoopPatch = Pick<Patch, 'patch_id' | 'task_id' | 'status' | 'patch_path' | 'created_by' | 'created_at' | 'commit_hash'>;

export interface ProposalCounts {
  readonly accepted: number;
  readonly rejected: number;
  readonly deferred: number;
}

/** A human decision taken through the inbox (CLI or VS Code); it overrides the judge. */
export interface HumanDecision {
  readonly taskId: string;
  readonly decision: 'approve' | 'reject' | 'modify';
  readonly rationale: string;
  readonly actor: string;
}

/**
 * A reviewer's modify still to be done (domain reviewFollowUp): the next attempt of the task
 * starts from the reviewed patch with the modification asked on top.
 */
export interface LoopFollowUp {
  readonly patchId: string;
  /** Where the reviewed patch file is (patch_view.patch_path); null when the row has none. */
  readonly patchPath: string | null;
  readonly modification: string;
  /** Who asked: `judge` or a human actor. */
  readonly actor: string;
}

/** Commands for the running loop itself, from another process. */
export interface HostCommand {
  readonly command: 'stop' | 'pause' | 'resume';
  readonly actor: string;
  readonly reason?: string | undefined;
}

export interface InboxDrain {
  /** Inbox files run (new tasks, transitions, decisions…): anything may have become ready. */
  readonly processed: number;
  readonly decisions: readonly HumanDecision[];
  readonly host: readonly HostCommand[];
}

/** Loop-relevant counters the primary state machine persists (STATE.json keys). */
export interface LoopStateSnapshot {
  readonly iteration: number;
  readonly phase: string;
  readonly current_item: string | null;
  readonly current_sub_step: number;
  readonly retry_count: number;
  readonly commits_total: number;
  readonly last_evolve_at: number;
  readonly last_dry_at: number;
  readonly last_integ_at: number;
  readonly last_ui_at: number;
}

/** The control plane as the loop uses it; every write is events through the store. */
export interface LoopControl {
  tasks(): LoopTask[];
  task(id: string): LoopTask | undefined;
  patches(taskId?: string): LoopPatch[];
  /**
   * Atomically claims the next ready task for `owner`; null when none is ready. A worker
   * takes only the `efforts` given (default S; tasks with no effort never), the primary any.
   */
  claimReadyTask(
    owner: string,
    role: 'primary' | 'worker',
    opts: { exclude: readonly string[]; efforts?: readonly string[] },
  ): Promise<LoopTask | null>;
  /** Claims one named pending task (the harness's own maintenance tasks). */
  claimTask(taskId: string, owner: string): Promise<void>;
  /**
   * Back to pending with the reason in the event (a task is never left claimed); `cause`
   * names a release the harness counts (`no_change`: the run changed no files).
   */
  releaseTask(taskId: string, actor: string, reason: string, cause?: ReleaseCause): Promise<void>;
  /** Whether recovery releases this claimed task (on a shared store: only when nobody holds its lease). */
  claimIsStale(taskId: string): boolean;
  blockTask(taskId: string, actor: string, reason: string): Promise<void>;
  /** Creates a task the harness itself needs (maintenance work from refactor_dry / test_*). */
  createTask(
    task: { id: string; title: string; source: string; effort: 'S' | 'M' | 'L' | 'XL'; wave: number },
    actor: string,
  ): Promise<void>;
  queuePatch(taskId: string, patchPath: string, createdBy: string): Promise<string>;
  recordRisk(taskId: string, tier: RiskTier, files: readonly string[], patchId: string, actor: string): Promise<void>;
  deferTask(taskId: string, actor: string, reason: string, tier: RiskTier, patchId: string): Promise<void>;
  promotePatch(patchId: string, commit: string, actor: string): Promise<void>;
  discardPatch(patchId: string, reason: string, actor: string): Promise<void>;
  /** Finishes moving closed patches' files out of commits/pending/ (a killed run's half-done moves). */
  archiveClosedPatches(): Promise<readonly { patchId: string; to: string; error?: string }[]>;
  /** Moves patch files no patch names out of commits/pending/ (a killed run's unqueued captures), each with an event. */
  archiveOrphanedPatches(): Promise<readonly { file: string; to: string; error?: string }[]>;
  /** Removes half-written patch files a killed writer left in commits/pending/; returns them. */
  removeKilledPatchWrites(): Promise<readonly string[]>;
  resolveDeferred(
    taskId: string,
    decision: 'approve' | 'reject' | 'modify',
    actor: string,
    rationale: string,
    confidence?: number,
  ): Promise<void>;
  expireStaleDeferrals(): Promise<number>;
  processProposals(): Promise<ProposalCounts>;
  /** Runs the commands waiting in the inbox (each once); reports human decisions and host commands. */
  takeInbox(): Promise<InboxDrain>;
  /** Promoted commits since the task was deferred (expiry) and how long it waited (review). */
  commitsTotal(): number;
  /** Commit counts at which each periodic phase last ran (from `loop.periodic_done` events). */
  periodicMarks(): { evolve: number; dry: number; integ: number; ui: number };
  /**
   * evolve_goals failures in a row: `spec.evolve_failed` events since the last
   * `spec.evolved`. Optional: without it each failure counts as the first (the shortest back-off).
   */
  evolveFailures?(): number;
  /** Gate results recorded for a queued patch (`patch.gates` events), for the judge. */
  gateResults(patchId: string): { gate: string; status: string }[];
  /**
   * The commit a queued patch's gates ran on (`base_commit` of its `patch.gates` event), so
   * a patch approved later is promoted without re-verification when the branch did not
   * move; null when unknown (the patch is then re-verified: safe, only slower).
   */
  patchBase(patchId: string): string | null;
  /** What promotion knows about a queued patch (promotion_view). */
  promotion(patchId: string): PromotionRecord | undefined;
  /** Promotions waiting on the user's checkout (or retried after a harness error), oldest first. */
  waitingPromotions(): WaitingPromotion[];
  /** Releases of the task for a run that changed nothing, since its last patch. */
  noChangeRuns(taskId: string): number;
  /** Whether the task's latest deferral was resolved by an approval (a judge's or a human's). */
  approvedSinceDeferral(taskId: string): boolean;
  /**
   * Notes for the next attempt of a task: the judge's or a human's rejection rationale and
   * earlier modifications. The open follow-up's modification is not among them: the loop
   * states it itself, with where the attempt starts from (followUp).
   */
  retryNotes(taskId: string): string[];
  /** The open follow-up of a reviewer's modify for this task, or null. */
  followUp(taskId: string): LoopFollowUp | null;
  /** Appends the harness's own facts (task.reflected, patch.gates, loop.*, agent.*), validated, atomically. */
  record(events: readonly DomainEvent[]): Promise<void>;
  /** Calls `listener` with each batch of events the store appends (notifications and totals). */
  onDidAppend(listener: (events: readonly StoredEvent[]) => void): { dispose(): void };
  /** Writes STATE.json and BACKLOG.md from the store (plus the loop's own counters). */
  renderViews(state: LoopStateSnapshot): Promise<void>;
}

/** Spec discovery (src/project): evolve_goals runs once per spec change. */
export interface SpecWatch {
  /** Spec files changed since the last evolve (by content hash). */
  changed(): Promise<readonly string[]>;
  /** Records that evolve_goals has read these specs. */
  markEvolved(files: readonly string[]): Promise<void>;
}

/** One metrics line (par-metrics-YYYYMMDD.jsonl, the seed's field names plus ours). */
export interface MetricsLine {
  readonly ts: string;
  readonly agent: string;
  readonly iter: number;
  readonly phase_from: string;
  readonly phase_to: string;
  readonly duration: number;
  readonly cost: number;
  readonly prompt_bytes: number;
  readonly turns: number;
  readonly input_tokens: number;
  readonly cache_read: number;
  readonly cache_create: number;
  readonly output_tokens: number;
  readonly model: string;
  readonly subtype: string;
  readonly backend: string;
  readonly task: string | null;
}

export interface MetricsSink {
  append(line: MetricsLine): Promise<void>;
  /**
   * Every line of the given UTC days (for budgets), and the lines that could not be read
   * (a torn write), named by file and line so the harness can say so.
   */
  read(days: readonly string[]): Promise<{ lines: MetricsLine[]; problems: string[] }>;
}
