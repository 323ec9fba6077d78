// Claims as leases (team mode): a worker on any machine claims a task with an expiry that
// its heartbeat renews. A lease that runs out (the worker died, or lost the network) is
// expired by whoever looks next — the task goes back to pending with `lease.expired` — and
// a late result is refused by lease id (fencing): the queue-patch of a lease that is not the
// task's current one records `lease.refused` and fails with LeaseLostError. Every check
// and its event happen in one store command, so on a shared store two processes racing
// (a renewal and an expiry, two expiries) re-decide rather than both winning.
import { randomBytes } from 'node:crypto';
import { ControlError } from '../domain/errors';
import { toNewEvent, type DomainEvent } from '../domain/events';
import type { Task } from '../domain/model';
import { decideQueuePatch, newPatchId } from '../domain/patch';
import { decideClaim, decideTransition, DEFAULT_WORKER_EFFORTS, pickReady } from '../domain/task';
import type { ControlContext } from '../control/context';
import { allTasks, getPatch, getTask, patchesOf } from '../control/views';
import type { NewEvent, Projection, SqlReader, SqlWriter, StoredEvent } from '../store/types';
import { resolveMachine } from './machine';

export interface Lease {
  readonly taskId: string;
  readonly leaseId: string;
  readonly owner: string;
  readonly host: string;
  /** ISO 8601 UTC. */
  readonly expiresAt: string;
}

interface LeaseRow {
  task_id: string;
  lease_id: string;
  owner: string;
  host: string;
  expires_at: string;
}

/** The lease a result named is not the task's current one (expired, or another's now). */
export class LeaseLostError extends ControlError {
  override readonly name = 'LeaseLostError';
  constructor(
    readonly taskId: string,
    readonly leaseId: string,
    readonly reason: string,
  ) {
    super(`lease ${leaseId} on ${taskId} is no longer held: ${reason}; the result is refused`);
  }
}

