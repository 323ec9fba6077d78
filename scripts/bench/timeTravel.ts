// `npm run bench -- timeTravel`: how long `status --at` takes to show the project as it was
// halfway through its log, at 10k and 100k events (a full replay into a scratch database
// through the control projections), and how long the monitor's time slider takes per move
// (a replay cursor that folds forward, undoes backward and starts long moves back from its
// snapshots, then the monitor snapshot over it): the background prefold, then per-move p50
// and p99 over the first move, a drag back by small steps, jumps back and forward across the
// log and moves anywhere; and the cursor alone, its first move folding from event 0. RALPH_BENCH_TT_SIZES
// overrides the sizes (comma list). Prints numbers; never asserts timings.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { controlContext, CONTROL_PROJECTIONS } from '../../src/control';
import { ReplayCursor, statusFactsAt } from '../../src/control/timeTravel';
import { MonitorTimeline } from '../../src/monitor/timeline';
import { openStore } from '../../src/store/sqlJsStore';
import type { NewEvent } from '../../src/store/types';

const SIZES = (process.env['RALPH_BENCH_TT_SIZES'] ?? '10000,100000').split(',').map(Number);
const FLOW = ['claimed', 'proposed', 'done'] as const;

/** A task's life: created, then claimed, proposed, done; every fifth event a run tick. */
function event(i: number): NewEvent {
  if (i % 5 === 4) return { entity_type: 'run', entity_id: 'bench', event_type: 'run.tick', actor: 'primary', payload: { i } };
  const n = Math.floor(i / 5);
  const task = `W${n % 7}-${String(Math.floor(n / 4)).padStart(5, '0')}`;
  const step = (i % 5) % 4;
  if (step === 0)
    return {
      entity_type: 'task',
      entity_id: task,
      event_type: 'task.created',
      actor: 'control_plane',
      payload: { title: task, source: '-', effort: 'S', deps: '-', wave: n % 7, provenance: 'spec' },
    };
  const to = FLOW[step - 1] ?? 'done';
  const from = step === 1 ? 'pending' : (FLOW[step - 2] ?? 'pending');
  return {
    entity_type: 'task',
    entity_id: task,
    event_type: `task.${to}`,
    actor: 'primary',
    payload: { old_status: from, new_status: to },
  };
}

async function main(): Promise<void> {
  console.log(`\nstatus --at (time travel), load average ${os.loadavg()[0]?.toFixed(1)}`);
  for (const size of SIZES) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-tt-'));
    const ralphDir = path.join(root, '.ralph');
    try {
      const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
      for (let n = 0; n < size; n += 1000) await store.append(Array.from({ length: Math.min(1000, size - n) }, (_, j) => event(n + j)));
      const mid = store.get<{ id: string }>('SELECT event_id AS id FROM events ORDER BY event_id LIMIT 1 OFFSET ?', [Math.floor(size / 2)]);
      const ctx = controlContext(store, { ralphDir });
      const times: number[] = [];
      for (let k = 0; k < 5; k++) {
        const t0 = performance.now();
        await statusFactsAt(ctx, { kind: 'event', eventId: mid?.id ?? '' });
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      console.log(
        `${size} events, moment at the half: median ${times[2]?.toFixed(0)} ms, best ${times[0]?.toFixed(0)} ms (5 runs; goal 100 ms)`,
      );
      // The replay cursor alone (the fold, the undo log and the snapshots), without the monitor snapshot over it.
      const cursor = await ReplayCursor.open(store);
      const fold = (index: number): number => {
        const t0 = performance.now();
        cursor.moveTo(index);
        return performance.now() - t0;
      };
      const cFirst = fold(size);
      const cDrag: number[] = [];
      for (let k = 1; k <= 10; k++) cDrag.push(fold(size - k * Math.floor(size / 200)));
      const cJump = fold(Math.floor(size / 3));
      const cForward = fold(Math.floor(size / 3) + 50);
      const cBack = fold(Math.floor(size / 10));
      console.log(
        `${size} events, replay cursor alone: first move ${cFirst.toFixed(0)} ms; drag back median ${([...cDrag].sort((a, b) => a - b)[5] ?? NaN).toFixed(0)} ms, ` +
          `worst ${Math.max(...cDrag).toFixed(0)} ms; jump to a third ${cJump.toFixed(0)} ms; 50 forward ${cForward.toFixed(0)} ms; ` +
          `jump to a tenth ${cBack.toFixed(0)} ms (${cursor.restores} moves from a snapshot)`,
      );
      cursor.close();
      // The slider as the monitor runs it: the prefold walks the log in the background once the
      // page shows, then every move (the first included) starts from the nearest snapshot.
      const timeline = new MonitorTimeline({ source: store, logsDir: path.join(ralphDir, 'logs') });
      const tPrefold = performance.now();
      await timeline.prefold();
      const prefoldMs = performance.now() - tPrefold;
      const ms = async (index: number): Promise<number> => {
        const t0 = performance.now();
        await timeline.snapshotAt(index);
        return performance.now() - t0;
      };
      const moves: number[] = [];
      const first = await ms(Math.floor(size * 0.37));
      moves.push(first);
      const drag: number[] = [];
      for (let k = 1; k <= 10; k++) drag.push(await ms(Math.floor(size * 0.37) - k * Math.floor(size / 200)));
      moves.push(...drag);
      const jump = await ms(Math.floor(size / 3));
      const forward = await ms(Math.floor(size / 3) + 50);
      const far = await ms(Math.floor(size * 0.9));
      moves.push(jump, forward, far);
      // Then moves anywhere (a fixed sequence: the same positions on every run).
      let seed = 7;
      for (let k = 0; k < 20; k++) {
        seed = (seed * 48271) % 2147483647;
        moves.push(await ms(1 + (seed % size)));
      }
      const sorted = [...moves].sort((a, b) => a - b);
      const q = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
      console.log(
        `${size} events, slider: background prefold ${prefoldMs.toFixed(0)} ms (in slices of a few ms); ${moves.length} moves: ` +
          `first ${first.toFixed(0)} ms, p50 ${q(0.5).toFixed(0)} ms, p99 ${q(0.99).toFixed(0)} ms, worst ${sorted.at(-1)?.toFixed(0)} ms ` +
          `(drag back in 0.5 % steps median ${([...drag].sort((a, b) => a - b)[5] ?? NaN).toFixed(0)} ms; jump to a third ${jump.toFixed(0)} ms; ` +
          `50 forward ${forward.toFixed(0)} ms; forward to 90 % ${far.toFixed(0)} ms; ${await timeline.restores()} moves from a snapshot); goal 100 ms per move`,
      );
      timeline.dispose();
      await store.close();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
