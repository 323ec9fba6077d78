// Property-based: the task and patch lifecycles under random command sequences, through the
// control plane's real commands on a real sql.js store (done means a commit on the
// branch; one owner per task). Whatever the sequence — claims (some racing each other), transitions to
// any status, patches queued, promoted with known or unknown commits, discarded, deferrals
// resolved, claims released, deferrals expired — after every step:
//   1. no task is done without a promoted patch whose commit exists on the branch;
//   2. a task has at most one owner: a claimed task names exactly one, a racing batch of
//      claims hands out distinct tasks, and no task is ever claimed while it is claimed;
// every refusal is a domain error (never a crash), and the views equal a rebuild from the
// events. Seeds: RALPH_PROPERTY_SEED replays a failure fast-check reports.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  claimReadyTask,
  controlContext,
  CONTROL_PROJECTIONS,
  discardPatch,
  expireStaleDeferrals,
  promotePatch,
  queuePatch,
  releaseClaims,
  resolveDeferred,
  transitionTask,
  type ControlContext,
} from '../../../src/control/index';
import { decideAndAppend } from '../../../src/control/tasks';
import { domainEvent } from '../../../src/domain/events';
import { TASK_STATUSES } from '../../../src/domain/model';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { diffViewsAgainstRebuild } from '../../../src/project/repair/storeChecks';
import { count } from '../kit/tally';

const seed = process.env['RALPH_PROPERTY_SEED'] ? Number(process.env['RALPH_PROPERTY_SEED']) : 20261201;

/** Errors a command may refuse with: the domain's and the control plane's, by name. */
const REFUSALS = new Set([
  'TaskNotFoundError',
  'PatchNotFoundError',
  'InvalidArgumentError',
  'InvalidTransitionError',
  'DoneWithoutPromotedPatchError',
  'TaskAlreadyClaimedError',
  'InvalidStateError',
  'CommitNotFoundError',
  'ControlError',
]);

const TASKS = ['A', 'B', 'C', 'D', 'E'];
const OWNERS = ['primary', 'worker-1', 'worker-2'];
const KNOWN = ['c0ffee01', 'c0ffee02', 'c0ffee03'];

type Cmd =
  | { k: 'claim'; role: 'primary' | 'worker'; owner: number }
  | { k: 'race'; n: number }
  | { k: 'transition'; task: number; status: number; owner: number }
  | { k: 'queue'; task: number }
  | { k: 'promote'; patch: number; commit: number; known: boolean }
  | { k: 'discard'; patch: number }
  | { k: 'resolve'; task: number; decision: 'approve' | 'reject' | 'modify'; withCommit: boolean; commit: number }
  | { k: 'release'; owner: number }
  | { k: 'expire' };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ k: fc.constant('claim' as const), role: fc.constantFrom('primary' as const, 'worker' as const), owner: fc.nat(2) }),
  fc.record({ k: fc.constant('race' as const), n: fc.integer({ min: 2, max: 4 }) }),
  fc.record({ k: fc.constant('transition' as const), task: fc.nat(4), status: fc.nat(TASK_STATUSES.length - 1), owner: fc.nat(2) }),
  fc.record({ k: fc.constant('queue' as const), task: fc.nat(4) }),
  fc.record({ k: fc.constant('promote' as const), patch: fc.nat(9), commit: fc.nat(2), known: fc.boolean() }),
  fc.record({ k: fc.constant('discard' as const), patch: fc.nat(9) }),
  fc.record({
    k: fc.constant('resolve' as const),
    task: fc.nat(4),
    decision: fc.constantFrom('approve' as const, 'reject' as const, 'modify' as const),
    withCommit: fc.boolean(),
    commit: fc.nat(2),
  }),
  fc.record({ k: fc.constant('release' as const), owner: fc.nat(2) }),
  fc.constant({ k: 'expire' as const }),
);

