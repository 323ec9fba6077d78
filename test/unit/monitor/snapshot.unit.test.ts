import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'sql.js';
import { buildMonitorSnapshot, createSnapshotCache } from '../../../src/monitor/snapshot';
import { monitorSnapshotSchema } from '../../../src/protocol/monitor';
import { REFERENCE_DDL, insertEvents, openSqlJs, readerOf } from './sqlFixture';

const NOW = new Date('2026-11-29T12:00:00.000Z');
const ago = (ms: number): string => new Date(NOW.getTime() - ms).toISOString();
const MIN = 60_000;

function metricsLine(o: Record<string, unknown>): string {
  return JSON.stringify({
    ts: NOW.toISOString(),
    agent: 'A',
    iter: 1,
    phase_from: 'assess',
    phase_to: 'plan',
    duration: 10,
    cost: 0.1,
    prompt_bytes: 1000,
    turns: 2,
    input_tokens: 10,
    cache_read: 100,
    cache_create: 50,
    output_tokens: 200,
    model: 'claude-opus-4-6',
    subtype: 'success',
    ...o,
  });
}

describe('buildMonitorSnapshot', () => {
  let db: Database;
  let ralph: string;
  let logs: string;

  beforeEach(async () => {
    db = await openSqlJs();
    ralph = mkdtempSync(join(tmpdir(), 'ralph-mon-'));
    logs = join(ralph, 'logs');
    mkdirSync(logs);
  });
  afterEach(() => {
    db.close();
    rmSync(ralph, { recursive: true, force: true });
  });

  it('given a database without tables, when built, then it is an empty snapshot that says why', () => {
    const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
    assert.equal(s.empty, true);
    assert.equal(s.events.total, 0);
    assert.equal(s.state.phase, 'stopped');
    assert.equal(s.project.initialized, false);
    assert.match(s.warnings.join('\n'), /no events table/);
    monitorSnapshotSchema.parse(s);
  });

  it('given the schema and no rows, when built, then every count is zero and the series are empty', () => {
    db.exec(REFERENCE_DDL);
    const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
    assert.equal(s.empty, true);
    assert.equal(s.tasks.total, 0);
    assert.equal(s.tasks.progress, 0);
    assert.deepEqual(s.series.flow, []);
    assert.deepEqual(s.series.cost, []);
    assert.deepEqual(s.warnings, []);
    monitorSnapshotSchema.parse(s);
  });

  describe('given a populated project', () => {
    beforeEach(() => {
      db.exec(REFERENCE_DDL);
      db.exec(`
        INSERT INTO task_view (task_id, status, title, source, effort, wave, risk_tier) VALUES
          ('W0-001','done','Scaffold','specs/a.md','S',0,0),
          ('W0-002','done','Config','specs/a.md','S',0,1),
          ('W1-001','pending','Parser','specs/b.md','M',1,1),
          ('W1-002','claimed','Lexer','specs/b.md','S',1,1),
          ('W1-003','dropped','Old idea','specs/b.md','S',1,1);
        INSERT INTO task_view (task_id, status, title, source, effort, wave, risk_tier, patch_id, deferred_reason, deferred_at) VALUES
          ('W2-014','deferred','Auth middleware','specs/auth.md','M',2,2,'patch_W2-014_1','tier 2: touches auth/','${ago(30 * MIN)}');
        INSERT INTO patch_view (patch_id, task_id, status, patch_path) VALUES
          ('patch_W0-001_1','W0-001','promoted','${'${ralph}'}/commits/pending/W0-001_primary_1.patch'),
          ('patch_W0-002_1','W0-002','promoted',NULL),
          ('patch_W2-014_1','W2-014','queued','${'${ralph}'}/commits/pending/W2-014_primary_2.patch'),
          ('patch_W1-001_0','W1-001','discarded','${'${ralph}'}/commits/pending/W1-001_primary_0.patch');
      `);
      insertEvents(db, [
        { ts: ago(3 * 86_400_000), entity_id: 'W0-001', event_type: 'task.migrated' },
        { ts: ago(3 * 86_400_000), entity_id: 'W0-002', event_type: 'task.migrated' },
        { ts: ago(3 * 86_400_000), entity_id: 'W1-001', event_type: 'task.migrated' },
        {
          ts: ago(2 * 86_400_000),
          entity_id: 'W0-001',
          event_type: 'task.claimed',
          payload: { old_status: 'pending', new_status: 'claimed' },
        },
        { ts: ago(2 * 86_400_000 - MIN), entity_id: 'W0-001', event_type: 'task.completed' },
        // exactly on the one-hour boundary and just outside it
        { ts: ago(60 * MIN + 1), entity_id: 'W0-002', event_type: 'task.claimed', payload: { new_status: 'claimed' } },
        { ts: ago(60 * MIN), entity_id: 'W0-002', event_type: 'task.done', payload: { old_status: 'claimed', new_status: 'done' } },
        { ts: ago(30 * MIN), entity_id: 'W2-014', event_type: 'task.created', payload: { provenance: 'auto' } },
        { ts: ago(30 * MIN), entity_id: 'W2-014', event_type: 'task.deferred', payload: { new_status: 'deferred', reason: 'tier 2' } },
        {
          ts: ago(20 * MIN),
          entity_type: 'task',
          entity_id: 'W2-014',
          event_type: 'judge.verdict',
          actor: 'judge',
          payload: { verdict: 'approve', rationale: 'small and tested' },
        },
        { ts: ago(10 * MIN + 1), entity_id: 'W1-002', event_type: 'task.claimed', payload: { new_status: 'claimed' } },
        {
          ts: ago(5 * MIN),
          entity_type: 'patch',
          entity_id: 'patch_W0-002_1',
          event_type: 'patch.promoted',
          payload: { commit_hash: 'abcdef1234567890' },
        },
        { ts: ago(1000), entity_type: 'run', entity_id: 'run_test', event_type: 'run.heartbeat' },
      ]);
      mkdirSync(join(ralph, 'commits', 'pending'), { recursive: true });
      // Files of promoted and discarded patches still lying in pending/ are not pending.
      for (const f of ['W0-001_primary_1.patch', 'W2-014_primary_2.patch', 'W1-001_primary_0.patch'])
        writeFileSync(join(ralph, 'commits', 'pending', f), 'diff');
      const yesterday = new Date(NOW.getTime() - 86_400_000);
      writeFileSync(
        join(logs, 'par-metrics-20261129.jsonl'),
        [
          metricsLine({ ts: ago(50 * MIN), agent: 'A', cost: 0.25, duration: 20, phase_from: 'assess', phase_to: 'plan' }),
          metricsLine({ ts: ago(40 * MIN), agent: 'A', cost: 0.5, duration: 40, phase_from: 'implement', phase_to: 'verify', iter: 7 }),
          metricsLine({ ts: ago(30 * MIN), agent: 'B', cost: 0.125, duration: 60, phase_from: 'implement', subtype: 'error_max_turns' }),
          '{not json',
          JSON.stringify({ agent: 'A' }),
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(logs, 'par-metrics-20261128.jsonl'),
        metricsLine({ ts: yesterday.toISOString(), agent: 'A', cost: 9, duration: 5, phase_from: 'commit' }) + '\n',
      );
    });

    it('counts tasks by status with the progress share of the live tasks', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.empty, false);
      assert.equal(s.tasks.total, 6);
      assert.deepEqual(s.tasks.byStatus, { pending: 1, claimed: 1, proposed: 0, done: 2, deferred: 1, blocked: 0, dropped: 1 });
      assert.equal(s.tasks.progress, 2 / 5);
    });

    it('counts patches by status and lists the files of the patches still waiting, whatever else lies in pending/', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.patches.total, 4);
      assert.equal(s.patches.byStatus.promoted, 2);
      assert.equal(s.patches.byStatus.queued, 1);
      assert.deepEqual(s.patches.pendingFiles, ['W2-014_primary_2.patch']);
    });

    it('counts events in the last hour and ten minutes by ISO time, boundaries included', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.events.total, 13);
      assert.equal(s.events.lastHour, 7); // the event at exactly -60 min counts, the one 1 ms earlier does not
      assert.equal(s.events.last10Min, 2);
    });

    it('lists the last ten events newest first with a short summary', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.events.recent.length, 10);
      assert.equal(s.events.recent[0]?.eventType, 'run.heartbeat');
      assert.equal(s.events.recent[1]?.summary, 'abcdef12');
      const done = s.events.recent.find((e) => e.eventType === 'task.done');
      assert.equal(done?.summary, 'claimed → done');
    });

    it("shows deferred items with the judge's latest verdict", () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.deferred.length, 1);
      const d = s.deferred[0];
      assert.equal(d?.taskId, 'W2-014');
      assert.equal(d?.riskTier, 2);
      assert.equal(d?.patchId, 'patch_W2-014_1');
      assert.deepEqual(d?.verdict, { decision: 'approve', rationale: 'small and tested', ts: ago(20 * MIN) });
    });

    it("sums today's cost and invocations by agent, counts failures, and names bad metrics lines", () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.cost.day, '2026-11-29');
      assert.equal(s.cost.cost, 0.875);
      assert.equal(s.cost.invocations, 3);
      assert.equal(s.cost.failures, 1);
      assert.deepEqual(
        s.cost.byAgent.map((a) => [a.agent, a.invocations, a.failures, a.cost]),
        [
          ['A', 2, 0, 0.75],
          ['B', 1, 1, 0.125],
        ],
      );
      assert.ok(
        s.warnings.some((w) => w.startsWith('par-metrics-20261129.jsonl:4: not JSON')),
        s.warnings.join('\n'),
      );
      assert.ok(
        s.warnings.some((w) => w.startsWith('par-metrics-20261129.jsonl:5: ts')),
        s.warnings.join('\n'),
      );
    });

    it('derives phase, iteration, wave and commits when there is no STATE.json', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'running' });
      assert.deepEqual(s.state, {
        phase: 'plan',
        run: 'running',
        observing: false,
        iteration: 7,
        wave: 1,
        commits: 2,
        currentTask: 'W1-002',
        source: 'derived',
      });
    });

    it('reads phase, iteration, wave and commits from STATE.json when present', () => {
      writeFileSync(
        join(ralph, 'STATE.json'),
        JSON.stringify({ phase: 'verify', iteration: 41, current_wave: 2, commits_total: 17, current_item: 'W2-003' }),
      );
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'paused', observing: true });
      assert.deepEqual(s.state, {
        phase: 'verify',
        run: 'paused',
        observing: true,
        iteration: 41,
        wave: 2,
        commits: 17,
        currentTask: 'W2-003',
        source: 'state',
      });
    });

    it('given no loop runs, when STATE.json still names the last phase, then the phase is stopped, no task is current and no agent shows', () => {
      writeFileSync(join(ralph, 'STATE.json'), JSON.stringify({ phase: 'assess', iteration: 24, current_item: 'W2-003' }));
      const agent = { name: 'judge', role: 'judge', phase: 'stopped', taskId: 'W2-014', startedAt: null, busy: false, cost: 0.1 };
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'stopped', agents: [agent] });
      assert.equal(s.state.phase, 'stopped');
      assert.equal(s.state.run, 'stopped');
      assert.equal(s.state.currentTask, null);
      assert.equal(s.state.iteration, 24);
      assert.deepEqual(s.agents, []);
    });

    it('reports an unreadable STATE.json and falls back to derived numbers', () => {
      writeFileSync(join(ralph, 'STATE.json'), '{oops');
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.equal(s.state.source, 'derived');
      assert.ok(s.warnings.some((w) => w.includes('STATE.json')));
    });

    it("buckets cost and tokens over the latest run's span (yesterday's run is another run), ending at its last activity once stopped", () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      const sum = s.series.cost.reduce((a, p) => a + p.cost, 0);
      assert.equal(Math.round(sum * 1000) / 1000, 0.875);
      assert.equal(
        s.series.cost.reduce((a, p) => a + p.invocations, 0),
        3,
      );
      assert.equal(
        s.series.cost.reduce((a, p) => a + p.outputTokens, 0),
        600,
      );
      // The run: the first task event one hour ago to the last one ten minutes ago, 50 min in 2-min buckets.
      assert.equal(s.series.costBucketSec, 120);
      assert.ok(Date.parse(s.series.cost[0]?.t ?? '') <= NOW.getTime() - 60 * MIN);
      assert.ok(Date.parse(s.series.cost.at(-1)?.t ?? '') < NOW.getTime() - 10 * MIN + 2 * MIN);
      assert.ok(Date.parse(s.series.cost.at(-1)?.t ?? '') >= NOW.getTime() - 10 * MIN - 2 * MIN);
      // While the loop runs, the span reaches now.
      const running = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'running' });
      assert.ok(Date.parse(running.series.cost.at(-1)?.t ?? '') > NOW.getTime() - 2 * MIN);
    });

    it('builds a cumulative flow of task states from the task events, the first bucket counting all earlier history', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      const last = s.series.flow[s.series.flow.length - 1];
      assert.deepEqual(last?.counts, { pending: 1, claimed: 1, proposed: 0, done: 2, deferred: 1, blocked: 0, dropped: 0 });
      const first = s.series.flow[0];
      assert.equal(first?.counts.done, 1, 'W0-001 finished two days before the run');
      assert.ok(s.series.flow.length <= 48);
    });

    it('sums durations per executed phase, longest total first', () => {
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
      assert.deepEqual(
        s.series.phases.map((p) => [p.phase, p.invocations, p.totalSec, p.avgSec, p.maxSec]),
        [
          ['implement', 2, 100, 50, 60],
          ['assess', 1, 20, 20, 20],
          ['commit', 1, 5, 5, 5],
        ],
      );
    });

    it('passes the running agents and keeps the newest log lines', () => {
      const lines = Array.from({ length: 250 }, (_, i) => ({ ts: null, level: 'info' as const, text: `line ${i}` }));
      const s = buildMonitorSnapshot(readerOf(db), logs, NOW, {
        run: 'running',
        agents: [{ name: 'primary', role: 'A', phase: 'implement', taskId: 'W1-002', startedAt: ago(MIN), busy: true, cost: 0.3 }],
        logLines: lines,
      });
      assert.equal(s.agents[0]?.taskId, 'W1-002');
      assert.equal(s.logLines.length, 200);
      assert.equal(s.logLines[199]?.text, 'line 249');
      monitorSnapshotSchema.parse(s);
    });
  });

  it('given a one-minute run that stopped, then the cost series spans that minute in second-sized buckets', () => {
    db.exec(REFERENCE_DDL);
    const start = NOW.getTime() - 3 * 3_600_000;
    const at = (s: number): string => new Date(start + s * 1000).toISOString();
    insertEvents(db, [
      { ts: at(0), entity_id: 'T-1', event_type: 'task.created', payload: { status: 'pending' } },
      { ts: at(60), entity_id: 'T-1', event_type: 'task.done', payload: { new_status: 'done' } },
    ]);
    writeFileSync(
      join(logs, 'par-metrics-20261129.jsonl'),
      [metricsLine({ ts: at(5), cost: 0.004 }), metricsLine({ ts: at(31), cost: 0.006 }), metricsLine({ ts: at(58), cost: 0.002 })].join(
        '\n',
      ) + '\n',
    );
    const s = buildMonitorSnapshot(readerOf(db), logs, NOW, { project: { name: 'calc', specs: 1 } });
    assert.equal(s.series.costBucketSec, 2);
    assert.equal(s.series.cost.length, 31);
    assert.equal(s.series.cost[0]?.t, at(0));
    assert.equal(s.series.cost.at(-1)?.t, at(60));
    assert.equal(s.series.cost[2]?.cost, 0.004);
    assert.equal(s.series.cost[15]?.cost, 0.006);
    assert.equal(s.series.flow.at(-1)?.counts.done, 1);
    assert.deepEqual(s.project, { name: 'calc', initialized: true, specs: 1 });
  });

  it('given a judge run a human decision aborted and one that timed out, then only the timeout is a failure', () => {
    db.exec(REFERENCE_DDL);
    writeFileSync(
      join(logs, 'par-metrics-20261129.jsonl'),
      [
        metricsLine({ ts: ago(3 * MIN), agent: 'judge', subtype: 'cancelled', status: 'cancelled', stop_reason: 'abort' }),
        metricsLine({ ts: ago(2 * MIN), agent: 'judge', subtype: 'cancelled', status: 'cancelled', stop_reason: 'timeout' }),
        metricsLine({ ts: ago(MIN), agent: 'judge', subtype: 'cancelled' }),
      ].join('\n') + '\n',
    );
    const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
    assert.equal(s.cost.invocations, 3);
    assert.equal(s.cost.failures, 1);
  });

  it('given a task re-based and still proposed, then its event reads "still proposed", not "proposed → proposed"', () => {
    db.exec(REFERENCE_DDL);
    insertEvents(db, [
      {
        ts: ago(MIN),
        entity_id: 'T-1',
        event_type: 'task.proposed',
        payload: { old_status: 'proposed', new_status: 'proposed', reason: 'rebased onto 1234abcd' },
      },
    ]);
    assert.equal(buildMonitorSnapshot(readerOf(db), logs, NOW).events.recent[0]?.summary, 'still proposed · rebased onto 1234abcd');
  });

  it('given a run that opted in to unconfined agents and an incident, then the snapshot names the roles and counts the incident', () => {
    db.exec(REFERENCE_DDL);
    const roles = (primary: string) => [
      { role: 'primary', backend: 'claude', kind: primary, summary: '' },
      { role: 'judge', backend: 'codex', kind: 'bwrap', summary: '' },
    ];
    insertEvents(db, [
      {
        ts: ago(3 * MIN),
        entity_type: 'agents',
        entity_id: 'agents',
        event_type: 'agents.confinement',
        payload: { roles: roles('bwrap'), unconfined: false, opted_in: false },
      },
    ]);
    assert.deepEqual(buildMonitorSnapshot(readerOf(db), logs, NOW).safety, { unconfined: [], incidents: 0 });
    insertEvents(db, [
      {
        ts: ago(2 * MIN),
        entity_type: 'agents',
        entity_id: 'agents',
        event_type: 'agents.confinement',
        payload: { roles: roles('none'), unconfined: true, opted_in: true },
      },
      {
        ts: ago(MIN),
        entity_type: 'incident',
        entity_id: 'incident_1',
        event_type: 'incident',
        payload: { summary: '.git/config modified' },
      },
    ]);
    const s = buildMonitorSnapshot(readerOf(db), logs, NOW);
    assert.deepEqual(s.safety, { unconfined: ['primary (claude)'], incidents: 1 }, 'the latest run counts, only its unconfined roles');
    monitorSnapshotSchema.parse(s);
  });

  it('given a cache, when events are appended between builds, then the flow equals a full read', () => {
    db.exec(REFERENCE_DDL);
    insertEvents(db, [
      { ts: ago(50 * MIN), entity_id: 'T-1', event_type: 'task.migrated' },
      { ts: ago(40 * MIN), entity_id: 'T-2', event_type: 'task.created', payload: { status: 'pending' } },
    ]);
    const cache = createSnapshotCache();
    const first = buildMonitorSnapshot(readerOf(db), logs, NOW, { cache });
    assert.equal(first.series.flow[first.series.flow.length - 1]?.counts.pending, 2);
    insertEvents(db, [
      { ts: ago(30 * MIN), entity_id: 'T-1', event_type: 'task.claimed', payload: { new_status: 'claimed' } },
      { ts: ago(20 * MIN), entity_id: 'T-1', event_type: 'task.done', payload: { new_status: 'done' } },
    ]);
    const cached = buildMonitorSnapshot(readerOf(db), logs, NOW, { cache });
    assert.deepEqual(cached.series, buildMonitorSnapshot(readerOf(db), logs, NOW).series);
    assert.equal(cache.rows.length, 4);

    // The log is replaced by a shorter one (a rebuild from another file): the cache starts over.
    db.exec('DELETE FROM events');
    insertEvents(db, [{ ts: ago(10 * MIN), entity_id: 'T-9', event_type: 'task.migrated' }]);
    const reset = buildMonitorSnapshot(readerOf(db), logs, NOW, { cache });
    assert.deepEqual(reset.series, buildMonitorSnapshot(readerOf(db), logs, NOW).series);
    assert.equal(cache.rows.length, 1);
  });

  it('given a cache, then the charts come from its flow index while the history is in time order, and from a walk once it is not', () => {
    db.exec(REFERENCE_DDL);
    const cache = createSnapshotCache();
    const same = (label: string, run: 'running' | 'stopped'): void => {
      const cached = buildMonitorSnapshot(readerOf(db), logs, NOW, { cache, run });
      assert.deepEqual(cached.series, buildMonitorSnapshot(readerOf(db), logs, NOW, { run }).series, label);
    };
    for (let k = 0; k < 6; k++) {
      insertEvents(db, [
        { ts: ago((90 - 12 * k) * MIN), entity_id: `T-${k}`, event_type: 'task.created', payload: { status: 'pending' } },
        { ts: ago((85 - 12 * k) * MIN), entity_id: `T-${k}`, event_type: 'task.claimed', payload: { new_status: 'claimed' } },
      ]);
      same(`append ${k}`, k % 2 === 0 ? 'running' : 'stopped');
    }
    assert.ok(cache.flow !== null && cache.flow.length === 12, 'the index holds every row');
    // A writer stamped an older time: the rows are re-sorted and walked from now on.
    insertEvents(db, [{ ts: ago(200 * MIN), entity_id: 'T-0', event_type: 'task.done', payload: { new_status: 'done' } }]);
    same('an older stamp', 'running');
    assert.equal(cache.flow, null);
    insertEvents(db, [{ ts: ago(MIN), entity_id: 'T-1', event_type: 'task.done', payload: { new_status: 'done' } }]);
    same('after the walk took over', 'stopped');
  });

  it('given a cache and a task event whose time does not parse, then the flow still equals a full read', () => {
    db.exec(REFERENCE_DDL);
    const cache = createSnapshotCache();
    insertEvents(db, [{ ts: ago(30 * MIN), entity_id: 'T-1', event_type: 'task.created', payload: { status: 'pending' } }]);
    buildMonitorSnapshot(readerOf(db), logs, NOW, { cache });
    insertEvents(db, [
      { ts: 'not a time', entity_id: 'T-2', event_type: 'task.created', payload: { status: 'pending' } },
      { ts: ago(10 * MIN), entity_id: 'T-1', event_type: 'task.done', payload: { new_status: 'done' } },
    ]);
    const cached = buildMonitorSnapshot(readerOf(db), logs, NOW, { cache });
    assert.deepEqual(cached.series, buildMonitorSnapshot(readerOf(db), logs, NOW).series);
    assert.equal(cache.flow, null);
  });

  it('counts a time window exactly when some stamps have no milliseconds', () => {
    db.exec(REFERENCE_DDL);
    // The bound is 11:00:00.500; '11:00:00Z' is before it although it sorts after as a string.
    const now = new Date('2026-11-29T12:00:00.500Z');
    insertEvents(db, [
      { ts: '2026-11-29T11:00:00Z', entity_type: 'run', entity_id: 'r', event_type: 'run.a' },
      { ts: '2026-11-29T11:00:00.500Z', entity_type: 'run', entity_id: 'r', event_type: 'run.b' },
      { ts: '2026-11-29T11:00:01Z', entity_type: 'run', entity_id: 'r', event_type: 'run.c' },
    ]);
    assert.equal(buildMonitorSnapshot(readerOf(db), logs, now).events.lastHour, 2);
  });

  it('given a loop paused because every agent fails alike, then the state says paused with the reason and a few words, for this window and for an observer; resumed, no pause', () => {
    db.exec(REFERENCE_DDL);
    const reason =
      'every agent (primary, worker-1) fails the same way: the agent CLI cannot be started (not installed, or not on PATH); install it, then resume';
    insertEvents(db, [
      { ts: ago(3 * MIN), entity_type: 'loop', entity_id: 'loop', event_type: 'loop.started', payload: {} },
      {
        ts: ago(MIN),
        entity_type: 'loop',
        entity_id: 'loop',
        event_type: 'loop.paused',
        payload: { reason, cause: 'agents_failing', failure_class: 'cli_missing', agents: ['primary', 'worker-1'] },
      },
    ]);
    const own = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'paused' });
    assert.equal(own.state.run, 'paused');
    assert.deepEqual(own.state.pause, { reason, short: 'agent CLI missing' });
    monitorSnapshotSchema.parse(own);
    const observed = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'running', observing: true });
    assert.equal(observed.state.run, 'paused');
    assert.equal(observed.state.pause?.short, 'agent CLI missing');
    assert.equal(buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'stopped' }).state.pause, undefined);
    insertEvents(db, [{ ts: ago(0), entity_type: 'loop', entity_id: 'loop', event_type: 'loop.resumed', payload: {} }]);
    const resumed = buildMonitorSnapshot(readerOf(db), logs, NOW, { run: 'running', observing: true });
    assert.equal(resumed.state.run, 'running');
    assert.equal(resumed.state.pause, undefined);
  });
});
