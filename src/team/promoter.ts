// The team's promoter: the one process (elected by PromoterLock) that puts workers' patches
// on the target branch. For each queued team patch it fetches the patch's ref from the
// shared remote, checks the commit is the one the worker queued (one commit on the base its
// gates ran on), applies the risk policy, and promotes it through the loop's late promotion
// (onto its own base while that is the tip; re-verified on the moved tip otherwise). The
// harness publishes each promotion to the remote's branch by compare-and-swap before the
// store records it. A tier-2 patch is deferred and, with the judge on, reviewed by the
// independent judge here (confined, in an empty folder, on the diff fetched from its ref):
// approved, it is promoted on the next pass like any other; rejected, its task is worked
// again; a verdict the harness refuses leaves it deferred for a human. It also expires the
// leases of workers that stopped renewing them.
import { enableSpawnRelay } from '../shared/spawnRelay';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { decidePolicy } from '../domain/policy';
import { parsePatch } from '../domain/patchText';
import type { ControlContext } from '../control/context';
import { errorText } from '../loop/context';
import { idFilePath } from '../shared/idFiles';
import { expireLeases } from './leases';
import { deletePatchRef, fetchPatchRef, listPatchRefs, taskOfPatchId } from './patchRefs';
import { patchFileOfCommit, syncBranch } from './remoteBranch';
import type { TeamHost } from './teamHost';
import { queuedLocalPatches, queuedTeamPatches, teamPatch, type TeamPatch } from './teamPatches';
import { nextAppendOrPoll } from './nextAppend';

export interface TeamPromoterOptions {
  readonly remote: string;
  readonly pollMs: number;
  /** Stop once no task is pending, claimed or proposed (the backlog is done or blocked). */
  readonly exitWhenIdle: boolean;
  readonly log: (line: string) => void;
  /** The actor of the promoter's events. */
  readonly actor: string;
  /** Run the judge on deferred team patches (else they wait for a human's resolve-deferred). */
  readonly judge: boolean;
}

export interface PromoterTally {
  promoted: number;
  deferred: number;
  notPromoted: number;
  judged: number;
}

function backlogOpen(ctx: ControlContext): boolean {
  const r = ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM task_view WHERE status IN ('pending', 'claimed', 'proposed')");
  return (r?.n ?? 0) > 0;
}

export class TeamPromoter {
  readonly tally: PromoterTally = { promoted: 0, deferred: 0, notPromoted: 0, judged: 0 };
  private readonly cctx: ControlContext;
  /**
   * Patches this promoter's judge has reviewed: one review each. A verdict the harness
   * refused leaves the task deferred, and a human decides it rather than a judge in a loop.
   */
  private readonly reviewed = new Set<string>();

  constructor(
    private readonly host: TeamHost,
    private readonly o: TeamPromoterOptions,
  ) {
    this.cctx = host.control.ctx;
  }

  async run(signal: AbortSignal): Promise<PromoterTally> {
    // The promoter runs gates and git for as long as the team works: a small helper forks them.
    enableSpawnRelay();
    let lastProblem = '';
    while (!signal.aborted) {
      try {
        const expired = await expireLeases(this.cctx, this.o.actor);
        for (const l of expired) this.o.log(`lease ${l.leaseId} of ${l.owner} on ${l.taskId} expired: the task is pending again`);
        const queued = queuedTeamPatches(this.host.store);
        if (queued.length > 0) await syncBranch(this.host.projectDir, this.o.remote, this.host.branch);
        for (const p of queued) {
          if (signal.aborted) break;
          await this.promoteOne(p, signal);
        }
        for (const p of queuedLocalPatches(this.host.store)) {
          if (signal.aborted) break;
          await this.promoteStranded(p, signal);
        }
        if (this.o.judge) await this.judgeDeferred(signal);
        await this.cleanOrphanRefs();
        lastProblem = '';
        if (this.o.exitWhenIdle && !backlogOpen(this.cctx)) break;
      } catch (e) {
        // The store or the remote is away, or the branches diverged: said once, tried again.
        const problem = errorText(e);
        if (problem !== lastProblem) this.o.log(`promoter: ${problem}; trying again`);
        lastProblem = problem;
      }
      await this.idle(signal);
    }
    return this.tally;
  }

  private idle(signal: AbortSignal): Promise<void> {
    return nextAppendOrPoll(this.host.store, this.o.pollMs, signal);
  }

  /**
   * A re-based patch a promoter queued and did not finish: promoted here when its file is
   * here (this promoter, restarted); otherwise discarded, so its task is worked again —
   * the file is on a machine this one cannot see, and nothing is promoted unseen.
   */
  private async promoteStranded(p: { patch_id: string; task_id: string; patch_path: string | null }, signal: AbortSignal): Promise<void> {
    const { control, harness } = this.host;
    if (p.patch_path !== null && isAbsolute(p.patch_path) && existsSync(p.patch_path)) {
      const r = await harness.late.promoteLate(p.task_id, p.patch_id, p.patch_path, this.o.actor, 'recovered', signal);
      if (r?.kind === 'promoted') this.tally.promoted++;
      return;
    }
    const why = `its file ${p.patch_path ?? '(none)'} is not on this promoter's machine (a promoter stopped while re-verifying it); the task is worked again`;
    await control.discardPatch(p.patch_id, why, this.o.actor);
    this.tally.notPromoted++;
    this.o.log(`${p.task_id}: patch ${p.patch_id} discarded: ${why}`);
  }

