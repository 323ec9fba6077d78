// LoopControl over the control plane (src/control) and the event store: every write is a
// control-plane command (events through the store), reads come from the projections.
import type { EventStore, StoredEvent } from '../store/types';
import { controlContext } from '../control/context';
import type { ControlContext } from '../control/context';
import { claimReadyTask, decideAndAppend, transitionTask } from '../control/tasks';
import { classifyTaskRisk, discardPatch, promotePatch, queuePatch } from '../control/patches';
import { archiveClosedPatches, archiveOrphanedPatches, removeKilledPatchWrites } from '../control/patchArchive';
import { expireStaleDeferrals, resolveDeferred } from '../control/deferred';
import { processProposals } from '../control/proposals';
import { allTasks, getTask, patchesOf, promotedSince } from '../control/views';
import { drainInbox } from '../control/inbox';
import { renderBacklogFile, renderState } from '../control/derived';
import { domainEvent } from '../domain/events';
import { promotionOf, waitingPromotions } from '../control/promotionView';
import type { PromotionRecord, WaitingPromotion } from '../control/promotionView';
import type { DomainEvent } from '../domain/events';
import { reviewFollowUp } from '../domain/task';
import type { ReviewFollowUp } from '../domain/task';
import { rowToEvent } from '../store/eventRows';
import type { EventRow } from '../store/eventRows';
import type { RiskPatterns, RiskTier } from '../domain/risk';
import { commitExists } from '../git/repo';
import type {
  HostCommand,
  HumanDecision,
  InboxDrain,
  LoopControl,
  LoopFollowUp,
  LoopPatch,
  LoopStateSnapshot,
  LoopTask,
  ProposalCounts,
  ReleaseCause,
} from './ports';

/**
 * Claims as leases (a shared store, src/team/loopClaims.ts): every claim the loop makes
 * carries one, and recovery releases only the claims nobody holds any more.
 */
export interface ClaimLeases {
  claimReady(agent: string, role: 'primary' | 'worker', exclude: readonly string[], efforts?: readonly string[]): Promise<LoopTask | null>;
  claimNamed(taskId: string, agent: string): Promise<void>;
  /** True for a claimed task nobody will finish (recovery releases it). */
  isStale(taskId: string): boolean;
  /** queue-patch fenced by the claim's lease (refused once it is lost); undefined: no lease of this loop's. */
  queuePatch(taskId: string, patchPath: string, createdBy: string): Promise<string> | undefined;
  /** Release or block fenced by the claim's lease (false: refused, left to the holder); undefined: no lease of this loop's. */
  endClaim(
    taskId: string,
    to: 'pending' | 'blocked',
    actor: string,
    reason: string,
    extra?: Record<string, unknown>,
  ): Promise<boolean> | undefined;
  dispose(): Promise<void>;
}

export interface ControlAdapterOptions {
  readonly store: EventStore;
  readonly projectDir: string;
  readonly ralphDir: string;
  readonly riskPatterns: RiskPatterns;
  /** Writes STATE.json and BACKLOG.md; default: the control plane's renderers. */
  readonly render?: (ctx: ControlContext, state: LoopStateSnapshot) => Promise<void>;
  /** Claims by lease on a shared store; without it a claim is the plain event (one writer). */
  readonly leases?: (ctx: ControlContext) => ClaimLeases;
}

export class ControlAdapter implements LoopControl {
  readonly ctx: ControlContext;
  private readonly leases: ClaimLeases | undefined;

  constructor(private readonly o: ControlAdapterOptions) {
    this.ctx = controlContext(o.store, {
      ralphDir: o.ralphDir,
      projectDir: o.projectDir,
      riskPatterns: o.riskPatterns,
      git: { commitExists: (hash) => commitExists(o.projectDir, hash) },
    });
    this.leases = o.leases?.(this.ctx);
  }

  /** Whether recovery should release this claimed task: always on a store only this loop writes. */
  claimIsStale(taskId: string): boolean {
    return this.leases?.isStale(taskId) ?? true;
  }

  /** Stops renewing leases (the host closes; unfinished claims then expire for others). */
  async dispose(): Promise<void> {
    await this.leases?.dispose();
  }

  tasks(): LoopTask[] {
    return allTasks(this.o.store);
  }

