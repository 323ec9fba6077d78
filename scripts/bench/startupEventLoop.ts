// `npm run bench -- startup` (with startup.ts): how long the store blocks the event loop of
// the process that writes it, as the extension host does when it runs the loop, on a
// project with 100k events. A fresh Node process (the extension host's runtime, V8's
// default flags: no --liftoff-only) opens the database as the writer and, for a while, does
// what a loop run does: bursts of events every few tens of milliseconds, reads of the task
// view between them (the trees), and the store's own debounced checkpoints (ralph.db
// exported and written atomically, the journal trimmed). perf_hooks.monitorEventLoopDelay
// records the delays; printed: their percentiles, the checkpoints and how long each blocked.
// Run once per checkpoint mode: 'never' (sql.js's export and the checksum on the writer's
// thread) and 'auto' (the extension host's: at this size, in the checkpoint replica's worker
// thread, src/store/checkpointReplica.ts).
// Environment: RALPH_BENCH_EVENTS (default 100000), RALPH_BENCH_RUN_MS (default 30000),
// RALPH_BENCH_CHECKPOINT_MODES (default never,auto), RALPH_BENCH_CPU_PROF (a folder: profile each run).
// Prints numbers; never asserts timings.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CONTROL_PROJECTIONS } from '../../src/control/views';
import { openStore } from '../../src/store/sqlJsStore';
import type { EventStore, NewEvent } from '../../src/store/types';

const EVENTS = Number(process.env['RALPH_BENCH_EVENTS'] ?? 100_000);
const RUN_MS = Number(process.env['RALPH_BENCH_RUN_MS'] ?? 30_000);
const STATUSES = ['pending', 'claimed', 'proposed', 'done'];
const MODES = (process.env['RALPH_BENCH_CHECKPOINT_MODES'] ?? 'never,auto').split(',') as ('never' | 'auto' | 'always')[];

/** Events shaped like a loop's: task transitions with their payloads, and run ticks. */
function event(i: number): NewEvent {
  if (i % 5 === 4) return { entity_type: 'run', entity_id: 'bench', event_type: 'run.tick', actor: 'primary', payload: { i } };
  const task = `W${Math.floor((i % 300) / 50)}-${String((i % 50) + 1).padStart(3, '0')}`;
  const status = STATUSES[i % STATUSES.length] ?? 'pending';
  return {
    entity_type: 'task',
    entity_id: task,
    event_type: `task.${status}`,
    actor: 'primary',
    payload: { old_status: 'pending', new_status: status, claimed_by: 'primary', note: 'a typical transition payload' },
  };
}

async function fill(ralphDir: string): Promise<void> {
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
  for (let n = 0; n < EVENTS; n += 1000) await store.append(Array.from({ length: Math.min(1000, EVENTS - n) }, (_, j) => event(n + j)));
  await store.close();
}

const pct = (h: ReturnType<typeof monitorEventLoopDelay>, p: number): string => (h.percentile(p) / 1e6).toFixed(1);

/** The measured process: one writer session doing a loop's work for RUN_MS. */
async function child(ralphDir: string, checkpointWorker: 'never' | 'auto' | 'always'): Promise<void> {
  const tOpen = performance.now();
  const store: EventStore = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, checkpointWorker });
  const openMs = performance.now() - tOpen;
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const started = performance.now();
  let appended = 0;
  let reads = 0;
  let i = EVENTS;
  while (performance.now() - started < RUN_MS) {
    const burst = 1 + (i % 5);
    await store.append(Array.from({ length: burst }, (_, j) => event(i + j)));
    i += burst;
    appended += burst;
    store.all('SELECT * FROM task_view ORDER BY wave, task_id');
    reads++;
    await new Promise((r) => setTimeout(r, 40));
  }
  h.disable();
  const stats = store.stats();
  const tClose = performance.now();
  await store.close();
  const closeMs = performance.now() - tClose;
  console.log(
    JSON.stringify({
      openMs,
      closeMs,
      appended,
      reads,
      p50: pct(h, 50),
      p90: pct(h, 90),
      p99: pct(h, 99),
      max: (h.max / 1e6).toFixed(1),
      stats,
    }),
  );
}

async function main(): Promise<void> {
  const k = process.argv.indexOf('--child');
  if (k >= 0) return child(process.argv[k + 1] ?? '', (process.argv[k + 2] ?? 'auto') as 'never' | 'auto' | 'always');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-eventloop-'));
  const ralphDir = path.join(root, '.ralph');
  try {
    const t0 = performance.now();
    await fill(ralphDir);
    const size = fs.statSync(path.join(ralphDir, 'ralph.db')).size;
    console.log(
      `\nEvent loop of the writing process at ${EVENTS} events (ralph.db ${(size / 1e6).toFixed(1)} MB, built in ${((performance.now() - t0) / 1000).toFixed(0)} s); ` +
        `load average ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')}`,
    );
    for (const mode of MODES) {
      // RALPH_BENCH_CPU_PROF=<dir>: a V8 CPU profile of each measured process, to see what still runs on its main thread.
      const prof = process.env['RALPH_BENCH_CPU_PROF'];
      const flags = prof ? ['--cpu-prof', '--cpu-prof-dir', prof, '--cpu-prof-name', `eventloop-${mode}.cpuprofile`] : [];
      const r = spawnSync(process.execPath, [...flags, '--import', 'tsx', __filename, '--child', ralphDir, mode], { encoding: 'utf8' });
      if (prof) console.log(`  cpu profile: ${path.join(prof, `eventloop-${mode}.cpuprofile`)}`);
      if (r.status !== 0) throw new Error(`bench child failed: ${r.stderr}`);
      const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
        openMs: number;
        closeMs: number;
        appended: number;
        reads: number;
        p50: string;
        p90: string;
        p99: string;
        max: string;
        stats: Record<string, unknown>;
      };
      console.log(
        `checkpoints '${mode}': ${(RUN_MS / 1000).toFixed(0)} s of loop work: ${out.appended} events appended in bursts, ${out.reads} task-view reads; ` +
          `writer open ${out.openMs.toFixed(0)} ms, close ${out.closeMs.toFixed(0)} ms; load average ${os.loadavg()[0]?.toFixed(1)}`,
      );
      console.log(
        `  event-loop delay (monitorEventLoopDelay): p50 ${out.p50} ms, p90 ${out.p90} ms, p99 ${out.p99} ms (goal <= 50), max ${out.max} ms`,
      );
      console.log(`  store: ${JSON.stringify(out.stats)}`);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
