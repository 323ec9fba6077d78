// The engine session (what VS Code holds) attached to the team's PostgreSQL store, driven
// without VS Code against a real server: a folder whose ralph.config.json names the store
// opens it, worker processes append (a lease, a deferral), the session's views see them as
// the store's LISTEN/NOTIFY delivers them, and a human decision made in the session is in
// PostgreSQL at once. The URL's password is in no log line, event or view.
import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { CONTROL_PROJECTIONS } from '../../../src/control/index';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import type { NewEvent } from '../../../src/store/types';
import { Engine, CommandFailedError } from '../../../src/session/engine';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { backlogEvents, killed, spawnTeamChild } from '../../kit/teamChildren';

const run = (phase: string, taskId: string) => ({ role: 'worker' as const, phase, task_id: taskId, backend: 'claude' });
const agentStarted = (agent: string, taskId: string): NewEvent =>
  toNewEvent(domainEvent('agent.started', agent, agent, { ...run('worker', taskId), prompt_bytes: 10, budget_usd: 1 }));
const agentFinished = (agent: string, taskId: string, cost: number): NewEvent =>
  toNewEvent(
    domainEvent('agent.finished', agent, agent, { ...run('worker', taskId), status: 'success', turns: 2, cost_usd: cost, duration_ms: 5 }),
  );

/** Resolves once `ok()` holds, re-checked on each batch of events the session receives. */
function until(engine: Engine, ok: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (ok()) return resolve();
    const sub = engine.onDidChangeData(() => {
      if (!ok()) return;
      sub.dispose();
      resolve();
    });
  });
}