  /**
   * The patch as its ref on the remote has it, written to this machine's pending folder;
   * null (and the patch discarded) when the ref names another commit than the one queued.
   */
  private async fetchedPatchFile(p: TeamPatch): Promise<string | null> {
    const { host, o } = this;
    const sha = await fetchPatchRef(host.projectDir, o.remote, p.patch_id);
    if (sha !== p.commit_sha) {
      // A patch id names one commit forever: a ref that now names another is not the worker's result.
      await host.control.discardPatch(p.patch_id, `its ref names ${sha.slice(0, 8)}, not the queued ${p.commit_sha.slice(0, 8)}`, o.actor);
      this.tally.notPromoted++;
      return null;
    }
    const file = idFilePath(join(host.ralphDir, 'commits', 'pending'), [['patch', p.patch_id]], '.patch');
    await patchFileOfCommit(host.projectDir, sha, p.base_commit, file);
    return file;
  }

  /**
   * Patch refs no store event names: a worker died between pushing its ref and recording
   * it (or its late record was refused). Never promoted (only recorded patches are), and
   * deleted from the remote once their task is no longer claimed, so the worker that may
   * still be about to record one is left alone; the delete is compare-and-swap on the ref.
   */
  private async cleanOrphanRefs(): Promise<void> {
    const { host, o } = this;
    for (const r of await listPatchRefs(host.projectDir, o.remote)) {
      if (teamPatch(host.store, r.patchId) !== undefined || host.control.patches().some((p) => p.patch_id === r.patchId)) continue;
      const taskId = taskOfPatchId(r.patchId);
      if (taskId !== null && host.control.task(taskId)?.status === 'claimed') continue;
      if (await deletePatchRef(host.projectDir, o.remote, r.patchId, r.sha)) {
        o.log(`orphan patch ref ${r.patchId} (${r.sha.slice(0, 8)}) deleted: no store event names it`);
      }
    }
  }

  /** The judge on each deferred team patch not reviewed yet, oldest deferral first. */
  private async judgeDeferred(signal: AbortSignal): Promise<void> {
    const { host, o } = this;
    const deferred = host.control
      .tasks()
      .filter((t) => t.status === 'deferred' && t.patch_id !== null && !this.reviewed.has(t.patch_id))
      .sort((a, b) => (a.deferred_at ?? '').localeCompare(b.deferred_at ?? ''));
    for (const task of deferred) {
      if (signal.aborted) return;
      const p = task.patch_id === null ? undefined : teamPatch(host.store, task.patch_id);
      // Deferred without a ref (another host's loop): its file is not here; a human decides it.
      if (p === undefined) continue;
      this.reviewed.add(p.patch_id);
      const file = await this.fetchedPatchFile(p);
      if (file === null) continue;
      o.log(`${task.task_id}: the judge reviews patch ${p.patch_id}`);
      const verdict = await host.harness.judge.review(task, signal, { patchFile: file, promote: false });
      if (verdict === 'skipped' && signal.aborted) return;
      this.tally.judged++;
      const now = host.control.task(task.task_id)?.status ?? 'gone';
      o.log(
        verdict === 'approve'
          ? `${task.task_id}: the judge approved patch ${p.patch_id}; promoting it`
          : `${task.task_id}: judge verdict ${verdict} on patch ${p.patch_id}; the task is ${now}${now === 'deferred' ? ' (a human decides it)' : ''}`,
      );
    }
  }

  private async promoteOne(p: TeamPatch, signal: AbortSignal): Promise<void> {
    const { host, o } = this;
    const { control, harness } = host;
    const file = await this.fetchedPatchFile(p);
    if (file === null) return;
    const task = control.task(p.task_id);
    if (task === undefined) return;
    // The tier from the patch as fetched, by this promoter's rules: the worker's is a claim.
    const risk = harness.promotion.assess(task, parsePatch(await readFile(file, 'utf8')));
    // Approved by the judge or a human (resolve-deferred): promoted, not deferred again.
    const approved = control.promotion(p.patch_id)?.approved === true;
    const policy = decidePolicy(risk.tier, { controlFiles: risk.controlFiles, approvedByJudge: approved });
    if (policy.decision === 'defer') {
      await control.deferTask(p.task_id, o.actor, policy.reason, risk.tier, p.patch_id);
      this.tally.deferred++;
      o.log(`${p.task_id}: patch ${p.patch_id} deferred to the judge: ${policy.reason}`);
      return;
    }
    // block / decompose are refused inside the promotion, by the same rules, before git.
    const r = await harness.late.promoteLate(p.task_id, p.patch_id, file, o.actor, 'recovered', signal);
    if (r?.kind === 'promoted') {
      this.tally.promoted++;
      o.log(`PROMOTED ${r.patchId} → ${p.task_id} done (commit ${r.commit.slice(0, 8)}, pushed to ${host.branch}), from ${p.worker}`);
    } else if (r !== null) {
      if (r.kind !== 'waiting') this.tally.notPromoted++;
      o.log(`${p.task_id}: patch ${p.patch_id} ${r.kind}${'reason' in r ? `: ${r.reason}` : ''}`);
    }
  }
}
