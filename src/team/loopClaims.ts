// The loop's claims on a shared (PostgreSQL) store: every claim the loop's primary and its
// workers make is a lease, like a team worker's (no claim without a lease), so a loop that
// dies frees its tasks by expiry and another host's `ralph worker` cannot be starved by a
// claim nobody renews. One heartbeat renews all of this process's leases while their tasks
// stay claimed, and expires other processes' dead leases on the same beat. At start-up,
// recovery releases only stale claims — without a lease, expired, or held by a process of
// this machine that is gone — never a live lease of another machine's worker.
// The loop's results are fenced like a worker's: its queue-patch, release and block of a
// task go through the lease it claimed the task with, so a loop whose lease ran out or was
// taken over (a stall, a suspended laptop) has its late patch refused by the store
// (`lease.refused`), and the task stays with the lease's holder. When the lease ran out and
// nobody took the task, this loop takes it again with a new lease (on the heartbeat, or
// after the refusal) and queues the same verified patch under it, up to `reclaims` times:
// a stall must not throw away work that fencing can still accept.
import type { ControlContext } from '../control/context';
import { getTask } from '../control/views';
import type { ClaimLeases } from '../loop/controlAdapter';
import type { LoopTask } from '../loop/ports';
import { claimWithLease, endLease, expireLeases, LeaseLostError, queuePatchFenced, reclaimLease, renewLease, type Lease } from './leases';
import { resolveMachine } from './machine';

export interface LoopClaimsOptions {
  readonly ttlMs: number;
  readonly host?: string;
  readonly pid?: number;
  /** Told when a renewal fails or a lease is lost (the loop's log). */
  readonly log?: (line: string) => void;
  /** How often a refused queue-patch is tried again under a lease taken again (default 2). */
  readonly reclaims?: number;
}

/** Whether process `pid` of this machine still runs (EPERM: it runs, as someone else). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `name@host:pid` → host and pid; null for an owner in another shape. */
export function parseLeaseOwner(owner: string): { host: string; pid: number } | null {
  const m = /^[^@]+@(.+):(\d+)$/.exec(owner);
  return m ? { host: m[1] as string, pid: Number(m[2]) } : null;
}

