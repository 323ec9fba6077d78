// A team worker (`ralph worker`): in any clone of the repository, it claims a ready task
// from the shared store with a lease, starts from the remote's tip of the target branch in
// its own worktree, runs the agent confined (the loop's backends and invocation guards),
// runs the gates, and hands the result over through the shared remote: the commit of
// exactly the verified patch pushed as `refs/ralph/patches/<id>`, then queued in the store
// with its lease as the fencing token (a late result from a lost lease is refused). It
// never promotes: the elected promoter does. The heartbeat renews the lease while the task
// runs. A lease that ran out while nobody else took the task (an outage, a stall) is taken
// again, and the agent goes on: its result is still fenced, by the new lease, at queue
// time; so is a queue-patch refused for that reason, up to the retry limit. Only when
// another worker holds the task (or it moved on) are the agent and the gates aborted.
import { enableSpawnRelay } from '../shared/spawnRelay';
import { domainEvent, toNewEvent } from '../domain/events';
import type { NewEvent } from '../store/types';
import { newPatchId } from '../domain/patch';
import { touchedPaths } from '../domain/patchText';
import { ensureWorktree, resetWorktree } from '../git/worktrees';
import { getPatch } from '../control/views';
import type { ControlContext } from '../control/context';
import { errorText } from '../loop/context';
import type { LoopTask } from '../loop/ports';
import { workerPrompt } from '../loop/prompts';
import { LeaseLostError, claimWithLease, endLease, expireLeases, queuePatchFenced, type Lease } from './leases';
import { LeaseHeartbeat } from './leaseHeartbeat';
import { patchRef, pushPatchRef } from './patchRefs';
import { commitOfPatch, fetchBranchTip } from './remoteBranch';
import type { TeamHost } from './teamHost';
import { nextAppendOrPoll } from './nextAppend';
import { machineAgentName } from '../domain/agentName';

export interface TeamWorkerOptions {
  /** The local agent name (`worker-1`): names its worktree and its logs. */
  readonly name: string;
  /** The remote every clone shares (default `origin`). */
  readonly remote: string;
  readonly leaseTtlMs: number;
  /** Stop when nothing is left to claim and nothing is in flight (the backlog is done or blocked). */
  readonly exitWhenIdle: boolean;
  readonly idlePollMs: number;
  readonly log: (line: string) => void;
}

export interface WorkerTally {
  queued: number;
  refused: number;
  released: number;
  blocked: number;
}

/** Whether any task can still become ready: pending, claimed (someone works it) or proposed. */
function backlogOpen(ctx: ControlContext): boolean {
  const r = ctx.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM task_view WHERE status IN ('pending', 'claimed', 'proposed')");
  return (r?.n ?? 0) > 0;
}

export class TeamWorker {
  /** The agent's name in the team's events: `worker-1@<machine>`. */
  readonly agent: string;
  /** The lease holder: the agent and its process (`worker-1@<machine>:<pid>`). */
  readonly owner: string;
  readonly tally: WorkerTally = { queued: 0, refused: 0, released: 0, blocked: 0 };
  private readonly cctx: ControlContext;

  constructor(
    private readonly host: TeamHost,
    private readonly o: TeamWorkerOptions,
  ) {
    // The machine says where the agent runs (the views group by it); the pid keeps the
    // owner unique across the team, as several clones on one machine each run a `worker-1`.
    this.agent = machineAgentName(o.name, host.host);
    this.owner = `${this.agent}:${process.pid}`;
    this.cctx = host.control.ctx;
  }

