// Team mode's coordination cost and bound: a 50-task backlog on a real PostgreSQL store
// (a throwaway cluster), worked by 1, 3 and 6 workers (each its own store connection and
// replica, as on separate machines) and one promoter. The agents and gates are stand-ins
// of a stated latency (MODEL_MS, GATES_MS: sleeps), the promoter re-verifies each patch on
// the moving tip (VERIFY_MS) and records a real git commit per promotion; everything
// else is the real thing: lease claims, heartbeats, fenced queue-patch, promote-patch by
// compare-and-swap appends. Prints tasks per minute and where each task's time went.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS, promotePatch } from '../../src/control/index';
import { controlContext, type ControlContext } from '../../src/control/context';
import { cliGitPort } from '../../src/cli/gitPort';
import { domainEvent, toNewEvent } from '../../src/domain/events';
import { openPgStore } from '../../src/store/postgres/pgStore';
import { claimWithLease, expireLeases, leaseProjection, queuePatchFenced } from '../../src/team/leases';
import { LeaseHeartbeat } from '../../src/team/leaseHeartbeat';
import { startPgCluster } from '../../test/kit/pgCluster';

const TASKS = 50;
const MODEL_MS = Number(process.env['BENCH_MODEL_MS'] ?? 400);
const GATES_MS = Number(process.env['BENCH_GATES_MS'] ?? 200);
const VERIFY_MS = Number(process.env['BENCH_VERIFY_MS'] ?? 150);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Timing {
  model: number;
  gates: number;
  store: number;
  queueWait: number;
  promote: number;
}

async function run(url: string, repo: string, workers: number): Promise<void> {
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.email=b@example.invalid', '-c', 'user.name=B', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  const open = async (): Promise<ControlContext> =>
    controlContext(await openPgStore({ url, mode: 'writer', projections: [...CONTROL_PROJECTIONS, leaseProjection] }), {
      ralphDir: path.join(repo, '.ralph'),
      git: cliGitPort(repo),
    });
  const seedCtx = await open();
  await seedCtx.store.append(
    Array.from({ length: TASKS }, (_, i) =>
      toNewEvent(
        domainEvent('task.created', `W0-${String(i + 1).padStart(3, '0')}`, 'bench', {
          title: `task ${i + 1}`,
          source: 'ES:1',
          effort: 'S',
          deps: '-',
          wave: 0,
          provenance: 'spec',
        }),
      ),
    ),
  );
  await seedCtx.store.close();
  const queuedAt = new Map<string, number>();
  const timings = new Map<string, Timing>();
  const t0 = performance.now();
  let done = 0;
  const worker = async (name: string): Promise<void> => {
    const ctx = await open();
    for (;;) {
      let t = performance.now();
      await expireLeases(ctx, name);
      const lease = await claimWithLease(ctx, { owner: name, ttlMs: 30_000 });
      let store = performance.now() - t;
      if (!lease) break;
      const beat = new LeaseHeartbeat(ctx, lease, 30_000);
      t = performance.now();
      await sleep(MODEL_MS);
      const model = performance.now() - t;
      t = performance.now();
      await sleep(GATES_MS);
      const gates = performance.now() - t;
      t = performance.now();
      const patchId = await queuePatchFenced(ctx, beat.lease, { patchPath: `.ralph/${lease.taskId}.patch`, createdBy: name });
      store += performance.now() - t;
      await beat.stop();
      queuedAt.set(patchId, performance.now());
      timings.set(patchId, { model, gates, store, queueWait: 0, promote: 0 });
    }
    await ctx.store.close();
  };
  const promoter = async (): Promise<void> => {
    const ctx = await open();
    while (done < TASKS) {
      const next = ctx.store.get<{ patch_id: string }>("SELECT patch_id FROM patch_view WHERE status = 'queued' ORDER BY patch_id LIMIT 1");
      if (!next) {
        await new Promise<void>((resolve) => {
          const d = ctx.store.onDidAppend(() => {
            d.dispose();
            resolve();
          });
          setTimeout(() => {
            d.dispose();
            resolve();
          }, 200);
        });
        continue;
      }
      const started = performance.now();
      const timing = timings.get(next.patch_id);
      if (timing) timing.queueWait = started - (queuedAt.get(next.patch_id) ?? started);
      await sleep(VERIFY_MS); // re-verification on the current tip
      git('commit', '-q', '--allow-empty', '-m', next.patch_id);
      await promotePatch(ctx, { patchId: next.patch_id, commitHash: git('rev-parse', 'HEAD'), actor: 'promoter' });
      if (timing) timing.promote = performance.now() - started;
      done++;
    }
    await ctx.store.close();
  };
  await Promise.all([promoter(), ...Array.from({ length: workers }, (_, i) => worker(`worker-${i + 1}`))]);
  const minutes = (performance.now() - t0) / 60_000;
  const all = [...timings.values()];
  const avg = (k: keyof Timing): string => (all.reduce((s, x) => s + x[k], 0) / all.length).toFixed(0).padStart(6);
  console.log(
    `  ${String(workers).padStart(2)} worker(s): ${(TASKS / minutes).toFixed(1).padStart(6)} tasks/min (${(minutes * 60).toFixed(1)} s) | ` +
      `per task ms: model ${avg('model')} gates ${avg('gates')} store ${avg('store')} queue wait ${avg('queueWait')} promote ${avg('promote')}`,
  );
}

async function main(): Promise<void> {
  const cluster = await startPgCluster();
  if ('skip' in cluster) {
    console.log(`skipped: ${cluster.skip}`);
    return;
  }
  try {
    console.log(`team: ${TASKS} tasks, model ${MODEL_MS} ms, gates ${GATES_MS} ms, promoter verify ${VERIFY_MS} ms per patch`);
    for (const workers of [1, 3, 6]) {
      const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-team-'));
      execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
      execFileSync('git', ['-c', 'user.email=b@example.invalid', '-c', 'user.name=B', 'commit', '-q', '--allow-empty', '-m', 'init'], {
        cwd: repo,
      });
      await run(cluster.createDatabase(`bench_${workers}`), repo, workers);
      fs.rmSync(repo, { recursive: true, force: true });
    }
  } finally {
    cluster.destroy();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