  task(id: string): LoopTask | undefined {
    return getTask(this.o.store, id);
  }

  patches(taskId?: string): LoopPatch[] {
    if (taskId !== undefined) return patchesOf(this.o.store, taskId);
    return this.o.store.all<LoopPatch>('SELECT * FROM patch_view ORDER BY created_at, patch_id');
  }

  async claimReadyTask(
    owner: string,
    role: 'primary' | 'worker',
    opts: { exclude: readonly string[]; efforts?: readonly string[] },
  ): Promise<LoopTask | null> {
    if (this.leases !== undefined) return this.leases.claimReady(owner, role, opts.exclude, opts.efforts);
    return (await claimReadyTask(this.ctx, role, owner, opts.exclude, opts.efforts)) ?? null;
  }

  async claimTask(taskId: string, owner: string): Promise<void> {
    if (this.leases !== undefined) return this.leases.claimNamed(taskId, owner);
    await transitionTask(this.ctx, { taskId, status: 'claimed', actor: owner, payload: { claimed_by: owner } });
  }

  async releaseTask(taskId: string, actor: string, reason: string, cause?: ReleaseCause): Promise<void> {
    const fenced = this.leases?.endClaim(taskId, 'pending', actor, reason, cause ? { cause } : {});
    if (fenced !== undefined) return void (await fenced);
    await transitionTask(this.ctx, { taskId, status: 'pending', actor, payload: { reason, ...(cause ? { cause } : {}) } });
  }

  async blockTask(taskId: string, actor: string, reason: string): Promise<void> {
    const fenced = this.leases?.endClaim(taskId, 'blocked', actor, reason);
    if (fenced !== undefined) return void (await fenced);
    await transitionTask(this.ctx, { taskId, status: 'blocked', actor, payload: { reason } });
  }

  async createTask(
    t: { id: string; title: string; source: string; effort: 'S' | 'M' | 'L' | 'XL'; wave: number },
    actor: string,
  ): Promise<void> {
    await decideAndAppend(this.ctx, () => ({
      events: [
        domainEvent('task.created', t.id, actor, {
          title: t.title,
          source: t.source,
          effort: t.effort,
          deps: '-',
          wave: t.wave,
          provenance: 'auto',
        }),
      ],
      result: undefined,
    }));
  }

  queuePatch(taskId: string, patchPath: string, createdBy: string): Promise<string> {
    return this.leases?.queuePatch(taskId, patchPath, createdBy) ?? queuePatch(this.ctx, { taskId, patchPath, createdBy });
  }

  async recordRisk(taskId: string, _tier: RiskTier, _files: readonly string[], patchId: string): Promise<void> {
    // The control plane re-reads the files from the patch itself (same patterns, same answer).
    await classifyTaskRisk(this.ctx, taskId, { patchId, record: true });
  }

  async deferTask(taskId: string, actor: string, reason: string, tier: RiskTier, patchId: string): Promise<void> {
    await transitionTask(this.ctx, { taskId, status: 'deferred', actor, payload: { reason, risk_tier: tier, patch_id: patchId } });
  }

  async promotePatch(patchId: string, commit: string, actor: string): Promise<void> {
    await promotePatch(this.ctx, { patchId, commitHash: commit, actor });
  }

  async discardPatch(patchId: string, reason: string, actor: string): Promise<void> {
    await discardPatch(this.ctx, { patchId, reason, actor });
  }

  archiveClosedPatches(): Promise<readonly { patchId: string; to: string; error?: string }[]> {
    return archiveClosedPatches(this.ctx);
  }

  archiveOrphanedPatches(): Promise<readonly { file: string; to: string; error?: string }[]> {
    return archiveOrphanedPatches(this.ctx);
  }

  removeKilledPatchWrites(): Promise<readonly string[]> {
    return removeKilledPatchWrites(this.ctx);
  }

  async resolveDeferred(
    taskId: string,
    decision: 'approve' | 'reject' | 'modify',
    actor: string,
    rationale: string,
    confidence?: number,
  ): Promise<void> {
    await resolveDeferred(this.ctx, { taskId, decision, actor, rationale, ...(confidence !== undefined ? { confidence } : {}) });
  }

  async expireStaleDeferrals(): Promise<number> {
    return (await expireStaleDeferrals(this.ctx)).length;
  }