  /** Claims and works tasks until `signal` aborts (or, with exitWhenIdle, the backlog is settled). */
  async run(signal: AbortSignal): Promise<WorkerTally> {
    // A team worker starts agents, gates and git for hours: a small helper forks them.
    enableSpawnRelay();
    const { o } = this;
    while (!signal.aborted) {
      let lease: Lease | undefined;
      try {
        await expireLeases(this.cctx, this.owner);
        lease = await claimWithLease(this.cctx, {
          owner: this.owner,
          ttlMs: o.leaseTtlMs,
          host: this.host.host,
          efforts: this.host.settings.workerEfforts,
        });
      } catch (e) {
        // The store is away (it retries its connection itself): wait a poll, then ask again.
        o.log(`${o.name}: the store did not answer (${errorText(e)}); retrying`);
        await this.idle(signal);
        continue;
      }
      if (lease === undefined) {
        if (o.exitWhenIdle && !backlogOpen(this.cctx)) break;
        await this.idle(signal);
        continue;
      }
      o.log(`${o.name}: claimed ${lease.taskId} (lease ${lease.leaseId}, ${Math.round(o.leaseTtlMs / 1000)} s)`);
      try {
        await this.work(lease, signal);
      } catch (e) {
        o.log(`${o.name}: ${lease.taskId} failed in the harness: ${errorText(e)}`);
        await this.giveBack(lease, 'pending', `harness error in ${this.owner}: ${errorText(e)}`).catch(() => undefined);
      }
    }
    return this.tally;
  }

  private idle(signal: AbortSignal): Promise<void> {
    return nextAppendOrPoll(this.host.store, this.o.idlePollMs, signal);
  }

  private async giveBack(lease: Lease, to: 'pending' | 'blocked', reason: string): Promise<void> {
    const ok = await endLease(this.cctx, lease, to, reason, this.owner);
    if (!ok) this.o.log(`${this.o.name}: ${lease.taskId}: not ${to === 'pending' ? 'released' : 'blocked'}: the lease is gone`);
    else if (to === 'pending') this.tally.released++;
    else this.tally.blocked++;
  }

  private async work(first: Lease, stop: AbortSignal): Promise<void> {
    const { host, o } = this;
    const { harness, control, settings } = host;
    const beat = new LeaseHeartbeat(
      this.cctx,
      first,
      o.leaseTtlMs,
      (e) => o.log(`${o.name}: heartbeat: ${errorText(e)}`),
      (lost, l) => o.log(`${o.name}: lease ${lost} on ${l.taskId} ran out with nobody taking the task: leased again (${l.leaseId})`),
    );
    const signal = AbortSignal.any([stop, beat.signal]);
    try {
      const task: LoopTask | undefined = control.task(first.taskId);
      if (task === undefined) return;
      const tip = await fetchBranchTip(host.projectDir, o.remote, host.branch);
      const wt = await ensureWorktree(host.projectDir, { name: o.name, branch: host.branch, base: tip, keepIgnored: true });
      let failure: { gate: string; output: string } | null = null;
      for (let attempt = 1; attempt <= settings.maxRetries + 1; attempt++) {
        const prompt = workerPrompt(harness.ctx.promptContext, task, o.name, failure, control.retryNotes(task.task_id), attempt);
        const out = await harness.invocation.invoke(
          { agent: this.agent, role: 'worker', phase: 'worker', task, prompt, cwd: wt.path, iteration: attempt - 1 },
          signal,
        );
        if (await this.stopped(beat, stop)) return;
        if (out.kind === 'budget' || out.kind === 'incident') {
          await this.giveBack(beat.lease, out.kind === 'incident' ? 'blocked' : 'pending', out.message);
          return;
        }
        if (out.kind !== 'ran') return;
        if (out.result.status !== 'success') {
          failure = { gate: 'agent', output: `${out.result.status}: ${out.result.errors.join('; ') || out.result.stderrTail}` };
          continue;
        }
        const v = await harness.verification.verify(this.agent, task, wt.path, wt.base, signal);
        if (await this.stopped(beat, stop)) return;
        if (v.restricted !== undefined) {
          await resetWorktree(wt.path, wt.base).catch(() => undefined);
          const why = v.restricted.risk.controlFiles.length > 0 ? "the change touches Ralph's control files" : 'risk tier 3: decompose it';
          await this.giveBack(beat.lease, 'blocked', `${why} (${v.restricted.files.slice(0, 5).join(', ')})`);
          return;
        }
        const failed = v.gates.find((g) => !g.ok);
        if (failed !== undefined || v.patch === null) {
          failure = { gate: failed?.gate ?? 'verify', output: failed?.outputTail ?? '' };
          o.log(`${o.name}: ${task.task_id}: ${failure.gate} failed (attempt ${attempt}/${settings.maxRetries + 1})`);
          continue;
        }
        if (v.patch.isEmpty) {
          await this.giveBack(beat.lease, 'pending', 'the run succeeded but changed no files');
          return;
        }
        await this.handOver(beat, task, wt.base, v.patch.path, v.patch.files, v.gates);
        return;
      }
      await this.giveBack(beat.lease, 'blocked', `${settings.maxRetries + 1} attempts failed: last ${failure?.gate ?? '?'}`);
    } finally {
      await beat.stop();
    }
  }

