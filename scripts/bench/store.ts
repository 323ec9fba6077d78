// Benchmark of the sql.js event store: command latency at 1k / 10k / 100k events (apply
// only, and including the journal fsync), cold open of a 100k-event database in a fresh
// process (with and without V8's --liftoff-only), fsyncs per command and per burst, and
// file sizes. Prints numbers; never asserts timings.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeRecord } from '../../src/store/journal';
import { enableFastWasmStartup, loadSqlJs } from '../../src/store/sqlDb';
import { openStore } from '../../src/store/sqlJsStore';
import type { EventStore, NewEvent, Projection, SqlWriter, StoredEvent } from '../../src/store/types';

/** A task_view-like projection so each command does realistic projection work. */
const taskish: Projection = {
  name: 'bench_task',
  version: 1,
  tables: ['bench_task'],
  ddl: [
    "CREATE TABLE IF NOT EXISTS bench_task (task_id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'pending', version INTEGER NOT NULL DEFAULT 1, claimed_by TEXT)",
    'CREATE INDEX IF NOT EXISTS idx_bench_task_status ON bench_task(status)',
  ],
  apply(db: SqlWriter, e: StoredEvent): void {
    db.run(
      'INSERT INTO bench_task(task_id, status, claimed_by) VALUES (?, ?, ?) ON CONFLICT(task_id) DO UPDATE SET status = excluded.status, claimed_by = excluded.claimed_by, version = version + 1',
      [
        e.entity_id,
        String(e.payload['new_status'] ?? 'pending'),
        typeof e.payload['claimed_by'] === 'string' ? e.payload['claimed_by'] : null,
      ],
    );
  },
};

const STATUSES = ['pending', 'claimed', 'proposed', 'done'];

function event(i: number): NewEvent {
  const status = STATUSES[i % STATUSES.length] ?? 'pending';
  return {
    entity_type: 'task',
    entity_id: `T${String(i % 300).padStart(3, '0')}`,
    event_type: `task.${status}`,
    actor: 'bench',
    payload: { old_status: 'pending', new_status: status, claimed_by: 'primary', note: 'a typical transition payload' },
  };
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

const fmt = (ms: number): string => `${ms.toFixed(3)} ms`;

async function fill(store: EventStore, upTo: number): Promise<void> {
  let n = store.get<{ n: number }>('SELECT count(*) AS n FROM events')?.n ?? 0;
  while (n < upTo) {
    const k = Math.min(1000, upTo - n);
    const base = n;
    await store.append(Array.from({ length: k }, (_, j) => event(base + j)));
    n += k;
  }
}

/** A realistic command: read the task's row, decide one transition event. */
function command(i: number) {
  return (db: { get: EventStore['get'] }) => {
    const e = event(i);
    const row = db.get<{ status: string }>('SELECT status FROM bench_task WHERE task_id = ?', [e.entity_id]);
    return { events: [{ ...e, payload: { ...e.payload, old_status: row?.status ?? 'pending' } }], result: row?.status };
  };
}

async function latencyAt(store: EventStore, size: number, samples: number): Promise<void> {
  await fill(store, size);
  const applyOnly: number[] = [];
  const withFsync: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const p = store.execute(command(size + i)); // the synchronous part: decide + insert + project + commit
    const t1 = performance.now();
    await p;
    const t2 = performance.now();
    applyOnly.push(t1 - t0);
    withFsync.push(t2 - t0);
  }
  console.log(
    `execute @ ${String(size).padStart(6)} events: apply-only median ${fmt(pct(applyOnly, 50))} p95 ${fmt(pct(applyOnly, 95))} | ` +
      `with fsync median ${fmt(pct(withFsync, 50))} p95 ${fmt(pct(withFsync, 95))}  (${samples} commands)`,
  );
}

