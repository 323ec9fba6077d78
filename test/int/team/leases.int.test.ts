// Claims as leases and one elected promoter, on a real PostgreSQL store shared by several
// processes: a worker killed -9 mid-task loses its lease when it runs out, the task goes back
// to pending with an event, another worker finishes it and the dead one's late patch is
// refused (fencing by lease id); a promoter killed -9 is replaced within a poll; two
// promoters racing on one patch promote it once.
import * as assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS, promotePatch } from '../../../src/control/index';
import { controlContext, type ControlContext } from '../../../src/control/context';
import { cliGitPort } from '../../../src/cli/gitPort';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import type { EventStore } from '../../../src/store/types';
import {
  LeaseLostError,
  claimWithLease,
  expireLeases,
  leaseProjection,
  queuePatchFenced,
  reclaimLease,
  type Lease,
} from '../../../src/team/leases';
import { LeaseHeartbeat } from '../../../src/team/leaseHeartbeat';
import { LoopClaims } from '../../../src/team/loopClaims';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { DEFAULT_RISK_PATTERNS } from '../../../src/domain/risk';
import { PromoterLock } from '../../../src/team/promoterLock';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { backlogEvents, killed, spawnTeamChild } from '../../kit/teamChildren';
import { git } from '../../kit/git';