/** The current lease per claimed task, kept from the events. */
export const leaseProjection: Projection = {
  name: 'task_lease',
  version: 1,
  tables: ['task_lease'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS task_lease (
      task_id TEXT NOT NULL PRIMARY KEY,
      lease_id TEXT NOT NULL,
      owner TEXT NOT NULL,
      host TEXT NOT NULL,
      expires_at TEXT NOT NULL
    )`,
  ],
  apply(db: SqlWriter, e: StoredEvent): void {
    if (e.entity_type !== 'task') return;
    const p = e.payload;
    switch (e.event_type) {
      case 'lease.granted':
        db.run('INSERT OR REPLACE INTO task_lease(task_id, lease_id, owner, host, expires_at) VALUES (?, ?, ?, ?, ?)', [
          e.entity_id,
          String(p['lease_id']),
          String(p['owner']),
          String(p['host']),
          String(p['expires_at']),
        ]);
        return;
      case 'lease.renewed':
        db.run('UPDATE task_lease SET expires_at = ? WHERE task_id = ? AND lease_id = ?', [
          String(p['expires_at']),
          e.entity_id,
          String(p['lease_id']),
        ]);
        return;
      case 'lease.expired':
        db.run('DELETE FROM task_lease WHERE task_id = ? AND lease_id = ?', [e.entity_id, String(p['lease_id'])]);
        return;
      default:
        // Any change of the task's status ends its lease (a claim's own lease.granted follows it).
        if (/^task\.(pending|claimed|proposed|done|deferred|blocked|dropped)$/.test(e.event_type)) {
          db.run('DELETE FROM task_lease WHERE task_id = ?', [e.entity_id]);
        }
    }
  },
};

function currentLease(db: SqlReader, taskId: string): LeaseRow | undefined {
  return db.get<LeaseRow>('SELECT task_id, lease_id, owner, host, expires_at FROM task_lease WHERE task_id = ?', [taskId]);
}

function leaseEvent(taskId: string, type: string, actor: string, payload: Record<string, unknown>): NewEvent {
  return { entity_type: 'task', entity_id: taskId, event_type: type, actor, payload };
}

const asLease = (r: LeaseRow): Lease => ({ taskId: r.task_id, leaseId: r.lease_id, owner: r.owner, host: r.host, expiresAt: r.expires_at });

/** Every task's current lease, by machine then holder (an expired one stays until someone expires it). */
export function currentLeases(db: SqlReader): Lease[] {
  return db.all<LeaseRow>('SELECT task_id, lease_id, owner, host, expires_at FROM task_lease ORDER BY host, owner, task_id').map(asLease);
}

/** Why `leaseId` cannot act on `taskId` now, or null when it is the live current lease. */
function fenceProblem(db: SqlReader, taskId: string, leaseId: string, now: string): string | null {
  const cur = currentLease(db, taskId);
  if (cur === undefined) return 'the task holds no lease now (it expired or was released)';
  if (cur.lease_id !== leaseId) return `the task is leased to ${cur.owner} now (lease ${cur.lease_id})`;
  if (cur.expires_at <= now) return `it expired at ${cur.expires_at}`;
  return null;
}

export interface ClaimOptions {
  /** The lease's holder, unique across the team (`worker-1@host:pid`). */
  readonly owner: string;
  readonly ttlMs: number;
  readonly host?: string;
  readonly exclude?: readonly string[];
  readonly efforts?: readonly string[];
  /** Who picks: a worker takes only small efforts, the loop's primary any (default worker). */
  readonly role?: 'primary' | 'worker';
  /** Claim this pending task rather than pick one (the loop's own maintenance tasks). */
  readonly taskId?: string;
  /** The task's `claimed_by` (the loop's agent name, `primary`); default the owner. */
  readonly claimedBy?: string;
}

/** Picks and claims a ready task with a lease, in one command; undefined when none is ready. */
export async function claimWithLease(ctx: ControlContext, o: ClaimOptions): Promise<Lease | undefined> {
  const leaseId = `lease_${randomBytes(8).toString('hex')}`;
  const host = o.host ?? resolveMachine();
  const { result } = await ctx.store.execute((db) => {
    const task: Task | undefined =
      o.taskId !== undefined
        ? getTask(db, o.taskId)
        : pickReady(allTasks(db), o.role ?? 'worker', o.exclude ?? [], o.efforts ?? DEFAULT_WORKER_EFFORTS);
    // A named task that is gone is the claim's error (decideClaim says so), not "nothing ready".
    if (task === undefined && o.taskId === undefined) return { events: [], result: undefined };
    const claim: DomainEvent[] = decideClaim({ task, patches: [] }, task?.task_id ?? String(o.taskId), o.claimedBy ?? o.owner);
    if (task === undefined) return { events: [], result: undefined };
    const expiresAt = new Date(ctx.now().getTime() + o.ttlMs).toISOString();
    const lease: Lease = { taskId: task.task_id, leaseId, owner: o.owner, host, expiresAt };
    return {
      events: [
        ...claim.map(toNewEvent),
        leaseEvent(task.task_id, 'lease.granted', o.owner, {
          lease_id: leaseId,
          owner: o.owner,
          host,
          expires_at: expiresAt,
          ttl_ms: o.ttlMs,
        }),
      ],
      result: lease,
    };
  });
  return result;
}

/** The heartbeat: extends a live lease; LeaseLostError when it is no longer the task's. */
export async function renewLease(ctx: ControlContext, lease: Lease, ttlMs: number): Promise<Lease> {
  const { result } = await ctx.store.execute((db) => {
    const now = ctx.now();
    const problem = fenceProblem(db, lease.taskId, lease.leaseId, now.toISOString());
    if (problem !== null) throw new LeaseLostError(lease.taskId, lease.leaseId, problem);
    const expiresAt = new Date(now.getTime() + ttlMs).toISOString();
    return {
      events: [leaseEvent(lease.taskId, 'lease.renewed', lease.owner, { lease_id: lease.leaseId, expires_at: expiresAt })],
      result: { ...lease, expiresAt },
    };
  });
  return result;
}

/** Returns every task whose lease ran out to pending (`lease.expired` + `task.pending`). */
export async function expireLeases(ctx: ControlContext, actor: string): Promise<Lease[]> {
  const { result } = await ctx.store.execute((db) => {
    const now = ctx.now().toISOString();
    const dead = db.all<LeaseRow>(
      'SELECT task_id, lease_id, owner, host, expires_at FROM task_lease WHERE expires_at <= ? ORDER BY task_id',
      [now],
    );
    const events: NewEvent[] = [];
    for (const l of dead) {
      events.push(
        leaseEvent(l.task_id, 'lease.expired', actor, { lease_id: l.lease_id, owner: l.owner, host: l.host, expired_at: l.expires_at }),
      );
      const task = getTask(db, l.task_id);
      if (task?.status === 'claimed') {
        const back = decideTransition(
          { task, patches: [] },
          {
            taskId: l.task_id,
            to: 'pending',
            actor,
            payload: { reason: `lease ${l.lease_id} of ${l.owner} expired`, released_owner: l.owner },
          },
        );
        events.push(...back.map(toNewEvent));
      }
    }
    return { events, result: dead.map(asLease) };
  });
  return result;
}

/**
 * A lease lost while its holder still works the task, taken again when nobody else holds
 * the task: the lost lease ran out (a store outage outlasted the heartbeat, a machine
 * stalled) and the task is pending, or still claimed under an expired lease. In one command
 * the expired lease ends (`lease.expired`, the task back to pending) and the same holder
 * claims it again with a fresh lease (`lease.granted` naming `reclaimed_from`), so the
 * result in flight is fenced by the new lease at queue time. Undefined when another holder
 * has a live lease, or the task moved on (proposed, done, deferred, blocked, dropped).
 */
export async function reclaimLease(
  ctx: ControlContext,
  lost: Lease,
  ttlMs: number,
  claimedBy: string = lost.owner,
): Promise<Lease | undefined> {
  const leaseId = `lease_${randomBytes(8).toString('hex')}`;
  const { result } = await ctx.store.execute((db): { events: NewEvent[]; result: Lease | undefined } => {
    const now = ctx.now();
    const at = now.toISOString();
    const none = { events: [], result: undefined };
    const cur = currentLease(db, lost.taskId);
    if (cur !== undefined && cur.expires_at > at) return cur.lease_id === lost.leaseId ? { events: [], result: asLease(cur) } : none;
    let task = getTask(db, lost.taskId);
    const events: NewEvent[] = [];
    if (cur !== undefined)
      events.push(
        leaseEvent(lost.taskId, 'lease.expired', lost.owner, {
          lease_id: cur.lease_id,
          owner: cur.owner,
          host: cur.host,
          expired_at: cur.expires_at,
        }),
      );
    if (task?.status === 'claimed') {
      // Claimed under no lease at all is someone's claim this holder never had: left alone.
      if (cur === undefined) return none;
      const back = decideTransition(
        { task, patches: [] },
        {
          taskId: lost.taskId,
          to: 'pending',
          actor: lost.owner,
          payload: { reason: `lease ${cur.lease_id} of ${cur.owner} expired`, released_owner: cur.owner },
        },
      );
      events.push(...back.map(toNewEvent));
      task = { ...task, status: 'pending', claimed_by: null };
    }
    if (task?.status !== 'pending') return none;
    events.push(...decideClaim({ task, patches: [] }, lost.taskId, claimedBy).map(toNewEvent));
    const lease: Lease = { ...lost, leaseId, expiresAt: new Date(now.getTime() + ttlMs).toISOString() };
    events.push(
      leaseEvent(lost.taskId, 'lease.granted', lost.owner, {
        lease_id: leaseId,
        owner: lost.owner,
        host: lost.host,
        expires_at: lease.expiresAt,
        ttl_ms: ttlMs,
        reclaimed_from: lost.leaseId,
      }),
    );
    return { events, result: lease };
  });
  return result;
}

/**
 * queue-patch, fenced: queued only while `lease` is the task's live lease. A late result
 * is recorded as `lease.refused` (the story shows it) and fails with LeaseLostError.
 */
export async function queuePatchFenced(
  ctx: ControlContext,
  lease: Lease,
  cmd: {
    patchPath: string;
    createdBy: string;
    ref?: string;
    /** The id chosen before the patch's ref was pushed (a patch id names one commit forever). */
    patchId?: string;
    /** Events recorded in the same step as the queueing (the patch's gates, its ref). */
    with?: (patchId: string) => NewEvent[];
  },
): Promise<string> {
  const { result } = await ctx.store.execute((db): { events: NewEvent[]; result: { refused: string } | { patchId: string } } => {
    const problem = fenceProblem(db, lease.taskId, lease.leaseId, ctx.now().toISOString());
    if (problem !== null) {
      const refused = leaseEvent(lease.taskId, 'lease.refused', cmd.createdBy, {
        lease_id: lease.leaseId,
        owner: lease.owner,
        what: 'queue-patch',
        reason: problem,
        ...(cmd.ref !== undefined ? { ref: cmd.ref } : {}),
      });
      return { events: [refused], result: { refused: problem } };
    }
    if (cmd.patchId !== undefined && getPatch(db, cmd.patchId) !== undefined)
      throw new ControlError(`patch ${cmd.patchId} exists already; a patch id names one change`);
    const patchId = cmd.patchId ?? newPatchId(lease.taskId, ctx.now(), (id) => getPatch(db, id) !== undefined);
    const queued = decideQueuePatch(getTask(db, lease.taskId), {
      taskId: lease.taskId,
      path: cmd.patchPath,
      createdBy: cmd.createdBy,
      patchId,
    });
    return { events: [...queued.map(toNewEvent), ...(cmd.with?.(patchId) ?? [])], result: { patchId } };
  });
  if ('refused' in result) throw new LeaseLostError(lease.taskId, lease.leaseId, result.refused);
  return result.patchId;
}

/**
 * Gives a leased task back (`pending`) or blocks it, fenced like queue-patch: a worker whose
 * lease ran out must not release or block what another worker holds now. False (and
 * `lease.refused`) when the lease is no longer the task's.
 */
export async function endLease(
  ctx: ControlContext,
  lease: Lease,
  to: 'pending' | 'blocked',
  reason: string,
  actor: string,
  /** More of the transition's payload (the loop's release cause). */
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  const { result } = await ctx.store.execute((db) => {
    const problem = fenceProblem(db, lease.taskId, lease.leaseId, ctx.now().toISOString());
    const task = getTask(db, lease.taskId);
    if (problem !== null || task?.status !== 'claimed') {
      const why = problem ?? `the task is ${task?.status ?? 'gone'}`;
      const refused = leaseEvent(lease.taskId, 'lease.refused', actor, {
        lease_id: lease.leaseId,
        owner: lease.owner,
        what: to,
        reason: why,
      });
      return { events: [refused], result: false };
    }
    const events = decideTransition(
      { task, patches: patchesOf(db, lease.taskId) },
      { taskId: lease.taskId, to, actor, payload: { ...extra, reason } },
    );
    return { events: events.map(toNewEvent), result: true };
  });
  return result;
}