interface World {
  readonly dir: string;
  readonly store: EventStore;
  readonly ctx: ControlContext;
  readonly patches: string[];
}

async function world(): Promise<World> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-lifecycle-'));
  const ralphDir = path.join(dir, '.ralph');
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, checkpointDebounceMs: 3_600_000 });
  const known = new Set(KNOWN);
  const ctx = controlContext(store, { ralphDir, projectDir: dir, git: { commitExists: async (h) => known.has(h) } });
  await decideAndAppend(ctx, () => ({
    events: TASKS.map((id, i) =>
      domainEvent('task.created', id, 'test', {
        title: `task ${id}`,
        source: 'ES:1',
        effort: i % 2 ? 'S' : 'M',
        deps: '-',
        wave: 0,
        provenance: 'spec',
      }),
    ),
    result: undefined,
  }));
  fs.mkdirSync(path.join(ralphDir, 'commits', 'pending'), { recursive: true });
  return { dir, store, ctx, patches: [] };
}

async function step(w: World, c: Cmd): Promise<string[] | undefined> {
  const { ctx } = w;
  switch (c.k) {
    case 'claim': {
      const t = await claimReadyTask(ctx, c.role, OWNERS[c.owner], [], ['S', 'M']);
      return t ? [t.task_id] : [];
    }
    case 'race': {
      const got = await Promise.all(
        Array.from({ length: c.n }, (_, i) => claimReadyTask(ctx, 'primary', `racer-${i}`, [], ['S', 'M']).catch(() => undefined)),
      );
      return got.filter((t) => t !== undefined).map((t) => t.task_id);
    }
    case 'transition':
      await transitionTask(ctx, {
        taskId: TASKS[c.task] as string,
        status: TASK_STATUSES[c.status] as string,
        actor: 'test',
        payload: { claimed_by: OWNERS[c.owner], reason: 'property' },
      });
      return undefined;
    case 'queue': {
      const file = path.join(ctx.ralphDir, 'commits', 'pending', `p${w.patches.length}.patch`);
      fs.writeFileSync(file, `diff --git a/src/x${w.patches.length}.js b/src/x${w.patches.length}.js\n`);
      w.patches.push(
        await queuePatch(ctx, { taskId: TASKS[w.patches.length % TASKS.length] as string, patchPath: file, createdBy: 'test' }),
      );
      return undefined;
    }
    case 'promote': {
      const id = w.patches[c.patch % Math.max(1, w.patches.length)];
      if (id === undefined) return undefined;
      await promotePatch(ctx, { patchId: id, commitHash: c.known ? (KNOWN[c.commit] as string) : 'deadbeef', actor: 'test' });
      return undefined;
    }
    case 'discard': {
      const id = w.patches[c.patch % Math.max(1, w.patches.length)];
      if (id !== undefined) await discardPatch(ctx, { patchId: id, reason: 'property', actor: 'test' });
      return undefined;
    }
    case 'resolve':
      await resolveDeferred(ctx, {
        taskId: TASKS[c.task] as string,
        decision: c.decision,
        actor: 'judge',
        rationale: 'property',
        ...(c.withCommit && c.decision === 'approve' ? { commitHash: KNOWN[c.commit] as string } : {}),
      });
      return undefined;
    case 'release':
      await releaseClaims(ctx, { owner: OWNERS[c.owner] as string, actor: 'test', reason: 'property' });
      return undefined;
    case 'expire':
      await expireStaleDeferrals(ctx, { threshold: 0 });
      return undefined;
  }
}

