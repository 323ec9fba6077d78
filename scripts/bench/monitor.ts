// Monitor snapshot build time over a real sql.js database with the reference schema, at
// 10k and 100k events (plus a snapshot diff). Each figure is the median of 100 builds after
// 30 untimed ones: the first builds of a process run mostly unoptimized code, and with 15
// samples the 100k median of runs on one 2-core machine ranged 66-105 ms (68-86 with 100).
// Prints numbers; asserts nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMonitorSnapshot, createSnapshotCache } from '../../src/monitor/snapshot';
import { diffSnapshot } from '../../src/monitor/snapshotDiff';
import { seedDemoProject } from '../../test/unit/monitor/demoData';
import { insertEvents, openSqlJs, readerOf } from '../../test/unit/monitor/sqlFixture';

const NOW = new Date('2026-11-29T15:40:00.000Z');
const WARM_UP = 30;
const SAMPLES = 100;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

async function run(targetEvents: number): Promise<void> {
  const db = await openSqlJs();
  const dir = mkdtempSync(join(tmpdir(), 'ralph-bench-mon-'));
  try {
    // About a sixth of the events are task lifecycle events, the rest run heartbeats.
    const tasks = Math.round(targetEvents / 24);
    const probe = seedDemoProject(db, dir, NOW, { tasks, fillerEvents: 0, days: 14 });
    const filler = Math.max(0, targetEvents - probe.events);
    db.close();
    const db2 = await openSqlJs();
    rmSync(dir, { recursive: true, force: true });
    const seeded = seedDemoProject(db2, dir, NOW, { tasks, fillerEvents: filler, days: 14 });
    const reader = readerOf(db2);
    const times: number[] = [];
    let snap = buildMonitorSnapshot(reader, seeded.logsDir, NOW);
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      const t0 = performance.now();
      snap = buildMonitorSnapshot(reader, seeded.logsDir, NOW);
      if (i >= WARM_UP) times.push(performance.now() - t0);
    }
    // What the panel does on each batched update: a cached build after a few appends, and a diff.
    const cache = createSnapshotCache();
    buildMonitorSnapshot(reader, seeded.logsDir, NOW, { cache });
    const warm: number[] = [];
    for (let i = 0; i < WARM_UP + SAMPLES; i++) {
      const at = new Date(NOW.getTime() + (i + 1) * 1000);
      insertEvents(
        db2,
        Array.from({ length: 10 }, (_, k) => ({ ts: at.toISOString(), entity_id: `W9-${i}${k}`, event_type: 'task.migrated' })),
      );
      const t0 = performance.now();
      const next = buildMonitorSnapshot(reader, seeded.logsDir, at, { cache });
      diffSnapshot(snap, next);
      if (i >= WARM_UP) warm.push(performance.now() - t0);
      snap = next;
    }
    const bytes = Buffer.byteLength(JSON.stringify(snap));
    console.log(
      `monitor snapshot  events=${seeded.events.toString().padStart(6)}  tasks=${String(tasks).padStart(5)}  ` +
        `full build median=${median(times).toFixed(1)} ms  cached build+diff after 10 appends median=${median(warm).toFixed(1)} ms  json=${(bytes / 1024).toFixed(1)} KiB`,
    );
    db2.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  // Other processes on the machine inflate these times; print the load next to them.
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} on ${cpus().length} cores`,
  );
  for (const n of [10_000, 100_000]) await run(n);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