describe('team: the engine session attached to the team store (real PostgreSQL, worker processes)', function () {
  let cluster: PgCluster | undefined;
  const children: ChildProcess[] = [];
  const engines: Engine[] = [];
  const dirs: string[] = [];

  before(async function () {
    cluster = await startPgClusterOrSkip(this);
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map(killed));
    for (const e of engines.splice(0)) await e.shutdown();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  after(() => cluster?.destroy());

  it("given a folder whose config names the store, then the session shows the team's backlog, machines and deferrals as workers append, and a human decision lands in PostgreSQL", async () => {
    const c = cluster as PgCluster;
    const url = c.createDatabase('session_1');
    const seeder = await openPgStore({ url, mode: 'writer', projections: CONTROL_PROJECTIONS });
    await seeder.append(backlogEvents(['T-1', 'T-2', 'T-3']));
    // Earlier today, on another machine: an agent that ran and finished (the catch-up reads it).
    await seeder.append([agentStarted('worker-3@other-box', 'T-3'), agentFinished('worker-3@other-box', 'T-3', 0.1)]);
    await seeder.close();

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-team-session-'));
    dirs.push(dir);
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), `${JSON.stringify({ store: url }, null, 2)}\n`);
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const engine = new Engine({ projectDir: dir, log, env: {} });
    engines.push(engine);

    // Attached: no .ralph/ralph.db here, the store URL is the project.
    assert.equal(engine.isInitialized(), true);
    assert.equal(engine.teamStore(), url.replace(c.password, '***'));
    assert.ok(await engine.open());
    assert.deepEqual(
      engine.tasks().map((t) => [t.task_id, t.status]),
      [
        ['T-1', 'pending'],
        ['T-2', 'pending'],
        ['T-3', 'pending'],
      ],
    );
    assert.equal(engine.role(), 'observer');
    assert.equal(engine.loopState(), 'stopped');

    // A worker on another machine claims a task: its lease is the session's agent, by machine.
    const worker = spawnTeamChild(['lease', url, 'worker-1@child-host:1', '60000']);
    children.push(worker.proc);
    const held = JSON.parse(await worker.line) as { taskId: string };
    await until(engine, () => engine.agents().some((r) => r.busy));
    assert.deepEqual(
      engine.machines().map((m) => [m.host, m.leases.map((l) => [l.owner, l.taskId])]),
      [['child-host', [['worker-1@child-host:1', held.taskId]]]],
    );
    assert.ok(engine.agents().some((r) => r.name === 'worker-1@child-host' && r.busy));
    // The Agents view's grouping: each machine with its agents, their phase and today's cost.
    const byMachine = (): unknown =>
      engine.agentsByMachine()?.map((g) => [g.machine, g.busy, g.agents.map((r) => [r.name, r.phase, r.taskId, r.busy, r.costUsd])]);
    assert.deepEqual(byMachine(), [
      ['child-host', 1, [['worker-1@child-host', 'claimed', held.taskId, true, 0]]],
      ['other-box', 0, [['worker-3@other-box', 'worker', 'T-3', false, 0.1]]],
    ]);
    // Its agent starts and finishes one invocation, written by another process: live here.
    const agentLog = await openPgStore({ url, mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      await agentLog.append([agentStarted('worker-1@child-host', held.taskId)]);
      await until(engine, () => engine.agents().some((r) => r.name === 'worker-1@child-host' && r.phase === 'worker'));
      await agentLog.append([agentFinished('worker-1@child-host', held.taskId, 0.4)]);
      await until(engine, () => engine.agents().some((r) => r.name === 'worker-1@child-host' && r.costUsd > 0));
    } finally {
      await agentLog.close();
    }
    assert.deepEqual(byMachine(), [
      // Still leased: between invocations a worker is at its task.
      ['child-host', 1, [['worker-1@child-host', 'worker', held.taskId, true, 0.4]]],
      ['other-box', 0, [['worker-3@other-box', 'worker', 'T-3', false, 0.1]]],
    ]);
    assert.equal(engine.task(held.taskId)?.status, 'claimed');
    assert.equal(engine.loopState(), 'running');

    // Another worker's patch deferred for a human: the deferred queue shows it.
    const deferrer = spawnTeamChild(['deferred', url, 'worker-2@child-host:2', '60000']);
    children.push(deferrer.proc);
    const deferred = JSON.parse(await deferrer.line) as { taskId: string; patchId: string };
    await until(engine, () => engine.deferred().some((t) => t.task_id === deferred.taskId));
    assert.equal(engine.patchOfTask(deferred.taskId)?.patch_id, deferred.patchId);

    // The human approves it in the session: in PostgreSQL at once, as the human's event.
    const outcome = await engine.resolveDeferred(deferred.taskId, 'approve', 'looks right');
    assert.equal(outcome.via, 'applied');
    const pg = new Client({ connectionString: url });
    await pg.connect();
    try {
      const rows = await pg.query<{ event_type: string; actor: string }>(
        'SELECT event_type, actor FROM events WHERE entity_id = $1 ORDER BY seq',
        [deferred.taskId],
      );
      const resolved = rows.rows.find((r) => r.event_type === 'task.deferral_resolved');
      assert.equal(resolved?.actor, 'human');
      // Stop and pause belong to the team's processes on their machines: refused here, nothing appended.
      const before = (await pg.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]?.n;
      await assert.rejects(engine.pauseLoop(), CommandFailedError);
      assert.equal((await pg.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]?.n, before);
      // The password is nowhere in the log: not in an event, not in a line the session printed.
      const leaked = await pg.query<{ n: string }>(
        'SELECT count(*) AS n FROM events WHERE payload::text LIKE $1 OR actor LIKE $1 OR run_id LIKE $1',
        [`%${c.password}%`],
      );
      assert.equal(leaked.rows[0]?.n, '0');
    } finally {
      await pg.end();
    }
    assert.equal(engine.task(deferred.taskId)?.status, 'proposed');
    assert.ok(
      lines.some((l) => l.includes('opened the team store')),
      lines.join('\n'),
    );
    for (const l of lines) assert.ok(!l.includes(c.password), `the password in a log line: ${l}`);
    assert.ok(!JSON.stringify(engine.agents()).includes(c.password));
  });

  it('given RALPH_STORE_URL and an unreachable server, then the session says where without the password', async () => {
    const c = cluster as PgCluster;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-team-session-'));
    dirs.push(dir);
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const dead = `postgres://ralph:${c.password}@127.0.0.1:1/nowhere`;
    const engine = new Engine({ projectDir: dir, log, env: { RALPH_STORE_URL: dead } });
    engines.push(engine);
    assert.equal(engine.isInitialized(), true);
    const error = await engine.open().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(error, 'opening an unreachable store fails');
    assert.ok(!error.message.includes(c.password), error.message);
    assert.ok(error.message.includes('127.0.0.1'), error.message);
    for (const l of lines) assert.ok(!l.includes(c.password), l);
  });
});