export class LoopClaims implements ClaimLeases {
  /** The leases the heartbeat renews. */
  private readonly held = new Map<string, Lease>();
  /**
   * The lease each task was claimed with, until this loop queues, releases or blocks the
   * task through it: kept when renewal stops, because a lost lease is exactly what fences.
   */
  private readonly claimedWith = new Map<string, Lease>();
  private readonly host: string;
  private readonly pid: number;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly ctx: ControlContext,
    private readonly o: LoopClaimsOptions,
  ) {
    this.host = o.host ?? resolveMachine();
    this.pid = o.pid ?? process.pid;
  }

  private owner(agent: string): string {
    return `${agent}@${this.host}:${this.pid}`;
  }

  async claimReady(
    agent: string,
    role: 'primary' | 'worker',
    exclude: readonly string[],
    efforts?: readonly string[],
  ): Promise<LoopTask | null> {
    // Tasks of a process that died (here or elsewhere) are free again before picking.
    await expireLeases(this.ctx, `harness@${this.host}:${this.pid}`);
    const lease = await claimWithLease(this.ctx, {
      owner: this.owner(agent),
      claimedBy: agent,
      ttlMs: this.o.ttlMs,
      host: this.host,
      role,
      exclude,
      ...(efforts !== undefined ? { efforts } : {}),
    });
    return lease === undefined ? null : this.hold(lease);
  }

  async claimNamed(taskId: string, agent: string): Promise<void> {
    const lease = await claimWithLease(this.ctx, {
      owner: this.owner(agent),
      claimedBy: agent,
      ttlMs: this.o.ttlMs,
      host: this.host,
      taskId,
    });
    if (lease !== undefined) this.hold(lease);
  }

  private hold(lease: Lease): LoopTask | null {
    this.held.set(lease.taskId, lease);
    this.claimedWith.set(lease.taskId, lease);
    this.schedule();
    return getTask(this.ctx.store, lease.taskId) ?? null;
  }

  /**
   * queue-patch under the lease this loop claimed the task with, fenced: LeaseLostError (and
   * `lease.refused`) when it is no longer the task's live lease. Undefined when this loop
   * holds no lease of the task (a re-queue of a deferred task's patch): the plain command.
   */
  queuePatch(taskId: string, patchPath: string, createdBy: string): Promise<string> | undefined {
    const lease = this.claimedWith.get(taskId);
    if (lease === undefined) return undefined;
    return this.fenced(taskId, async () => {
      let current = lease;
      for (let retry = 0; ; retry++) {
        try {
          return await queuePatchFenced(this.ctx, current, { patchPath, createdBy });
        } catch (e) {
          if (!(e instanceof LeaseLostError)) throw e;
          this.o.log?.(e.message);
          const again = retry < (this.o.reclaims ?? 2) ? await this.reclaim(current) : undefined;
          if (again === undefined) {
            // Someone else's now, or it moved on; a lease that ran out goes back to pending now.
            await expireLeases(this.ctx, `harness@${this.host}:${this.pid}`).catch(() => undefined);
            throw e;
          }
          current = again;
        }
      }
    });
  }

  /** The task taken again under a new lease when its lease ran out and nobody took it. */
  private async reclaim(lost: Lease): Promise<Lease | undefined> {
    const agent = lost.owner.slice(0, lost.owner.lastIndexOf('@'));
    const again = await reclaimLease(this.ctx, lost, this.o.ttlMs, agent);
    if (again === undefined) return undefined;
    this.o.log?.(`lease ${lost.leaseId} on ${lost.taskId} ran out with nobody taking the task: leased again (${again.leaseId})`);
    this.claimedWith.set(lost.taskId, again);
    if (!this.closed) this.held.set(lost.taskId, again);
    this.schedule();
    return again;
  }

  /**
   * Releases or blocks the task under this loop's lease, fenced: false (and `lease.refused`)
   * when the lease is no longer the task's — it is left to its holder. Undefined when this
   * loop holds no lease of the task.
   */
  endClaim(
    taskId: string,
    to: 'pending' | 'blocked',
    actor: string,
    reason: string,
    extra: Record<string, unknown> = {},
  ): Promise<boolean> | undefined {
    const lease = this.claimedWith.get(taskId);
    if (lease === undefined) return undefined;
    // Not renewed (nor taken again) from here on: this loop is giving the task up.
    this.held.delete(taskId);
    return this.fenced(taskId, async () => {
      const ended = await endLease(this.ctx, lease, to, reason, actor, extra);
      if (!ended)
        this.o.log?.(`lease ${lease.leaseId} on ${taskId} is no longer held: the ${to === 'pending' ? 'release' : 'block'} is refused`);
      return ended;
    });
  }

  /**
   * Runs a fenced command. Done under the lease: the claim is spent. Refused: renewal stops,
   * but the lease stays the one this loop acts with, so a release that follows the refusal
   * (the harness's clean-up) is refused too rather than freeing another holder's task.
   */
  private async fenced<T>(taskId: string, run: () => Promise<T>): Promise<T> {
    try {
      const result = await run();
      this.held.delete(taskId);
      if (result !== false) this.claimedWith.delete(taskId);
      return result;
    } catch (e) {
      if (e instanceof LeaseLostError) this.held.delete(taskId);
      throw e;
    }
  }

  /**
   * A claimed task nobody will finish: no lease (claimed before leases, or by a tool that
   * took none), an expired one, or one held by a process of this machine that is gone
   * (this loop's previous run). A live lease of another machine or process stays.
   */
  isStale(taskId: string): boolean {
    const row = this.ctx.store.get<{ owner: string; expires_at: string }>('SELECT owner, expires_at FROM task_lease WHERE task_id = ?', [
      taskId,
    ]);
    if (row === undefined) return true;
    if (row.expires_at <= this.ctx.now().toISOString()) return true;
    const who = parseLeaseOwner(row.owner);
    return who !== null && who.host === this.host && who.pid !== this.pid && !processAlive(who.pid);
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.beating = this.beat().finally(() => {
          if (this.held.size > 0) this.schedule();
        });
      },
      Math.max(50, Math.floor(this.o.ttlMs / 3)),
    );
    this.timer.unref();
  }

  /** Renews every lease whose task is still claimed under it; drops the others. */
  private async beat(): Promise<void> {
    for (const [taskId, lease] of [...this.held]) {
      if (this.closed) return;
      const task = getTask(this.ctx.store, taskId);
      const current = this.ctx.store.get<{ lease_id: string }>('SELECT lease_id FROM task_lease WHERE task_id = ?', [taskId]);
      // Pending under no lease while this loop still works it: another process expired it.
      const expiredByOther = task?.status === 'pending' && current === undefined;
      if (!expiredByOther && (task?.status !== 'claimed' || current?.lease_id !== lease.leaseId)) {
        this.held.delete(taskId); // proposed, released, done, another's…: the lease ended with the claim
        continue;
      }
      try {
        if (expiredByOther) throw new LeaseLostError(taskId, lease.leaseId, 'another process expired it');
        this.held.set(taskId, await renewLease(this.ctx, lease, this.o.ttlMs));
      } catch (e) {
        if (e instanceof LeaseLostError) {
          this.held.delete(taskId);
          const again = await this.reclaim(lease).catch(() => undefined);
          if (again === undefined) this.o.log?.(`lease ${lease.leaseId} on ${taskId} lost: ${e.reason}`);
        } else this.o.log?.(`lease ${lease.leaseId} on ${taskId} not renewed (tried again next beat): ${String(e)}`);
      }
    }
    if (!this.closed) await expireLeases(this.ctx, `harness@${this.host}:${this.pid}`).catch(() => undefined);
  }

  async dispose(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.beating.catch(() => undefined);
  }
}