  /** True when the task is no longer this worker's to finish (stopping, or the lease lost). */
  private async stopped(beat: LeaseHeartbeat, stop: AbortSignal): Promise<boolean> {
    if (stop.aborted) {
      await this.giveBack(beat.lease, 'pending', `worker ${this.owner} stopped`).catch(() => undefined);
      return true;
    }
    if (beat.signal.aborted) {
      this.o.log(`${this.o.name}: lost the lease on ${beat.lease.taskId}: ${errorText(beat.signal.reason)}; dropping the work`);
      return true;
    }
    return false;
  }

  /** The verified patch to the remote (as a commit under its patch ref), then queued, fenced. */
  private async handOver(
    beat: LeaseHeartbeat,
    task: LoopTask,
    base: string,
    patchPath: string,
    files: Parameters<typeof touchedPaths>[0],
    gates: readonly { gate: string; status: string }[],
  ): Promise<void> {
    const { host, o } = this;
    const taskId = task.task_id;
    const patchId = newPatchId(taskId, new Date(), (id) => getPatch(host.store, id) !== undefined);
    const commit = await commitOfPatch(
      host.projectDir,
      base,
      patchPath,
      `ralph(${taskId}): ${task.title ?? taskId}\n\nPatch ${patchId} by ${this.owner}.\n`,
    );
    const pushed = await pushPatchRef(host.projectDir, o.remote, patchId, commit);
    if (pushed.kind !== 'pushed') throw new Error(`the patch ref ${patchRef(patchId)} is taken on the remote: ${pushed.detail}`);
    const risk = host.harness.promotion.assess(task, files);
    const ref = patchRef(patchId);
    const gateEvents = (id: string): NewEvent[] => [
      toNewEvent(
        domainEvent('patch.gates', id, this.owner, {
          task_id: taskId,
          gates: gates.map((g) => ({ gate: g.gate, status: g.status })),
          base_commit: base,
          files: touchedPaths(files),
          risk_tier: risk.tier,
          ref,
          commit,
        }),
      ),
    ];
    for (let retry = 0; ; retry++) {
      try {
        await queuePatchFenced(this.cctx, beat.lease, { patchId, patchPath, createdBy: this.owner, ref, with: gateEvents });
        break;
      } catch (e) {
        if (!(e instanceof LeaseLostError)) throw e;
        // Ran out with nobody taking the task: the same verified patch, queued under a new lease.
        if (retry < host.settings.maxRetries && (await beat.reclaim())) {
          o.log(`${o.name}: ${taskId}: patch ${patchId} refused (${e.reason}); queued again under lease ${beat.lease.leaseId}`);
          continue;
        }
        this.tally.refused++;
        o.log(`${o.name}: ${taskId}: patch ${patchId} refused: ${e.reason}`);
        return;
      }
    }
    this.tally.queued++;
    await host.control.recordRisk(taskId, risk.tier, touchedPaths(files), patchId).catch(() => undefined);
    o.log(`${o.name}: ${taskId}: patch ${patchId} pushed (${commit.slice(0, 8)} on ${base.slice(0, 8)}) and queued, tier ${risk.tier}`);
  }
}
