// Promotion of a verified change, by risk tier: the change queued as a patch
// (`patch.queued`), its tier classified from the files the patch really touches, the policy
// applied — tier 0/1 promoted through git plumbing onto exactly the commit its gates ran on
// (a moved branch: the worktree re-based and verified again, a few times), tier 2 deferred
// to the judge, tier 3 decomposed. The store is asked before git: a patch the store no longer
// wants is never put on the branch. Late promotions (approved, waited) are latePromotion.ts.
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { domainEvent } from '../domain/events';
import { classifyRisk } from '../domain/risk';
import type { RiskTier } from '../domain/risk';
import { decidePolicy } from '../domain/policy';
import type { CapturedPatch } from '../git/capture';
import { touchedPaths } from '../git/patchParse';
import { formatPromotionMessage, promotePatch } from '../git/promote';
import { rebaseWorktree } from '../git/rebase';
import { branchTip } from '../git/repo';
import type { HarnessContext } from './context';
import type { Decomposition } from './decomposition';
import type { AgentName } from './events';
import type { GateResult } from './gates';
import { Mutex } from './mutex';
import type { LoopTask } from './ports';
import type { Verification } from './verification';

export type PromotionOutcome =
  | { readonly kind: 'promoted'; readonly commit: string; readonly patchId: string }
  | { readonly kind: 'deferred'; readonly patchId: string }
  | { readonly kind: 'decomposed'; readonly accepted: number }
  | { readonly kind: 'waiting'; readonly patchId: string; readonly reason: string }
  | { readonly kind: 'no_change' }
  | { readonly kind: 'conflict'; readonly reason: string }
  /** The store moved on while the patch was verified (a human dropped, blocked or re-deferred the task, discarded the patch): not promoted. */
  | { readonly kind: 'abandoned'; readonly reason: string };

/** A verified change ready for promotion. */
export interface VerifiedChange {
  readonly agent: AgentName;
  readonly task: LoopTask;
  readonly worktree: string;
  readonly base: string;
  readonly patch: CapturedPatch;
  readonly gates: readonly GateResult[];
}

/** A patch the store may still promote. */
export function isLive(status: string): boolean {
  return status === 'queued' || status === 'applied' || status === 'verified';
}

export class Promotion {
  /** Serializes promotions: one branch update at a time within this process. */
  readonly lock = new Mutex();

  constructor(
    private readonly ctx: HarnessContext,
    private readonly verification: Verification,
    private readonly decomposition: Decomposition,
  ) {}

  /** The risk tier of a patch's files: the one place a patch is classified. */
  classifyFiles(task: LoopTask, files: readonly string[]): RiskTier {
    return classifyRisk(files, { effort: task.effort, source: task.source }, this.ctx.settings.riskPatterns);
  }

  /** Promotion by tier, for a verified change (see the module header). */
  async promote(change: VerifiedChange, signal: AbortSignal, rebasesLeft = 3): Promise<PromotionOutcome> {
    const { control } = this.ctx;
    const { task, patch, agent } = change;
    if (patch.isEmpty) {
      // A run that changed nothing never leaves its task claimed; twice in a row is not bad luck.
      const n = control.noChangeRuns(task.task_id) + 1;
      if (n >= 2) {
        const why = `the agent reported success but changed no files (${n} runs in a row); check its permissions and the task`;
        await control.blockTask(task.task_id, agent, why);
      } else {
        await control.releaseTask(task.task_id, agent, 'the run succeeded but changed no files', 'no_change');
      }
      return { kind: 'no_change' };
    }
    const files = touchedPaths(patch.files);
    const patchId = await control.queuePatch(task.task_id, patch.path, agent);
    const tier = this.classifyFiles(task, files);
    await control.recordRisk(task.task_id, tier, files, patchId, agent);
    // base_commit: the commit the gates ran on, durable for a promotion decided later.
    await control.record([
      domainEvent('patch.gates', patchId, agent, {
        task_id: task.task_id,
        gates: change.gates.map((g) => ({ gate: g.gate, status: g.status })),
        base_commit: patch.baseCommit,
        files,
        risk_tier: tier,
      }),
    ]);
    const policy = decidePolicy(tier);
    if (policy.decision === 'defer') {
      await control.deferTask(task.task_id, agent, policy.reason, tier, patchId);
      return { kind: 'deferred', patchId };
    }
    if (policy.decision === 'decompose') {
      await control.discardPatch(patchId, `risk tier ${tier}: decomposing into smaller tasks`, agent);
      const accepted = await this.decomposition.decompose(task, files, change.worktree, signal);
      return { kind: 'decomposed', accepted };
    }
    // Only onto the commit the gates ran on: a moved branch means rebase and verify again.
    const r = await this.promoteQueued(task, patchId, patch.path, agent, patch.baseCommit);
    if (r.kind === 'conflict' && rebasesLeft > 0 && !signal.aborted) {
      return this.rebaseAndRetry(change, patchId, r.reason, signal, rebasesLeft - 1);
    }
    return r;
  }

