// A team-mode process for the tests to kill -9: `lease URL OWNER TTL_MS` claims a task with a
// lease and keeps it alive by heartbeat; `pushed URL OWNER TTL_MS CLONE` does that, then
// commits a change in CLONE and pushes it as the patch's ref — a worker in the window
// between its push and its store record; `deferred URL OWNER TTL_MS` claims a task, queues a
// patch for it under its lease and defers it as a promoter would (a tier-2 change waiting for
// a human); `promoter URL` waits to be elected promoter. Each
// prints one JSON line when it holds what it came for, then runs until killed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newPatchId } from '../../../src/domain/patch';
import { pushPatchRef } from '../../../src/team/patchRefs';
import { CONTROL_PROJECTIONS } from '../../../src/control/index';
import { controlContext } from '../../../src/control/context';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { claimWithLease, leaseProjection, queuePatchFenced } from '../../../src/team/leases';
import { LeaseHeartbeat } from '../../../src/team/leaseHeartbeat';
import { transitionTask } from '../../../src/control/tasks';
import { PromoterLock } from '../../../src/team/promoterLock';
import { git } from '../../kit/git';

async function main(): Promise<void> {
  const [what, url, owner, ttl] = process.argv.slice(2);
  if (!url) throw new Error('usage: teamChild lease|promoter URL ...');
  if (what === 'deferred') {
    const store = await openPgStore({ url, mode: 'writer', projections: [...CONTROL_PROJECTIONS, leaseProjection] });
    const ctx = controlContext(store, { ralphDir: '/nonexistent/.ralph' });
    const lease = await claimWithLease(ctx, { owner: owner ?? 'child', ttlMs: Number(ttl ?? 1000), host: 'child-host' });
    if (!lease) throw new Error('nothing to claim');
    const patchId = await queuePatchFenced(ctx, lease, { patchPath: '/nonexistent/p.patch', createdBy: lease.owner });
    await transitionTask(ctx, {
      taskId: lease.taskId,
      status: 'deferred',
      actor: 'promoter',
      payload: { reason: 'risk tier 2', risk_tier: 2, patch_id: patchId },
    });
    process.stdout.write(`${JSON.stringify({ ...lease, patchId })}\n`);
  } else if (what === 'lease' || what === 'pushed') {
    const store = await openPgStore({ url, mode: 'writer', projections: [...CONTROL_PROJECTIONS, leaseProjection] });
    const ctx = controlContext(store, { ralphDir: '/nonexistent/.ralph' });
    const lease = await claimWithLease(ctx, { owner: owner ?? 'child', ttlMs: Number(ttl ?? 1000), host: 'child-host' });
    if (!lease) throw new Error('nothing to claim');
    new LeaseHeartbeat(ctx, lease, Number(ttl ?? 1000));
    const clone = process.argv[6];
    if (what === 'pushed' && clone !== undefined) {
      writeFileSync(join(clone, 'src', 'f1.js'), 'module.exports = () => "from the dead worker";\n');
      git(clone, 'add', 'src/f1.js');
      git(
        clone,
        '-c',
        'user.name=Doomed',
        '-c',
        'user.email=doomed@example.com',
        'commit',
        '-q',
        '-m',
        `ralph(${lease.taskId}): never recorded`,
      );
      const sha = git(clone, 'rev-parse', 'HEAD');
      const patchId = newPatchId(lease.taskId, new Date(), () => false);
      const pushed = await pushPatchRef(clone, 'origin', patchId, sha);
      if (pushed.kind !== 'pushed') throw new Error(`push refused: ${pushed.detail}`);
      process.stdout.write(`${JSON.stringify({ ...lease, patchId, sha })}\n`);
    } else process.stdout.write(`${JSON.stringify(lease)}\n`);
  } else {
    const lock = await PromoterLock.waitUntilElected(url, new AbortController().signal, 100);
    process.stdout.write(`${JSON.stringify({ elected: lock !== undefined, pid: process.pid })}\n`);
  }
  setInterval(() => undefined, 60_000);
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exit(1);
});