  async processProposals(): Promise<ProposalCounts> {
    return (await processProposals(this.ctx)).counts;
  }

  async takeInbox(): Promise<InboxDrain> {
    const before = this.o.store.get<{ id: string | null }>('SELECT MAX(event_id) AS id FROM events')?.id ?? '';
    const host: HostCommand[] = [];
    const results = await drainInbox(this.ctx, {
      onHostCommand: (c) => void host.push({ command: c.command, actor: c.actor, reason: c.reason }),
    });
    if (results.length === 0) return { processed: 0, decisions: [], host };
    // The inbox ran the decisions itself; read back which deferrals humans resolved.
    const rows = this.o.store.all<{ entity_id: string; actor: string; payload: string }>(
      "SELECT entity_id, actor, payload FROM events WHERE event_type = 'task.deferral_resolved' AND event_id > ? ORDER BY event_id",
      [before],
    );
    const decisions: HumanDecision[] = [];
    for (const r of rows) {
      try {
        const p = JSON.parse(r.payload) as { decision?: HumanDecision['decision']; rationale?: string };
        if (p.decision) decisions.push({ taskId: r.entity_id, decision: p.decision, rationale: p.rationale ?? '', actor: r.actor });
      } catch {
        // not ours to judge
      }
    }
    return { processed: results.length, decisions, host };
  }

  commitsTotal(): number {
    return promotedSince(this.o.store, undefined);
  }

  evolveFailures(): number {
    const rows = this.o.store.all<{ event_type: string }>(
      "SELECT event_type FROM events WHERE event_type IN ('spec.evolved', 'spec.evolve_failed') ORDER BY event_id",
    );
    let n = 0;
    for (const r of rows) n = r.event_type === 'spec.evolved' ? 0 : n + 1;
    return n;
  }

  periodicMarks(): { evolve: number; dry: number; integ: number; ui: number } {
    const marks = { evolve: 0, dry: 0, integ: 0, ui: 0 };
    const key: Record<string, keyof typeof marks> = {
      evolve_goals: 'evolve',
      refactor_dry: 'dry',
      test_integration: 'integ',
      test_ui: 'ui',
    };
    const rows = this.o.store.all<{ payload: string }>(
      "SELECT payload FROM events WHERE event_type = 'loop.periodic_done' ORDER BY event_id",
    );
    for (const r of rows) {
      try {
        const p = JSON.parse(r.payload) as { phase?: string; at?: number };
        const k = p.phase !== undefined ? key[p.phase] : undefined;
        if (k !== undefined && typeof p.at === 'number') marks[k] = p.at;
      } catch {
        // a hand-written event: ignored
      }
    }
    return marks;
  }

  gateResults(patchId: string): { gate: string; status: string }[] {
    return [...(promotionOf(this.o.store, patchId)?.gates ?? [])];
  }

  approvedSinceDeferral(taskId: string): boolean {
    const row = this.o.store.get<{ event_type: string; payload: string }>(
      "SELECT event_type, payload FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type IN ('task.deferred', 'task.deferral_resolved') ORDER BY event_id DESC LIMIT 1",
      [taskId],
    );
    if (row?.event_type !== 'task.deferral_resolved') return false;
    try {
      return (JSON.parse(row.payload) as { decision?: unknown }).decision === 'approve';
    } catch {
      return false;
    }
  }

  patchBase(patchId: string): string | null {
    const base = promotionOf(this.o.store, patchId)?.base_commit ?? null;
    return base !== null && /^[0-9a-f]{40,64}$/.test(base) ? base : null;
  }

  promotion(patchId: string): PromotionRecord | undefined {
    return promotionOf(this.o.store, patchId);
  }

  waitingPromotions(): WaitingPromotion[] {
    return waitingPromotions(this.o.store);
  }

  noChangeRuns(taskId: string): number {
    // Newest first: releases for no change, until the task's last patch.
    const rows = this.o.store.all<{ event_type: string; payload: string }>(
      "SELECT event_type, payload FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type IN ('task.pending', 'task.proposed') ORDER BY event_id DESC",
      [taskId],
    );
    let n = 0;
    for (const r of rows) {
      if (r.event_type === 'task.proposed') break;
      try {
        if ((JSON.parse(r.payload) as { cause?: unknown }).cause === 'no_change') n++;
      } catch {
        // a hand-written event: not ours
      }
    }
    return n;
  }