  /** git plumbing promotion of a queued patch, then promote-patch in the store. */
  async promoteQueued(
    task: Pick<LoopTask, 'task_id' | 'title'>,
    patchId: string,
    patchPath: string,
    agent: string,
    expectedTip: string,
    /** The commit message; default `ralph(<task>): <title>` (REQ mode: `ralph-loop: REQ-XXX - <title>`). */
    message?: string,
  ): Promise<PromotionOutcome> {
    return this.lock.run(async () => {
      // The store decides before git does: a human may have dropped, blocked or re-deferred
      // the task, or discarded the patch, while its gates ran; git would otherwise put on the
      // branch what the store then refuses to record.
      const why = this.notPromotable(task.task_id, patchId);
      if (why !== null) return this.abandon(task.task_id, patchId, why, agent);
      const result = await promotePatch(this.ctx.projectDir, {
        branch: this.ctx.branch,
        patchFile: patchPath,
        message: message ?? formatPromotionMessage(task.task_id, task.title ?? task.task_id),
        patchId,
        expectedTip,
      });
      if (result.status === 'promoted') return this.recordPromoted(task.task_id, patchId, patchPath, result.commit, agent);
      if (result.status === 'waiting') {
        // Said once per reason: a retry that waits for the same files again adds nothing.
        if (this.ctx.control.promotion(patchId)?.waiting_reason !== result.reason) {
          await this.ctx.control.record([
            domainEvent('patch.waiting', patchId, agent, { task_id: task.task_id, reason: result.reason, cause: 'checkout' }),
          ]);
        }
        return { kind: 'waiting', patchId, reason: result.reason };
      }
      return { kind: 'conflict', reason: `${result.reason}: ${result.detail}` };
    });
  }

  /** Why the store no longer wants this patch promoted, or null when it does. */
  notPromotable(taskId: string, patchId: string): string | null {
    const { control } = this.ctx;
    const t = control.task(taskId);
    const p = control.patches(taskId).find((x) => x.patch_id === patchId);
    if (!t) return `task ${taskId} is gone`;
    if (!p || !isLive(p.status)) return `patch ${patchId} is ${p?.status ?? 'unknown'}`;
    if (t.status !== 'proposed') return `task ${taskId} is ${t.status} now`;
    if (t.patch_id !== null && t.patch_id !== patchId) return `task ${taskId} moved on to patch ${t.patch_id}`;
    return null;
  }

  /**
   * Not promoted because the store moved on. The patch is closed when nothing else will use
   * it (the task is done or dropped, or has a newer patch); otherwise the human's state for
   * the task stands and the patch stays for them to decide.
   */
  async abandon(taskId: string, patchId: string, why: string, actor: string): Promise<PromotionOutcome> {
    const { control } = this.ctx;
    const t = control.task(taskId);
    const p = control.patches(taskId).find((x) => x.patch_id === patchId);
    const closes = t === undefined || t.status === 'done' || t.status === 'dropped' || (t.patch_id !== null && t.patch_id !== patchId);
    if (p && isLive(p.status) && closes) {
      await control.discardPatch(patchId, `not promoted: ${why}`, actor);
    }
    this.ctx.log('harness', 'info', `${taskId}: patch ${patchId} not promoted: ${why}`);
    return { kind: 'abandoned', reason: why };
  }

  /** The branch has the patch's commit: promote-patch in the store, then tell the hosts. */
  async recordPromoted(taskId: string, patchId: string, patchPath: string, commit: string, agent: string): Promise<PromotionOutcome> {
    await this.ctx.control.promotePatch(patchId, commit, agent);
    await this.archive(patchPath);
    return { kind: 'promoted', commit, patchId };
  }

  private async archive(patchPath: string): Promise<void> {
    // The patch stays where patch_view points; a copy in applied/ mirrors the seed layout.
    try {
      const dir = join(this.ctx.ralphDir, 'commits', 'applied');
      await mkdir(dir, { recursive: true });
      const name = patchPath.split('/').pop() ?? 'patch';
      await copyFile(patchPath, join(dir, name));
    } catch {
      // archival is best effort
    }
  }

  /** The branch moved under the patch: rebase the worktree on the new tip, re-verify, retry (a few times). */
  private async rebaseAndRetry(
    change: VerifiedChange,
    patchId: string,
    reason: string,
    signal: AbortSignal,
    rebasesLeft: number,
  ): Promise<PromotionOutcome> {
    const { control } = this.ctx;
    const tip = await branchTip(this.ctx.projectDir, this.ctx.branch);
    const give = async (why: string): Promise<PromotionOutcome> => {
      await control.discardPatch(patchId, why, change.agent);
      return { kind: 'conflict', reason: why };
    };
    if (tip === null) return give(`target branch ${this.ctx.branch} is gone`);
    this.ctx.log(change.agent, 'info', `patch ${patchId} does not apply (${reason}); rebasing ${change.worktree} onto ${tip.slice(0, 8)}`);
    const rb = await rebaseWorktree(change.worktree, tip);
    if (rb.status !== 'rebased')
      return give(`patch no longer applies and rebase onto ${tip.slice(0, 8)} conflicts in ${rb.files.join(', ')}`);
    const v = await this.verification.verify(change.agent, change.task, change.worktree, rb.base, signal);
    // Stopped mid-way: the gates were cancelled, not failed. The patch stays queued for the
    // next run's recovery, which verifies it again on whatever the tip is then.
    if (signal.aborted) return { kind: 'waiting', patchId, reason: 'the loop stopped during the re-verification after a rebase' };
    const failed = v.gates.find((g) => !g.ok);
    if (failed || v.patch === null) return give(`after rebase onto ${tip.slice(0, 8)} the ${failed?.gate ?? 'verify'} gate fails`);
    // The re-based patch is queued before the old one is closed: the task stays proposed
    // throughout (closing first would make it pending, and free for a worker to claim).
    const task = control.task(change.task.task_id) ?? change.task;
    const outcome = await this.promote({ ...change, task, base: rb.base, patch: v.patch, gates: v.gates }, signal, rebasesLeft);
    if (control.patches(change.task.task_id).some((p) => p.patch_id === patchId && isLive(p.status))) {
      const why = `superseded by a rebase onto ${tip.slice(0, 8)}`;
      await control.discardPatch(patchId, why, change.agent);
    }
    return outcome;
  }
}
