// Late promotion: a queued patch promoted long after its gates ran — approved by the judge
// or a human, waited on the user's checkout, or found queued after a restart. It lands
// onto its own base while that is still the branch tip; otherwise it is replayed and
// re-verified at the tip in the scratch worktree (lateVerify.ts), the re-based patch queued
// and promoted onto exactly that tip, again if the tip moved, a bounded number of times.
import { readFile, rm } from 'node:fs/promises';
import { domainEvent } from '../domain/events';
import { filesTouchedByPatch, touchedPaths } from '../git/patchParse';
import { findPromotedCommit } from '../git/promote';
import { branchTip, currentBranch, dirtyPaths } from '../git/repo';
import type { HarnessContext } from './context';
import { errorText } from './context';
import { lateFailureReason, MAX_LATE_REVERIFICATIONS, reverifyOnTip } from './lateVerify';
import type { LateOrigin } from './lateVerify';
import { Mutex } from './mutex';
import type { LoopTask } from './ports';
import { isLive } from './promotion';
import type { Promotion, PromotionOutcome } from './promotion';
import type { Verification } from './verification';

/** The patch a late promotion works on; replaced in place as re-based patches succeed it. */
interface LatePatch {
  id: string;
  path: string;
}

export class LatePromotion {
  /** One late promotion at a time: they share the scratch worktree (gates run outside the promotion lock). */
  private readonly lock = new Mutex();

  constructor(
    private readonly ctx: HarnessContext,
    private readonly promotion: Promotion,
    private readonly verification: Verification,
  ) {}

  /**
   * After approval (judge or human) the approved patch is promoted: onto the commit its
   * gates ran on, or re-verified on the moved tip first (see promoteLate).
   */
  async promoteApproved(taskId: string, actor: string, signal?: AbortSignal): Promise<PromotionOutcome | null> {
    const { control } = this.ctx;
    const task = control.task(taskId);
    if (!task || task.status !== 'proposed' || !task.patch_id) return null;
    const patch = control.patches(taskId).find((p) => p.patch_id === task.patch_id);
    if (!patch?.patch_path || patch.status === 'promoted' || patch.status === 'discarded') return null;
    return this.promoteLate(taskId, patch.patch_id, patch.patch_path, actor, 'approved', signal);
  }

  /** Retries promotions that waited on the user's checkout (re-verified if the branch moved meanwhile). */
  async retryWaiting(signal?: AbortSignal): Promise<void> {
    for (const w of this.ctx.control.waitingPromotions()) {
      await this.promoteLate(w.taskId, w.patchId, w.patchPath, 'harness', w.approved ? 'approved' : 'waiting', signal);
    }
  }

  /**
   * A queued patch promoted late (see the module header). The re-based patch is queued
   * while its predecessor stays queued until the outcome, so the task never looks free
   * meanwhile. A patch that no longer applies or passes is discarded with the reason and
   * its task goes back to pending. Null when the task or the patch is no longer waiting for
   * promotion.
   */
  async promoteLate(
    taskId: string,
    patchId: string,
    patchPath: string,
    actor: string,
    origin: LateOrigin,
    signal?: AbortSignal,
  ): Promise<PromotionOutcome | null> {
    return this.lock.run(async () => {
      const at = { id: patchId, path: patchPath };
      try {
        return await this.promoteLateLocked(taskId, at, actor, origin, signal ?? this.ctx.signal);
      } catch (e) {
        return this.lateError(taskId, at, actor, e);
      }
    });
  }