function runChild(flags: string[], args: string[]): string {
  const r = spawnSync(process.execPath, [...flags, '--import', 'tsx', __filename, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bench child ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout.trim().split('\n').pop() ?? '{}';
}

function coldOpen(dir: string, flags: string[], fast: boolean): { openMs: number; sqlJsMs: number; wallMs: number } {
  const opts = fast ? ['--fast'] : [];
  const t0 = performance.now();
  const open = JSON.parse(runChild(flags, ['--cold-open', dir, ...opts])) as { ms: number };
  const wallMs = performance.now() - t0;
  const init = JSON.parse(runChild(flags, ['--cold-open', dir, '--init-only', ...opts])) as { ms: number };
  return { openMs: open.ms, sqlJsMs: init.ms, wallMs };
}

/**
 * The open as a host makes it (sql.js loads inside it, while ralph.db is read), or with
 * `initOnly` sql.js's load alone, in a process of its own: timed inside an open, the load
 * would also count the work the open does while it compiles.
 */
async function coldOpenChild(dir: string, fast: boolean, initOnly: boolean): Promise<void> {
  if (fast) enableFastWasmStartup();
  const t0 = performance.now();
  if (initOnly) await loadSqlJs();
  else await openStore({ ralphDir: dir, mode: 'observer', projections: [taskish] });
  console.log(JSON.stringify({ ms: performance.now() - t0 }));
}

/** Apply-only latency on a copy of the 100k database, in a process with the given V8 flags. */
async function latencyChild(src: string): Promise<void> {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-lat-')), '.ralph');
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(src, 'ralph.db'), path.join(dir, 'ralph.db'));
  const store = await openStore({ ralphDir: dir, mode: 'writer', projections: [taskish] });
  const xs: number[] = [];
  for (let k = 0; k < 1300; k++) {
    const t0 = performance.now();
    const p = store.execute(command(k));
    if (k >= 300) xs.push(performance.now() - t0); // the first 300 warm up, as in the main run
    await p;
  }
  await store.close();
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  console.log(JSON.stringify({ median: pct(xs, 50), p95: pct(xs, 95) }));
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--cold-open');
  if (i >= 0) return coldOpenChild(process.argv[i + 1] ?? '', process.argv.includes('--fast'), process.argv.includes('--init-only'));
  const j = process.argv.indexOf('--latency');
  if (j >= 0) return latencyChild(process.argv[j + 1] ?? '');

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-store-'));
  const dir = path.join(root, '.ralph');
  console.log(`store bench in ${dir} (node ${process.version}, ${os.cpus().length} cpus)`);
  const store = await openStore({ ralphDir: dir, mode: 'writer', projections: [taskish] });

  // warm the JIT and wasm tiers a little so the 1k row is not all start-up
  for (let k = 0; k < 300; k++) store.execute(command(k)).catch(() => undefined);
  await store.append([event(0)]);
  console.log(
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} (numbers on a busy machine are noisy)`,
  );

  await latencyAt(store, 1_000, 500);
  await latencyAt(store, 10_000, 1_000);
  await latencyAt(store, 100_000, 1_000);

  // fsyncs: sequential commands, a burst of 1000 one-event commands, one 1000-event command
  let f0 = store.stats().fsyncs;
  for (let k = 0; k < 100; k++) await store.execute(command(k));
  const perCommand = (store.stats().fsyncs - f0) / 100;
  f0 = store.stats().fsyncs;
  let t0 = performance.now();
  await Promise.all(Array.from({ length: 1000 }, (_, k) => store.execute(command(k))));
  const burstMs = performance.now() - t0;
  const perBurst = store.stats().fsyncs - f0;
  f0 = store.stats().fsyncs;
  t0 = performance.now();
  await store.append(Array.from({ length: 1000 }, (_, k) => event(k)));
  const bigMs = performance.now() - t0;
  const perBig = store.stats().fsyncs - f0;
  console.log(`fsyncs per sequential command: ${perCommand.toFixed(2)}`);
  console.log(`fsyncs per burst of 1000 one-event commands (one tick): ${perBurst} (${fmt(burstMs)} for the burst)`);
  console.log(`fsyncs per single 1000-event command: ${perBig} (${fmt(bigMs)})`);

  const jBytes = store.stats().journalBytes;
  t0 = performance.now();
  await store.checkpoint();
  const cpMs = performance.now() - t0;
  const total = store.get<{ n: number }>('SELECT count(*) AS n FROM events')?.n ?? 0;
  console.log(
    `checkpoint at ${total} events: ${fmt(cpMs)} total, of which export (blocks the event loop) ${fmt(store.stats().lastExportMs)}; journal before it ${jBytes} bytes`,
  );
  const sample = store.events({ limit: 1 })[0];
  await store.close();
  if (sample) console.log(`journal record of a one-event command: ${encodeRecord([sample]).length} bytes`);
  const dbBytes = fs.statSync(path.join(dir, 'ralph.db')).size;
  console.log(
    `sizes at ${total} events: ralph.db ${(dbBytes / 1e6).toFixed(1)} MB, journal ${fs.statSync(path.join(dir, 'ralph.events.journal')).size} bytes after close`,
  );

  t0 = performance.now();
  const warm = await openStore({ ralphDir: dir, mode: 'observer', projections: [taskish] });
  console.log(`warm reopen (sql.js already loaded) at ${total} events: ${fmt(performance.now() - t0)}`);
  await warm.close();

  const lift = JSON.parse(runChild(['--liftoff-only'], ['--latency', dir])) as { median: number; p95: number };
  console.log(`execute @ ${total} events under --liftoff-only: apply-only median ${fmt(lift.median)} p95 ${fmt(lift.p95)}`);

  const variants: { label: string; flags: string[]; fast: boolean }[] = [
    { label: '(default V8 flags)', flags: [], fast: false },
    { label: 'node --liftoff-only', flags: ['--liftoff-only'], fast: false },
    { label: 'enableFastWasmStartup()', flags: [], fast: true },
  ];
  for (const v of variants) {
    const runs = Array.from({ length: 5 }, () => coldOpen(dir, v.flags, v.fast));
    const best = (k: 'openMs' | 'sqlJsMs' | 'wallMs'): number => Math.min(...runs.map((r) => r[k]));
    const med = (k: 'openMs'): number =>
      pct(
        runs.map((r) => r[k]),
        50,
      );
    console.log(
      `cold open, fresh process, ${v.label}, ${total} events: open best ${fmt(best('openMs'))} median ${fmt(med('openMs'))} ` +
        `(sql.js init ${fmt(best('sqlJsMs'))}); process wall ${fmt(best('wallMs'))} incl. node+tsx start (5 runs)`,
    );
  }
  fs.rmSync(root, { recursive: true, force: true });
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
