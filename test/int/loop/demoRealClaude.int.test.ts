// `ralph demo` through the REAL `claude` CLI (pinned, .tools/) and the scripted model server:
// the story's facts are read back from the events in ralph.db and from git, not from the
// printed text — tasks extracted from the spec, a worker's task promoted while the primary
// worked, a retry after a failing test, a judge verdict on the tier-2 patch, every done
// task's commit on main, the sample's tests passing on the tip, no process left behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { runDemo, testsPassOnTip } from '../../../src/cli/demo';
import type { DemoResult } from '../../../src/cli/demo';
import { openStore } from '../../../src/store/sqlJsStore';
import { ensureAgentClis, processesIn } from '../../kit/agentEnv';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';
import { PINNED_CLAUDE_VERSION } from '../../../src/agents/scripted/pinnedClaude';
import { git } from '../../kit/git';

interface Row {
  readonly ts: string;
  readonly entity_id: string;
  readonly event_type: string;
  readonly actor: string;
  readonly payload: string;
}

const payloadOf = (r: Row): Record<string, unknown> => JSON.parse(r.payload) as Record<string, unknown>;

describe('loop/demo through the real claude CLI', function () {
  this.timeout(300_000);
  let r: DemoResult | undefined;
  let server: ModelServer | undefined;
  const lines: string[] = [];
  let events: Row[] = [];
  let tasks: { task_id: string; status: string }[] = [];

  before(async () => {
    const installer = readFileSync(join(__dirname, '..', '..', '..', 'scripts', 'ensure-agent-clis.mjs'), 'utf8');
    assert.equal(
      /claude: \{[^}]*version: '([^']+)'/.exec(installer)?.[1],
      PINNED_CLAUDE_VERSION,
      'src/agents/scripted/pinnedClaude.ts pins the same claude as scripts/ensure-agent-clis.mjs',
    );
    ensureAgentClis();
    r = await runDemo((l) => lines.push(l), {
      onModelServer: (s) => {
        server = s;
      },
    });
    const store = await openStore({ ralphDir: join(r.dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      events = store.all<Row>('SELECT ts, entity_id, event_type, actor, payload FROM events ORDER BY rowid');
      tasks = store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view ORDER BY task_id');
    } finally {
      await store.close();
    }
  });
  after(() => {
    if (r !== undefined) rmSync(r.dir, { recursive: true, force: true });
  });

  const text = (): string => lines.join('\n');

  it('used the real claude CLI (acceptEdits, confined, worktrees in the cache) against the scripted model server', () => {
    assert.ok(r !== undefined && r.backend.kind === 'claude', text());
    assert.match(
      text(),
      /Agents: the real claude CLI 2\.1\.332 .*--permission-mode acceptEdits\) against the scripted model server at http:\/\/127\.0\.0\.1:\d+/,
    );
    assert.ok(
      server !== undefined && server.requests.filter((q) => q.api === 'anthropic' && q.script !== '').length >= 12,
      'the CLI talked to the scripted server',
    );
    const metrics = readdirSync(join(r.dir, '.ralph', 'logs')).filter((f) => f.endsWith('.jsonl'));
    const backends = new Set(
      metrics.flatMap((f) =>
        readFileSync(join(r!.dir, '.ralph', 'logs', f), 'utf8')
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { backend: string }).backend),
      ),
    );
    assert.deepEqual([...backends], ['claude']);
  });

  it('extracted the tasks from the spec through evolve_goals proposals', () => {
    const created = events.filter((e) => e.event_type === 'task.created').map((e) => e.entity_id);
    assert.deepEqual(created, ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4']);
    const accepted = events.filter((e) => e.event_type === 'proposal.accepted').map((e) => e.entity_id);
    assert.equal(accepted.length, 4);
    for (const id of accepted) assert.match(id, /_evolve_\d+\.\d{17}-[0-9a-f]{6}\.json$/);
    assert.deepEqual(
      tasks,
      ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4'].map((task_id) => ({ task_id, status: 'done' })),
    );
  });

  it('every done task has its promoted commit on main, and the sample tests pass on the tip', () => {
    const completed = events.filter((e) => e.event_type === 'task.completed');
    assert.deepEqual(completed.map((e) => e.entity_id).sort(), ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4']);
    for (const e of completed) {
      const commit = String(payloadOf(e).commit_hash);
      execFileSync('git', ['merge-base', '--is-ancestor', commit, 'main'], { cwd: (r as DemoResult).dir }); // throws when not
      assert.match(git((r as DemoResult).dir, 'log', '-1', '--format=%s', commit), new RegExp(`^ralph\\(${e.entity_id}\\)`));
    }
    assert.equal(r?.testsPass, true);
    assert.equal(testsPassOnTip((r as DemoResult).dir), true);
    assert.ok(existsSync(join((r as DemoResult).dir, '.ralph', 'BACKLOG.md')));
    assert.match(text(), new RegExp(`Inspect: ${(r as DemoResult).dir} `));
  });

  it('a worker claimed and promoted a task while the primary worked on its own', () => {
    const workerClaim = events.find((e) => e.event_type === 'task.claimed' && e.actor.startsWith('worker-'));
    assert.ok(workerClaim !== undefined, 'a worker claimed a task');
    const workerDone = events.find((e) => e.event_type === 'patch.promoted' && e.actor === workerClaim.actor);
    assert.ok(workerDone !== undefined && payloadOf(workerDone).task_id === workerClaim.entity_id, 'the worker promoted its task');
    const primaryClaim = events.find((e) => e.event_type === 'task.claimed' && e.actor === 'primary');
    assert.ok(primaryClaim !== undefined);
    const primaryDone = events.find((e) => e.event_type === 'task.completed' && e.entity_id === primaryClaim.entity_id);
    assert.ok(primaryDone !== undefined);
    // Parallel: each claimed before the other finished.
    assert.ok(
      workerClaim.ts <= primaryDone.ts && primaryClaim.ts <= workerDone.ts,
      JSON.stringify([workerClaim, workerDone, primaryClaim, primaryDone]),
    );
  });

  it('a task failed its tests once, was reflected and fixed on retry', () => {
    // ralph.db records no retry event of its own: the reflection and the second implement
    // invocation are in REFLECTIONS.md and the metrics log; the fix is in git.
    assert.match(readFileSync(join((r as DemoResult).dir, '.ralph', 'REFLECTIONS.md'), 'utf8'), /CALC-3 \(test, recoverable\)/);
    const logs = join((r as DemoResult).dir, '.ralph', 'logs');
    const rows = readdirSync(logs)
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => readFileSync(join(logs, f), 'utf8').trim().split('\n'))
      .map((l) => JSON.parse(l) as { task_id: string | null; phase_from: string });
    assert.ok(
      rows.some((m) => m.task_id === 'CALC-3' && m.phase_from === 'reflect'),
      'a reflect invocation for CALC-3',
    );
    assert.ok(rows.filter((m) => m.task_id === 'CALC-3' && m.phase_from === 'implement').length >= 2, 'implemented twice');
    assert.ok(server?.requests.some((q) => q.prompt.includes('RALPH-KEY: implement/CALC-3/fix-1/')));
    assert.equal(
      events.filter((e) => e.event_type === 'task.claimed' && e.entity_id === 'CALC-3').length,
      1,
      'fixed within the same claim',
    );
    assert.equal(git((r as DemoResult).dir, 'show', 'main:src/sub.js'), 'module.exports = (a, b) => a - b;');
  });

  it('the tier-2 patch was deferred, judged in a separate invocation that saw the diff and the task, and promoted', () => {
    const risk = events.find((e) => e.event_type === 'task.risk_classified' && e.entity_id === 'CALC-4');
    assert.equal(risk && payloadOf(risk).risk_tier, 2);
    assert.ok(events.some((e) => e.event_type === 'task.deferred' && e.entity_id === 'CALC-4'));
    const verdict = events.find((e) => e.event_type === 'task.deferral_resolved' && e.entity_id === 'CALC-4');
    assert.ok(verdict !== undefined && verdict.actor === 'judge' && payloadOf(verdict).decision === 'approve', JSON.stringify(verdict));
    const promoted = events.find((e) => e.event_type === 'patch.promoted' && payloadOf(e).task_id === 'CALC-4');
    assert.equal(promoted?.actor, 'judge');
    const judged = server?.requests.filter((q) => q.prompt.includes('RALPH-KEY: review_deferred/CALC-4/')) ?? [];
    assert.ok(judged.length >= 1);
    for (const q of judged) {
      assert.match(q.prompt, /diff --git a\/src\/auth\/token\.js/);
      assert.ok(!q.prompt.includes('src/add.js'), 'the judge sees nothing of other tasks');
    }
  });

  it("then `ralph status` ends with today's spend, summed from the agent.finished events, and what is left of the day", () => {
    const dayStart = `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`;
    const spent = events
      .filter((e) => e.event_type === 'agent.finished' && e.ts >= dayStart)
      .reduce((sum, e) => sum + Number(payloadOf(e)['cost_usd']), 0);
    assert.ok(spent > 0, 'the agents of the demo spent something');
    const cli = join(__dirname, '..', '..', '..', 'dist', 'cli.js');
    const status = execFileSync(process.execPath, [cli, 'status'], { cwd: (r as DemoResult).dir, encoding: 'utf8' });
    assert.equal(
      status.trimEnd().split('\n').at(-1),
      `Spend today: $${spent.toFixed(2)} of $50.00 a day ($${(50 - spent).toFixed(2)} left)`,
    );
  });

  it('left no process running in the sample project', () => {
    assert.deepEqual(processesIn((r as DemoResult).dir), []);
  });
});