describe('team: leases with fencing, one elected promoter (real PostgreSQL, several processes)', function () {
  let cluster: PgCluster | undefined;
  let n = 0;
  const stores: EventStore[] = [];
  const children: ChildProcess[] = [];

  async function machine(url: string, now?: () => Date, git?: string): Promise<ControlContext> {
    const store = await openPgStore({ url, mode: 'writer', projections: [...CONTROL_PROJECTIONS, leaseProjection] });
    stores.push(store);
    return controlContext(store, {
      ralphDir: path.join(git ?? '/nonexistent', '.ralph'),
      ...(now ? { now } : {}),
      ...(git ? { git: cliGitPort(git) } : {}),
    });
  }
  async function seed(ctx: ControlContext, ids: string[]): Promise<void> {
    await ctx.store.append(backlogEvents(ids));
  }
  const types = (ctx: ControlContext, id: string): string[] =>
    ctx.store.events({ entityType: 'task', entityId: id }).map((e) => e.event_type);

  before(async function () {
    cluster = await startPgClusterOrSkip(this);
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(killed));
    for (const s of stores.splice(0)) await s.close();
  });
  after(() => cluster?.destroy());

  it("given the loop's claims on a shared store, then each is a lease, renewed while claimed, and only nobody's claims are stale", async () => {
    const url = (cluster as PgCluster).createDatabase(`lease_${++n}`);
    const ctx = await machine(url);
    await seed(ctx, ['L-1', 'L-2', 'L-3', 'L-4', 'L-5']);
    const loop = new LoopClaims(ctx, { ttlMs: 300, host: 'here' });
    try {
      // The primary picks any effort; the claim's owner stays the agent's name, the lease names the process.
      const t = await loop.claimReady('primary', 'primary', []);
      assert.equal(t?.claimed_by, 'primary');
      assert.deepEqual(types(ctx, t?.task_id ?? ''), ['task.created', 'task.claimed', 'lease.granted']);
      await loop.claimNamed('L-5', 'primary');
      // Renewed by the one heartbeat while claimed (waited on the events, not slept on).
      while (!types(ctx, 'L-5').includes('lease.renewed')) await new Promise((r) => setTimeout(r, 50));
      assert.equal(loop.isStale('L-5'), false, 'our own live lease');
      // A claim without a lease (an older run, a tool): stale.
      await ctx.store.append([
        toNewEvent(domainEvent('task.claimed', 'L-2', 'w', { old_status: 'pending', new_status: 'claimed', claimed_by: 'w' })),
      ]);
      assert.equal(loop.isStale('L-2'), true);
      // A live lease of another machine is not; one of a gone process of this machine is.
      const other = await claimWithLease(ctx, { owner: 'worker-1@elsewhere:1', ttlMs: 60_000, host: 'elsewhere' });
      assert.ok(other);
      assert.equal(loop.isStale(other.taskId), false);
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
      const dead = await claimWithLease(ctx, { owner: `primary@here:${gone.stdout}`, ttlMs: 60_000, host: 'here' });
      assert.ok(dead);
      assert.equal(loop.isStale(dead.taskId), true);
    } finally {
      await loop.dispose();
    }
  });
  it("given the loop's lease lost, then taken over its queue-patch and release are refused; run out with nobody taking it, the task is leased again and the patch queued", async () => {
    const url = (cluster as PgCluster).createDatabase(`lease_${++n}`);
    let skew = 0;
    const clock = (): Date => new Date(Date.now() + skew);
    const a = await machine(url);
    const b = await machine(url, () => new Date(Date.now() + 120_000)); // its clock: every lease ran out
    await seed(a, ['W0-001', 'W0-002', 'W0-003']);
    const lines: string[] = [];
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-loop-fence-'));
    const control = new ControlAdapter({
      store: a.store,
      projectDir: project,
      ralphDir: path.join(project, '.ralph'),
      riskPatterns: DEFAULT_RISK_PATTERNS,
      leases: (ctx) => new LoopClaims({ ...ctx, now: clock }, { ttlMs: 60_000, host: 'here', log: (l) => lines.push(l) }),
    });
    const last = (id: string): { event_type: string; payload: Record<string, unknown> } =>
      a.store.events({ entityType: 'task', entityId: id }).at(-1) as { event_type: string; payload: Record<string, unknown> };
    const leaseOf = (id: string): string | undefined =>
      a.store.get<{ owner: string }>('SELECT owner FROM task_lease WHERE task_id = ?', [id])?.owner;
    try {
      // Taken over: another machine expired the loop's lease and claimed the task itself.
      assert.equal((await control.claimReadyTask('worker-1', 'worker', { exclude: [] }))?.task_id, 'W0-001');
      await b.store.refresh();
      assert.equal((await expireLeases(b, 'worker-b@elsewhere:1')).length, 1);
      assert.ok(await claimWithLease(b, { owner: 'worker-b@elsewhere:1', ttlMs: 600_000, taskId: 'W0-001' }));
      await a.store.refresh();
      await assert.rejects(control.queuePatch('W0-001', path.join(project, 'late.patch'), 'worker-1'), LeaseLostError);
      assert.equal(last('W0-001').event_type, 'lease.refused');
      assert.equal(last('W0-001').payload['what'], 'queue-patch');
      assert.match(String(last('W0-001').payload['reason']), /leased to worker-b@elsewhere:1/);
      assert.equal(control.patches('W0-001').length, 0, 'no patch queued');
      // The harness's clean-up after the refusal must not free the other machine's claim.
      await control.releaseTask('W0-001', 'worker-1', 'harness error');
      assert.equal(last('W0-001').event_type, 'lease.refused');
      assert.equal(last('W0-001').payload['what'], 'pending');
      assert.equal(control.task('W0-001')?.status, 'claimed');
      assert.equal(leaseOf('W0-001'), 'worker-b@elsewhere:1');

      // Run out, nobody took it: refused, then leased again in one step and the same patch queued
      // under the new lease (fencing still holds: the new lease is the task's live one).
      assert.equal((await control.claimReadyTask('worker-1', 'worker', { exclude: [] }))?.task_id, 'W0-002');
      skew = 120_000;
      const requeued = await control.queuePatch('W0-002', path.join(project, 'late.patch'), 'worker-1');
      assert.deepEqual(types(a, 'W0-002').slice(-7), [
        'lease.granted',
        'lease.refused',
        'lease.expired',
        'task.pending',
        'task.claimed',
        'lease.granted',
        'task.proposed',
      ]);
      const regranted = a.store.events({ entityType: 'task', entityId: 'W0-002' }).filter((e) => e.event_type === 'lease.granted');
      assert.equal(regranted[1]?.payload['reclaimed_from'], regranted[0]?.payload['lease_id']);
      assert.equal(regranted[1]?.payload['owner'], regranted[0]?.payload['owner']);
      assert.equal(control.task('W0-002')?.status, 'proposed');
      assert.deepEqual(
        a.store
          .events({ entityType: 'task', entityId: 'W0-002' })
          .filter((e) => e.event_type === 'task.claimed')
          .map((e) => e.payload['claimed_by']),
        ['worker-1', 'worker-1'],
        "claimed again as the loop's agent",
      );
      assert.deepEqual(
        control.patches('W0-002').map((p) => p.patch_id),
        [requeued],
      );
      assert.ok(lines.some((l) => /W0-002.*refused/.test(l)) && lines.some((l) => /W0-002.*leased again/.test(l)), lines.join('\n'));

      // Held: queued under the live lease, the lease ends with the claim.
      skew = 0;
      const t = await control.claimReadyTask('worker-1', 'worker', { exclude: ['W0-002'] });
      assert.equal(t?.task_id, 'W0-003');
      const patchId = await control.queuePatch('W0-003', path.join(project, 'ok.patch'), 'worker-1');
      assert.equal(control.task('W0-003')?.status, 'proposed');
      assert.equal(control.patches('W0-003')[0]?.patch_id, patchId);
      assert.equal(leaseOf('W0-003'), undefined);
    } finally {
      await control.dispose();
      fs.rmSync(project, { recursive: true, force: true });
    }
  });
  it('given a worker killed -9 mid-task, then its lease expires, the task returns to pending, another finishes it, the late patch is refused', async () => {
    const url = (cluster as PgCluster).createDatabase(`lease_${++n}`);
    const b = await machine(url);
    await seed(b, ['W0-001']);
    const child = spawnTeamChild(['lease', url, 'worker-a', '600']);
    children.push(child.proc);
    const dead = JSON.parse(await child.line) as Lease;
    assert.equal(dead.taskId, 'W0-001');
    // Its heartbeat keeps the lease alive past the first time to live.
    await b.store.refresh();
    const renewed = new Promise<void>((resolve) => {
      const d = b.store.onDidAppend((es) => {
        if (es.some((e) => e.event_type === 'lease.renewed')) {
          d.dispose();
          resolve();
        }
      });
    });
    await renewed;
    assert.deepEqual(await expireLeases(b, 'worker-b'), []);
    assert.equal(await claimWithLease(b, { owner: 'worker-b', ttlMs: 60_000 }), undefined, 'a leased task is not claimable');

    await killed(child.proc);
    // No sleep: expire on every new event or until the lease's own expiry has passed.
    let expired: Lease[] = [];
    while (expired.length === 0) {
      const left = Date.parse(b.store.get<{ expires_at: string }>('SELECT expires_at FROM task_lease')?.expires_at ?? '') - Date.now();
      if (left > 0) await new Promise((r) => setTimeout(r, left + 5));
      expired = await expireLeases(b, 'worker-b');
    }
    assert.equal(expired[0]?.leaseId, dead.leaseId);
    assert.equal(b.store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'W0-001'")?.status, 'pending');

    const mine = await claimWithLease(b, { owner: 'worker-b', ttlMs: 60_000 });
    assert.equal(mine?.taskId, 'W0-001');
    await assert.rejects(queuePatchFenced(b, dead, { patchPath: '.ralph/late.patch', createdBy: 'worker-a' }), (e: unknown) => {
      assert.ok(e instanceof LeaseLostError);
      assert.match(e.message, /leased to worker-b now/);
      return true;
    });
    const patchId = await queuePatchFenced(b, mine as Lease, { patchPath: '.ralph/ok.patch', createdBy: 'worker-b' });
    assert.match(patchId, /^patch_W0-001_/);
    // The story, from PostgreSQL: claimed (a) … renewed … expired, pending, claimed (b), refused (a), queued (b).
    const story = types(b, 'W0-001').filter((t) => t !== 'lease.renewed');
    assert.deepEqual(story, [
      'task.created',
      'task.claimed',
      'lease.granted',
      'lease.expired',
      'task.pending',
      'task.claimed',
      'lease.granted',
      'lease.refused',
      'task.proposed',
    ]);
  });

  it('given a heartbeat on a lease another process expired, then it leases the task again while nobody holds it, and aborts the work once another does', async () => {
    const url = (cluster as PgCluster).createDatabase(`lease_${++n}`);
    let skew = 0;
    const a = await machine(url);
    const b = await machine(url, () => new Date(Date.now() + skew));
    await seed(a, ['W0-001']);
    const lease = (await claimWithLease(a, { owner: 'worker-a', ttlMs: 900 })) as Lease;
    skew = 60_000; // b's clock says the lease ran out long ago
    await b.store.refresh();
    assert.equal((await expireLeases(b, 'worker-b')).length, 1);
    // Nobody took it: the heartbeat takes it again; the agent in flight goes on (not aborted).
    let beat: LeaseHeartbeat | undefined;
    const again = await new Promise<Lease>((resolve) => {
      beat = new LeaseHeartbeat(a, lease, 900, undefined, (_lost, l) => resolve(l));
    });
    const hb = beat as LeaseHeartbeat;
    assert.notEqual(again.leaseId, lease.leaseId);
    assert.equal(hb.signal.aborted, false);
    assert.equal(hb.lease.leaseId, again.leaseId);
    assert.deepEqual(types(a, 'W0-001').slice(-4), ['lease.expired', 'task.pending', 'task.claimed', 'lease.granted']);
    // The result in flight is fenced by the new lease: queued under it.
    const mid = await queuePatchFenced(a, hb.lease, { patchPath: '.ralph/mid.patch', createdBy: 'worker-a' });
    assert.match(mid, /^patch_W0-001_/);

    // Another worker takes a task over (its expiry and claim in one step): the heartbeat aborts the work.
    await seed(a, ['W0-002']);
    const second = (await claimWithLease(a, { owner: 'worker-a', ttlMs: 900 })) as Lease;
    const beat2 = new LeaseHeartbeat(a, second, 900);
    await b.store.refresh();
    const taken = await reclaimLease(b, { ...second, leaseId: 'lease_of_b', owner: 'worker-b', host: 'elsewhere' }, 600_000);
    assert.equal(taken?.owner, 'worker-b');
    await new Promise<void>((resolve) => beat2.signal.addEventListener('abort', () => resolve(), { once: true }));
    assert.ok(beat2.signal.reason instanceof LeaseLostError, String(beat2.signal.reason));
    assert.match(String(beat2.signal.reason), /leased to worker-b/);
    await beat2.stop();
    await hb.stop();
  });

  it('given the promoter killed -9, then a waiting one is elected within a poll; racing promoters promote a patch once', async () => {
    const url = (cluster as PgCluster).createDatabase(`promote_${++n}`);
    const first = spawnTeamChild(['promoter', url]);
    children.push(first.proc);
    assert.equal((JSON.parse(await first.line) as { elected: boolean }).elected, true);
    assert.equal(await PromoterLock.tryAcquire(url), undefined, 'one promoter at a time');
    const holder = await PromoterLock.holder(url);
    assert.equal(holder?.application, 'ralph promoter');
    const waiting = PromoterLock.waitUntilElected(url, new AbortController().signal, 100);
    const t0 = Date.now();
    await killed(first.proc);
    const lock = await waiting;
    const takeoverMs = Date.now() - t0;
    assert.ok(lock, 'elected after the holder died');
    console.log(`      promoter takeover after kill -9: ${takeoverMs} ms (poll 100 ms)`);
    await lock.release();

    // Two promoters (two stores) promote the same patch at once: the store takes it once.
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-team-git-'));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-q', '--allow-empty', '-m', 'W0-001');
    const hash = git(repo, 'rev-parse', 'HEAD');
    const p1 = await machine(url, undefined, repo);
    const p2 = await machine(url, undefined, repo);
    await seed(p1, ['W0-001']);
    const lease = (await claimWithLease(p1, { owner: 'worker-a', ttlMs: 60_000 })) as Lease;
    const patchId = await queuePatchFenced(p1, lease, { patchPath: '.ralph/x.patch', createdBy: 'worker-a' });
    await p2.store.refresh();
    const results = await Promise.allSettled([
      promotePatch(p1, { patchId, commitHash: hash }),
      promotePatch(p2, { patchId, commitHash: hash }),
    ]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    await p1.store.refresh();
    assert.equal(p1.store.events().filter((e) => e.event_type === 'patch.promoted').length, 1);
    fs.rmSync(repo, { recursive: true, force: true });
  });
});