  /**
   * The harness itself failed mid-way (git, the file system): the patch waits and is tried
   * again with the other waiting ones, visibly; the third failure gives it up with the error.
   */
  private async lateError(taskId: string, at: LatePatch, actor: string, e: unknown): Promise<PromotionOutcome> {
    const msg = errorText(e);
    const n = (this.ctx.control.promotion(at.id)?.harness_errors ?? 0) + 1;
    const task = this.ctx.control.task(taskId);
    if (n >= 3 && task) return this.giveUpLate(task, actor, `the harness failed ${n} times promoting the patch: ${msg}`);
    const reason = `the harness failed promoting the patch (try ${n} of 3, retried later): ${msg}`;
    await this.ctx.control
      .record([domainEvent('patch.waiting', at.id, actor, { task_id: taskId, reason, cause: 'harness_error' })])
      .catch(() => undefined);
    return { kind: 'waiting', patchId: at.id, reason };
  }

  /** `cur` is updated in place as re-based patches replace it, so an error names the live one. */
  private async promoteLateLocked(
    taskId: string,
    cur: LatePatch,
    actor: string,
    origin: LateOrigin,
    signal: AbortSignal,
  ): Promise<PromotionOutcome | null> {
    const { control, branch, projectDir } = this.ctx;
    const { promotion } = this;
    const first = { ...cur };
    const live = control.patches(taskId).find((p) => p.patch_id === first.id);
    const start = control.task(taskId);
    if (
      !start ||
      start.status !== 'proposed' ||
      !live ||
      (live.status !== 'queued' && live.status !== 'applied' && live.status !== 'verified')
    ) {
      return null;
    }
    let reverified = 0;
    for (;;) {
      const task = control.task(taskId) ?? start;
      if (signal.aborted) return { kind: 'waiting', patchId: cur.id, reason: 'the loop stopped before the promotion finished' };
      const gone = promotion.notPromotable(taskId, cur.id);
      if (gone !== null) return promotion.abandon(taskId, cur.id, gone, actor);
      const tip = await branchTip(projectDir, branch);
      if (tip === null) return this.giveUpLate(task, actor, `target branch ${branch} is gone`);
      const base = this.baseOf(cur.id);
      if (base === tip) {
        const r = await promotion.promoteQueued(task, cur.id, cur.path, actor, tip);
        if (r.kind === 'promoted') {
          await this.discardSuperseded(taskId, r.patchId, r.commit, actor);
          return r;
        }
        if (r.kind !== 'conflict') return r;
        // Moved between our read of the tip and the compare-and-swap: re-verify on the new one.
        if (!r.reason.startsWith('branch-moved'))
          return this.giveUpLate(
            task,
            actor,
            `${origin === 'approved' ? 'the approved patch' : 'the patch'} cannot be promoted: ${r.reason}`,
          );
        continue;
      }
      // A run killed after the branch update but before the store heard of it (recovery):
      // the commit is there, found by its trailer; re-verifying would find nothing to add.
      if (reverified === 0) {
        const done = await findPromotedCommit(projectDir, branch, cur.id, base ?? undefined);
        if (done !== null) {
          const r = await promotion.lock.run(() => promotion.recordPromoted(taskId, cur.id, cur.path, done, actor));
          await this.discardSuperseded(taskId, cur.id, done, actor);
          return r;
        }
      }
      if (reverified >= MAX_LATE_REVERIFICATIONS) {
        const head = origin === 'approved' ? 'the approved patch was not promoted: ' : '';
        return this.giveUpLate(
          task,
          actor,
          `${head}${branch} kept moving: ${reverified} re-verifications of ${task.task_id}'s patch were each overtaken by another commit`,
        );
      }
      let files: string[];
      try {
        files = touchedPaths(filesTouchedByPatch(await readFile(cur.path, 'utf8')));
      } catch (e) {
        return this.giveUpLate(task, actor, `the patch file ${cur.path} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
      }
      // Waiting on the user's uncommitted edits to the patch's files: while they are still
      // there the promotion would only wait again, so the gates are not run for nothing on
      // every commit that moves the branch meanwhile.
      const waitingFor = control.promotion(cur.id)?.waiting_reason ?? null;
      if (waitingFor !== null && (await this.checkoutHolds(files))) return { kind: 'waiting', patchId: cur.id, reason: waitingFor };
      reverified++;
      const why = base === null ? 'the commit its gates ran on is not known' : `its gates ran on ${base.slice(0, 8)}`;
      this.ctx.log(
        'harness',
        'info',
        `${taskId}: ${branch} is at ${tip.slice(0, 8)} and ${why}; re-verifying patch ${cur.id} there (${origin})`,
      );
      const v = await reverifyOnTip({
        projectDir,
        branch,
        task,
        tip,
        patchPath: cur.path,
        files,
        signal,
        verify: (t, wt, b, s) => this.verification.verify('harness', t, wt, b, s),
        now: () => this.ctx.clock.now(),
      });
      if (v.kind === 'stopped') return { kind: 'waiting', patchId: cur.id, reason: 'the loop stopped during the re-verification' };
      if (v.kind !== 'ok') return this.giveUpLate(task, actor, lateFailureReason(origin, branch, tip, v));
      // The gates took a while: the human may have decided meanwhile, and their word stands.
      const changed = promotion.notPromotable(taskId, cur.id);
      if (changed !== null) {
        await rm(v.patch.path, { force: true });
        return promotion.abandon(taskId, cur.id, changed, actor);
      }
      const newFiles = touchedPaths(v.patch.files);
      const newId = await control.queuePatch(taskId, v.patch.path, actor);
      const tier = promotion.classifyFiles(task, newFiles);
      await control.recordRisk(taskId, tier, newFiles, newId, actor);
      await control.record([
        domainEvent('patch.gates', newId, actor, {
          task_id: taskId,
          gates: v.gates.map((g) => ({ gate: g.gate, status: g.status })),
          base_commit: tip,
          reverified_from: cur.id,
          files: newFiles,
          risk_tier: tier,
        }),
      ]);
      this.ctx.log('harness', 'info', `${taskId}: patch ${cur.id} re-verified on ${tip.slice(0, 8)} in ${v.durationMs} ms as ${newId}`);
      cur.id = newId;
      cur.path = v.patch.path;
    }
  }

  /** Whether the user's checkout of the target branch has uncommitted changes to any of `files`. */
  private async checkoutHolds(files: readonly string[]): Promise<boolean> {
    if ((await currentBranch(this.ctx.projectDir)) !== this.ctx.branch) return false;
    return (await dirtyPaths(this.ctx.projectDir, files)).length > 0;
  }

  /** The commit a queued patch's gates ran on, as the store knows it (null: re-verify). */
  private baseOf(patchId: string): string | null {
    return this.ctx.control.patchBase(patchId);
  }

  /** The task is done: its other live patches (predecessors of the promoted one) are closed with the reason. */
  private async discardSuperseded(taskId: string, promotedId: string, commit: string, actor: string): Promise<void> {
    const { control } = this.ctx;
    for (const p of control.patches(taskId)) {
      if (p.patch_id === promotedId || !isLive(p.status)) continue;
      const why = `superseded by ${promotedId}, re-verified on the moved branch and promoted as ${commit.slice(0, 8)}`;
      await control.discardPatch(p.patch_id, why, actor);
    }
  }

  /** A late patch that cannot land: every live patch of the task discarded, the task back to pending, said once. */
  private async giveUpLate(task: LoopTask, actor: string, why: string): Promise<PromotionOutcome> {
    const { control } = this.ctx;
    for (const p of control.patches(task.task_id)) {
      if (!isLive(p.status)) continue;
      await control.discardPatch(p.patch_id, why, actor);
    }
    const now = control.task(task.task_id);
    if (now !== undefined && now.status !== 'pending' && now.status !== 'done' && now.status !== 'dropped') {
      await control
        .releaseTask(task.task_id, actor, why)
        .catch((e: unknown) => this.ctx.log('harness', 'warn', `${task.task_id}: release failed: ${String(e)}`));
    }
    this.ctx.log('harness', 'warn', `${task.task_id}: ${why}`);
    return { kind: 'conflict', reason: why };
  }
}