  retryNotes(taskId: string): string[] {
    const open = this.followUpEvent(taskId);
    const rows = this.o.store.all<{ event_id: string; payload: string }>(
      "SELECT event_id, payload FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type = 'task.deferral_resolved' ORDER BY event_id DESC LIMIT 3",
      [taskId],
    );
    const notes: string[] = [];
    const last = this.lastDiscardNote(taskId, rows);
    if (last !== null) notes.push(last);
    for (const r of rows.reverse()) {
      if (open !== null && r.event_id === open.resolutionId) continue;
      try {
        const p = JSON.parse(r.payload) as { decision?: string; rationale?: string; modification?: string };
        if (p.decision === 'reject') notes.push(`Rejected by the reviewer: ${p.rationale ?? ''}`);
        else if (p.decision === 'modify') notes.push(`Reviewer asked for a change: ${p.modification ?? p.rationale ?? ''}`);
      } catch {
        // ignored
      }
    }
    return notes;
  }

  /**
   * What a re-run is told about its task's last discarded patch: a conflict says with what
   * (files and commits); a patch given up otherwise while the task went back to pending (a
   * gate the moved branch breaks, a branch that kept moving) says why. Null when there is
   * none, when it was superseded, or when a reviewer's reject or modify discarded it (that
   * decision has its own note).
   */
  private lastDiscardNote(taskId: string, resolutions: readonly { payload: string }[]): string | null {
    const row = this.o.store.get<{ entity_id: string; payload: string }>(
      `SELECT entity_id, payload FROM events WHERE entity_type = 'patch' AND event_type = 'patch.discarded'
          AND entity_id IN (SELECT patch_id FROM patch_view WHERE task_id = ?) ORDER BY event_id DESC LIMIT 1`,
      [taskId],
    );
    if (row === undefined) return null;
    const reason = (JSON.parse(row.payload) as { reason?: unknown }).reason;
    if (typeof reason !== 'string' || reason === '' || reason.startsWith('superseded by')) return null;
    const byReviewer = resolutions.some((r) => {
      try {
        return (JSON.parse(r.payload) as { discarded_patch_id?: unknown }).discarded_patch_id === row.entity_id;
      } catch {
        return false;
      }
    });
    if (byReviewer) return null;
    if (reason.includes('conflicts in '))
      return `Your previous patch conflicted with the branch and was discarded: ${reason}. Work from the branch as it is now and keep those changes.`;
    return `Your previous patch was discarded: ${reason}. Work from the branch as it is now.`;
  }

  followUp(taskId: string): LoopFollowUp | null {
    const f = this.followUpEvent(taskId);
    if (f === null) return null;
    const patch = this.o.store.get<{ patch_path: string | null }>('SELECT patch_path FROM patch_view WHERE patch_id = ?', [f.patchId]);
    return { patchId: f.patchId, patchPath: patch?.patch_path ?? null, modification: f.modification, actor: f.actor };
  }

  /** The task's review history (deferrals, resolutions, expiries, discards of its patches), folded. */
  private followUpEvent(taskId: string): ReviewFollowUp | null {
    const rows = this.o.store.all<EventRow>(
      `SELECT * FROM events
        WHERE (entity_type = 'task' AND entity_id = ? AND event_type IN ('task.deferred', 'task.deferral_resolved', 'task.deferral_expired'))
           OR (entity_type = 'patch' AND event_type = 'patch.discarded' AND entity_id IN (SELECT patch_id FROM patch_view WHERE task_id = ?))
        ORDER BY event_id`,
      [taskId, taskId],
    );
    return reviewFollowUp(rows.map(rowToEvent));
  }

  async record(events: readonly DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    await decideAndAppend(this.ctx, () => ({ events, result: undefined }));
  }

  onDidAppend(listener: (events: readonly StoredEvent[]) => void): { dispose(): void } {
    return this.o.store.onDidAppend(listener);
  }

  async renderViews(state: LoopStateSnapshot): Promise<void> {
    if (this.o.render) {
      await this.o.render(this.ctx, state);
      return;
    }
    const { commits_total: _c, ...position } = state;
    renderState(this.ctx, position);
    renderBacklogFile(this.ctx);
  }
}
