// A team-mode process for the tests to kill -9: `lease URL OWNER TTL_MS` claims a task with a
// lease and keeps it alive by heartbeat; `promoter URL` waits to be elected promoter. Each
// prints one JSON line when it holds what it came for, then runs until killed.
import { CONTROL_PROJECTIONS } from '../../../src/control/index';
import { controlContext } from '../../../src/control/context';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { LeaseHeartbeat, claimWithLease, leaseProjection } from '../../../src/team/leases';
import { PromoterLock } from '../../../src/team/promoterLock';

async function main(): Promise<void> {
  const [what, url, owner, ttl] = process.argv.slice(2);
  if (!url) throw new Error('usage: teamChild lease|promoter URL ...');
  if (what === 'lease') {
    const store = await openPgStore({ url, mode: 'writer', projections: [...CONTROL_PROJECTIONS, leaseProjection] });
    const ctx = controlContext(store, { ralphDir: '/nonexistent/.ralph' });
    const lease = await claimWithLease(ctx, { owner: owner ?? 'child', ttlMs: Number(ttl ?? 1000), host: 'child-host' });
    if (!lease) throw new Error('nothing to claim');
    new LeaseHeartbeat(ctx, lease, Number(ttl ?? 1000));
    process.stdout.write(`${JSON.stringify(lease)}\n`);
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