function checkInvariants(w: World, claimedNow: string[] | undefined, history: string): void {
  const db = w.store;
  // 1. done => a promoted patch whose commit exists (the fake branch knows KNOWN only).
  const done = db.all<{ task_id: string }>("SELECT task_id FROM task_view WHERE status = 'done'");
  for (const { task_id } of done) {
    const commits = db
      .all<{ commit_hash: string | null }>("SELECT commit_hash FROM patch_view WHERE task_id = ? AND status = 'promoted'", [task_id])
      .map((r) => r.commit_hash);
    assert.ok(
      commits.some((h) => h !== null && KNOWN.includes(h)),
      `invariant 1: ${task_id} done without a promoted patch on the branch\n${history}`,
    );
  }
  // 2. one owner: claimed tasks name exactly one; a racing batch got distinct tasks.
  for (const t of db.all<{ task_id: string; claimed_by: string | null }>(
    "SELECT task_id, claimed_by FROM task_view WHERE status = 'claimed'",
  ))
    assert.ok(t.claimed_by !== null && t.claimed_by !== '', `invariant 2: ${t.task_id} claimed by nobody\n${history}`);
  if (claimedNow !== undefined) {
    const dup = claimedNow.length !== new Set(claimedNow).size;
    if (dup) count('appliedTwice');
    assert.ok(!dup, `invariant 2: one claim batch handed out ${claimedNow.join(', ')}\n${history}`);
  }
}

/** Replays the task events: a claimed task is never claimed by another owner (the same owner again is a no-op). */
function checkClaimHistory(w: World, history: string): void {
  const owner = new Map<string, string | null>();
  for (const e of w.store.events({ entityType: 'task' })) {
    const to = e.event_type.startsWith('task.') ? e.event_type.slice(5) : '';
    const by = typeof e.payload['claimed_by'] === 'string' ? e.payload['claimed_by'] : e.actor;
    if (to === 'claimed') {
      const held = owner.get(e.entity_id);
      assert.ok(
        held === undefined || held === null || held === by,
        `invariant 2: ${e.entity_id} held by ${String(held)} claimed by ${by} at ${e.event_id}\n${history}`,
      );
      owner.set(e.entity_id, by);
    } else if ((TASK_STATUSES as readonly string[]).includes(to)) owner.set(e.entity_id, null);
  }
}

describe('faults/property: task and patch lifecycles under random command sequences', function () {
  this.timeout(300_000);
  it('given any sequence of commands, then invariants 1 and 2 hold after every step, refusals are domain errors, and views equal a rebuild', async () => {
    // What the sequences reached, so a generator that stopped reaching the states would show.
    const seen = { done: 0, deferred: 0, raced: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 5, maxLength: 40 }), async (cmds) => {
        const w = await world();
        const log: string[] = [];
        try {
          for (const c of cmds) {
            count('badInputs');
            let claimed: string[] | undefined;
            try {
              claimed = await step(w, c);
              if (c.k === 'race' && (claimed?.length ?? 0) > 1) seen.raced++;
              log.push(`${JSON.stringify(c)} -> ${claimed ? `[${claimed.join(',')}]` : 'ok'}`);
            } catch (e) {
              const name = (e as Error).name;
              log.push(`${JSON.stringify(c)} -> ${name}`);
              assert.ok(REFUSALS.has(name), `not a domain refusal: ${(e as Error).stack ?? String(e)}\n${log.join('\n')}`);
              seen.refused++;
            }
            checkInvariants(w, claimed, log.join('\n'));
            if (w.store.get("SELECT 1 AS x FROM task_view WHERE status = 'done'")) seen.done++;
            if (w.store.get("SELECT 1 AS x FROM task_view WHERE status = 'deferred'")) seen.deferred++;
          }
          checkClaimHistory(w, log.join('\n'));
          assert.deepEqual(await diffViewsAgainstRebuild(w.store, CONTROL_PROJECTIONS), [], log.join('\n'));
        } finally {
          await w.store.close();
          fs.rmSync(w.dir, { recursive: true, force: true });
        }
      }),
      { seed, numRuns: 60 },
    );
    assert.ok(seen.done > 0 && seen.deferred > 0 && seen.raced > 0 && seen.refused > 0, JSON.stringify(seen));
  });
});
