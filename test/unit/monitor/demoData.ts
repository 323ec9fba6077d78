// A believable Ralph project for the monitor's browser test, screenshots and benchmark:
// tasks moving through their lifecycle over a few days, patches, a judge verdict, deferred
// items, metrics lines for two agents, STATE.json and pending patch files. Deterministic.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'sql.js';
import { REFERENCE_DDL, insertEvents } from './sqlFixture';
import type { EventSeed } from './sqlFixture';
import { seededRandom } from '../../kit/random';

const TITLES = [
  'Project scaffold and CI',
  'Config loader with schema',
  'SQLite event store',
  'Task projection',
  'Patch projection',
  'Risk classifier globs',
  'Policy engine',
  'Proposal processor',
  'Deferred expiry',
  'STATE.json renderer',
  'BACKLOG.md renderer',
  'Worker worktree setup',
  'Git plumbing merge',
  'Primary state machine',
  'Adaptive sleep',
  'Metrics extraction',
  'Judge invocation',
  'Auth middleware',
  'Session tokens',
  'Rate limiter',
  'OpenAPI schema',
  'Search endpoint',
  'Pagination helpers',
  'Error envelope',
  'Audit log export',
  'Password reset flow',
  'Email templates',
  'Background jobs',
  'Retry with backoff',
  'Feature flags',
];

export interface DemoOptions {
  readonly tasks?: number;
  /** Extra `run.heartbeat` events to reach a total for benchmarks. */
  readonly fillerEvents?: number;
  readonly days?: number;
}

export interface DemoProject {
  readonly logsDir: string;
  readonly events: number;
}

