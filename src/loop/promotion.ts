// Promotion of a verified change, by risk tier: the change queued as a patch
// (`patch.queued`), its tier classified from the files the patch really touches, the policy
// applied — tier 0/1 promoted through git plumbing onto exactly the commit its gates ran on
// (a moved branch: the worktree re-based and verified again, a few times), tier 2 deferred
// to the judge, tier 3 decomposed, a change to Ralph's control files blocked. The store is
// asked before git: a patch the store no longer wants is never put on the branch. Every
// promotion, fresh or late, reads its patch again and checks it with the rules loaded when
// the run started, before git: no patch is promoted past the rules, or by rules it changed.
// A refused change leaves nothing behind: its pending patch file is removed (not archived)
// and its worktree reset. Late promotions (approved, waited) are latePromotion.ts.
import { readFile, rm } from 'node:fs/promises';
import { domainEvent } from '../domain/events';
import { parsePatch, touchedPaths } from '../domain/patchText';
import { assessChange, CONTROL_FILES_REASON } from '../domain/risk';
import type { ChangedPath, RiskAssessment, RiskTier } from '../domain/risk';
import { decidePolicy } from '../domain/policy';
import type { CapturedPatch } from '../git/capture';
import { resetWorktree } from '../git/worktrees';
import { describeRecovery, formatPromotionMessage, promotePatch } from '../git/promote';
import { rebaseWorktree } from '../git/rebase';
import { branchTip, commitsTouching } from '../git/repo';
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
  /** The change may not land at all (it touches Ralph's control files): the task is blocked with why. */
  | { readonly kind: 'blocked'; readonly reason: string }
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

  /**
   * The risk of a change, by the rules loaded when the run started (ralph.config.json in the
   * user's checkout, which no patch may touch): the one place a change is classified.
   */
  assess(task: Pick<LoopTask, 'effort' | 'source'>, changes: readonly ChangedPath[]): RiskAssessment {
    return assessChange(changes, { effort: task.effort, source: task.source }, this.ctx.settings.riskPatterns);
  }

  /** The risk tier of a list of paths (recovery, plans). */
  classifyFiles(task: LoopTask, files: readonly string[]): RiskTier {
    return this.assess(
      task,
      files.map((path) => ({ path })),
    ).tier;
  }

  /**
   * A change that may not land: a patch touching Ralph's control files blocks its task with
   * the reason; a tier-3 one is decomposed (the decomposition agent sees paths, never the
   * content). Either way its patch (if one was queued) is discarded and its file removed, and
   * the worktree is reset first, so no copy of the content stays behind.
   */
  async refuse(
    task: LoopTask,
    agent: AgentName,
    assessment: RiskAssessment,
    files: readonly string[],
    at: { readonly worktree: string; readonly base: string; readonly patch?: { readonly id: string; readonly path: string } },
    signal: AbortSignal,
  ): Promise<PromotionOutcome> {
    const { control } = this.ctx;
    const touchesControl = assessment.controlFiles.length > 0;
    const why = touchesControl
      ? `${CONTROL_FILES_REASON} (${assessment.controlFiles.join(', ')})`
      : `risk tier 3: ${assessment.reasons.join('; ')}`;
    await resetWorktree(at.worktree, at.base).catch((e: unknown) =>
      this.ctx.log(agent, 'warn', `reset of ${at.worktree} failed: ${String(e)}`),
    );
    if (at.patch !== undefined) {
      // Removed before the discard: a discarded patch's file is kept in commits/discarded/.
      await rm(at.patch.path, { force: true });
      await control.discardPatch(at.patch.id, why, agent);
    }
    if (touchesControl) {
      await control.blockTask(task.task_id, agent, why);
      return { kind: 'blocked', reason: why };
    }
    const accepted = await this.decomposition.decompose(task, files, at.worktree, signal);
    return { kind: 'decomposed', accepted };
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
    const risk = this.assess(task, patch.files);
    const tier = risk.tier;
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
    const policy = decidePolicy(tier, { controlFiles: risk.controlFiles });
    if (policy.decision === 'block' || policy.decision === 'decompose') {
      return this.refuse(
        task,
        agent,
        risk,
        files,
        { worktree: change.worktree, base: change.base, patch: { id: patchId, path: patch.path } },
        signal,
      );
    }
    if (policy.decision === 'defer') {
      await control.deferTask(task.task_id, agent, policy.reason, tier, patchId);
      return { kind: 'deferred', patchId };
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
      // Whatever path led here (fresh, approved by the judge or a human, waited, recovered),
      // the patch as it is now is checked against the run's rules before git touches it.
      const refused = await this.refusedByRules(task, patchPath);
      if (refused !== null) return this.blockRefused(task.task_id, patchId, patchPath, refused, agent);
      const result = await promotePatch(this.ctx.projectDir, {
        branch: this.ctx.branch,
        patchFile: patchPath,
        message: message ?? formatPromotionMessage(task.task_id, task.title ?? task.task_id),
        patchId,
        expectedTip,
        onRecovered: (r) => this.ctx.log('harness', 'warn', `recovered an interrupted promotion in ${r.worktree}: ${describeRecovery(r)}`),
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

  /** Why the patch file may not be promoted by the run's rules (unreadable, control files, tier 3), or null. */
  private async refusedByRules(task: Pick<LoopTask, 'task_id'>, patchPath: string): Promise<string | null> {
    let changes: ChangedPath[];
    try {
      changes = parsePatch(await readFile(patchPath, 'utf8'));
    } catch (e) {
      return `the patch file cannot be read: ${e instanceof Error ? e.message : String(e)}`;
    }
    const t = this.ctx.control.task(task.task_id);
    const a = this.assess({ effort: t?.effort ?? null, source: t?.source ?? null }, changes);
    if (a.controlFiles.length > 0) return `${CONTROL_FILES_REASON} (${a.controlFiles.join(', ')})`;
    if (a.tier === 3) return `risk tier 3 (${a.reasons.join('; ')}): decompose it`;
    return null;
  }

  /** A patch refused at promotion: discarded, its file removed, its task blocked with the reason. */
  private async blockRefused(taskId: string, patchId: string, patchPath: string, why: string, agent: string): Promise<PromotionOutcome> {
    const { control } = this.ctx;
    await rm(patchPath, { force: true }); // before the discard, which would keep the file
    await control.discardPatch(patchId, why, agent);
    await control.blockTask(taskId, agent, why);
    return { kind: 'blocked', reason: why };
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
    // Team mode: on the shared remote first, so the store never records what others cannot fetch.
    if (this.ctx.publish !== undefined) await this.ctx.publish(commit);
    // The control plane moves the file to commits/applied/ once the promotion is durable.
    await this.ctx.control.promotePatch(patchId, commit, agent);
    return { kind: 'promoted', commit, patchId };
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
    if (rb.status !== 'rebased') {
      // What it collided with: the branch's commits since the attempt's base on those files.
      const by = await commitsTouching(this.ctx.projectDir, change.base, tip, rb.files).catch(() => []);
      const collided = by.length > 0 ? ` (changed on ${this.ctx.branch} since ${change.base.slice(0, 8)} by ${by.join('; ')})` : '';
      return give(`patch no longer applies and rebase onto ${tip.slice(0, 8)} conflicts in ${rb.files.join(', ')}${collided}`);
    }
    const v = await this.verification.verify(change.agent, change.task, change.worktree, rb.base, signal);
    // Stopped mid-way: the gates were cancelled, not failed. The patch stays queued for the
    // next run's recovery, which verifies it again on whatever the tip is then.
    if (signal.aborted) return { kind: 'waiting', patchId, reason: 'the loop stopped during the re-verification after a rebase' };
    if (v.restricted !== undefined) {
      await control.discardPatch(patchId, 'the re-based change may not be kept', change.agent);
      return this.refuse(
        change.task,
        change.agent,
        v.restricted.risk,
        v.restricted.files,
        { worktree: change.worktree, base: rb.base },
        signal,
      );
    }
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