export function seedDemoProject(db: Database, ralphDir: string, now: Date, o: DemoOptions = {}): DemoProject {
  const rand = seededRandom(42);
  const nTasks = o.tasks ?? 30;
  const days = o.days ?? 3;
  const end = now.getTime();
  const start = end - days * 86_400_000;
  const iso = (ms: number): string => new Date(ms).toISOString();
  db.exec(REFERENCE_DDL);
  const events: EventSeed[] = [];
  const taskRows: unknown[][] = [];
  const patchRows: unknown[][] = [];
  const ids: string[] = [];
  for (let i = 0; i < nTasks; i++) {
    const wave = Math.min(3, Math.floor((i / nTasks) * 4));
    const id = `W${wave}-${String(i + 1).padStart(3, '0')}`;
    ids.push(id);
    events.push({ ts: iso(start + i * 1000), entity_id: id, event_type: 'task.migrated', payload: { status: 'pending', wave } });
  }
  // Work through the tasks in order; the tail stays pending.
  const work = Math.floor(nTasks * 0.72);
  const span = end - start - 4_200_000;
  const deferredIdx = new Set([Math.floor(work * 0.55), Math.floor(work * 0.8), work - 4]);
  let commits = 0;
  for (let i = 0; i < nTasks; i++) {
    const id = ids[i] ?? '';
    const wave = Math.min(3, Math.floor((i / nTasks) * 4));
    const title = TITLES[i % TITLES.length] ?? id;
    const source = `specs/${['core', 'api', 'auth', 'ops'][wave] ?? 'core'}.md`;
    const effort = ['S', 'S', 'M', 'L'][Math.floor(rand() * 4)] ?? 'S';
    let status = 'pending';
    let patchId: string | null = null;
    let deferredAt: string | null = null;
    let reason: string | null = null;
    let tier = Math.floor(rand() * 2);
    if (i < work) {
      // The last two are in flight: claimed minutes ago.
      const t0 =
        i === work - 1 ? end - 4 * 60_000 : i === work - 2 ? end - 38 * 60_000 : start + 3_600_000 + (span * i) / work + rand() * 300_000;
      const actor = i % 3 === 2 ? 'worker-b' : 'primary';
      events.push({
        ts: iso(t0),
        entity_id: id,
        event_type: 'task.claimed',
        actor,
        payload: { old_status: 'pending', new_status: 'claimed', claimed_by: actor },
      });
      patchId = `patch_${id}_${Math.floor(t0 / 1000)}`;
      const t1 = t0 + 600_000 + rand() * 1_800_000;
      if (t1 < end && i < work - 1) {
        events.push({
          ts: iso(t1),
          entity_id: id,
          event_type: 'task.proposed',
          actor,
          payload: { old_status: 'claimed', new_status: 'proposed', patch_id: patchId },
        });
        events.push({ ts: iso(t1), entity_type: 'patch', entity_id: patchId, event_type: 'patch.queued', actor });
      }
      const t2 = Math.min(t1 + 120_000 + rand() * 600_000, end - 60_000);
      if (deferredIdx.has(i)) {
        tier = 2;
        status = 'deferred';
        deferredAt = iso(t2);
        reason = i % 2 === 0 ? 'tier 2: touches auth/' : 'tier 2: migrations/ changed';
        events.push({
          ts: deferredAt,
          entity_id: id,
          event_type: 'task.deferred',
          payload: { old_status: 'proposed', new_status: 'deferred', reason },
        });
        patchRows.push([patchId, id, 'queued']);
      } else if (i === work - 5) {
        status = 'blocked';
        events.push({
          ts: iso(t2),
          entity_id: id,
          event_type: 'task.blocked',
          payload: { old_status: 'proposed', new_status: 'blocked', reason: 'gate failed 3 times: npm test' },
        });
        patchRows.push([patchId, id, 'discarded']);
      } else if (i < work - 2 && t2 < end) {
        status = 'done';
        commits++;
        const hash =
          Math.floor(rand() * 0xffffffff)
            .toString(16)
            .padStart(8, '0') + 'cafe';
        events.push({
          ts: iso(t2),
          entity_type: 'patch',
          entity_id: patchId,
          event_type: 'patch.promoted',
          payload: { commit_hash: hash },
        });
        events.push({
          ts: iso(t2),
          entity_id: id,
          event_type: 'task.done',
          payload: { old_status: 'proposed', new_status: 'done', patch_id: patchId },
        });
        patchRows.push([patchId, id, 'promoted']);
      } else {
        const proposed = t1 < end && i < work - 1;
        status = proposed ? 'proposed' : 'claimed';
        if (proposed) patchRows.push([patchId, id, 'queued']);
        else patchId = null;
      }
    } else if (i === nTasks - 1) {
      status = 'dropped';
      events.push({
        ts: iso(end - 7_200_000),
        entity_id: id,
        event_type: 'task.dropped',
        payload: { old_status: 'pending', new_status: 'dropped', reason: 'superseded by W2-019' },
      });
    }
    taskRows.push([id, status, title, source, effort, wave, tier, patchId, reason, deferredAt]);
  }
  const judged = [...deferredIdx].map((i) => ids[i]).filter((x): x is string => !!x)[0];
  if (judged) {
    events.push({
      ts: iso(end - 900_000),
      entity_id: judged,
      event_type: 'judge.verdict',
      actor: 'judge',
      payload: { verdict: 'approve', rationale: 'narrow change, tests cover the new branch' },
    });
  }
  for (let k = 0; k < (o.fillerEvents ?? 0); k++) {
    events.push({
      ts: iso(start + ((end - start) * k) / (o.fillerEvents ?? 1)),
      entity_type: 'run',
      entity_id: 'run_demo',
      event_type: 'run.heartbeat',
      actor: 'control_plane',
    });
  }
  events.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  insertEvents(db, events);
  const ts = db.prepare(
    'INSERT INTO task_view (task_id, status, title, source, effort, wave, risk_tier, patch_id, deferred_reason, deferred_at) VALUES (?,?,?,?,?,?,?,?,?,?)',
  );
  for (const r of taskRows) ts.run(r as never);
  ts.free();
  const ps = db.prepare('INSERT INTO patch_view (patch_id, task_id, status) VALUES (?,?,?)');
  for (const r of patchRows) ps.run(r as never);
  ps.free();

  // Metrics: the primary cycles through its phases, the worker runs full cycles.
  const logsDir = join(ralphDir, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const byFile = new Map<string, string[]>();
  const cycle = ['assess', 'plan', 'implement', 'implement', 'verify', 'commit'];
  const typical: Record<string, number> = { assess: 20, plan: 45, implement: 140, verify: 70, commit: 25, reflect: 60, evolve_goals: 90 };
  let iter = 0;
  for (let t = end - 30 * 3_600_000; t < end; t += 240_000 + rand() * 420_000) {
    const agent = rand() < 0.7 ? 'A' : 'B';
    const phase = agent === 'A' ? (cycle[iter % cycle.length] ?? 'assess') : 'implement';
    const next = agent === 'A' ? (cycle[(iter + 1) % cycle.length] ?? 'assess') : 'verify';
    if (agent === 'A') iter++;
    const dur = Math.round((typical[phase] ?? 30) * (0.5 + rand()));
    const fail = rand() < 0.06;
    const line = {
      ts: new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      agent,
      iter,
      phase_from: phase,
      phase_to: fail ? 'reflect' : next,
      duration: dur,
      cost: Math.round((0.02 + dur * 0.0014 * (0.6 + rand())) * 1000) / 1000,
      prompt_bytes: 2000 + Math.floor(rand() * 7000),
      turns: 1 + Math.floor(rand() * 8),
      input_tokens: 4 + Math.floor(rand() * 40),
      cache_read: 20_000 + Math.floor(rand() * 60_000),
      cache_create: 2_000 + Math.floor(rand() * 15_000),
      output_tokens: 200 + Math.floor(rand() * 3000),
      model: 'claude-opus-4-6',
      subtype: fail ? 'error_max_turns' : 'success',
      backend: 'claude',
      task_id: null,
    };
    const name = `par-metrics-${line.ts.slice(0, 10).replace(/-/g, '')}.jsonl`;
    const list = byFile.get(name) ?? [];
    list.push(JSON.stringify(line));
    byFile.set(name, list);
  }
  for (const [name, lines] of byFile) writeFileSync(join(logsDir, name), lines.join('\n') + '\n');

  writeFileSync(
    join(ralphDir, 'STATE.json'),
    JSON.stringify({
      iteration: iter,
      phase: 'implement',
      current_item: ids[work - 1] ?? null,
      current_wave: 1,
      commits_total: commits + 4,
    }),
  );
  mkdirSync(join(ralphDir, 'commits', 'pending'), { recursive: true });
  for (const [p] of patchRows.filter((r) => r[2] === 'queued').slice(0, 3))
    writeFileSync(join(ralphDir, 'commits', 'pending', `${String(p)}.patch`), 'diff --git\n');
  return { logsDir, events: events.length };
}
