// The loop end to end with real git, a real sql.js store, real gate processes and the
// scripted claude executable: primary sub-step plan, a worker in parallel, a retry after a
// failing test, a tier-2 patch judged and promoted, a tier-3 decomposition, a user edit
// surviving, and the invariants at the end (done => promoted commit on the branch; views
// rebuilt from events equal the stored ones).
import assert from 'node:assert/strict';
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { submitToInbox } from '../../../src/control/inbox';
import { worktreesRoot } from '../../../src/git/repoCache';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import type { LoopEvent } from '../../../src/loop/events';
import type { EventStore } from '../../../src/store/types';
import {
  addTasks,
  createSampleProject,
  freshSampleProjectEachTest,
  openSampleStore,
  plan,
  sampleSettings,
  script,
  scriptedLoop,
  writeScenario,
} from './sampleProject';
import type { SampleProject } from './sampleProject';
import { git, wrapGitOnPath } from '../../kit/git';

const CLI = resolve(__dirname, '..', '..', '..', 'dist', 'cli.js');

function viewRows(store: EventStore): string {
  return JSON.stringify([store.all('SELECT * FROM task_view ORDER BY task_id'), store.all('SELECT * FROM patch_view ORDER BY patch_id')]);
}

async function assertInvariants(p: SampleProject, store: EventStore): Promise<void> {
  const done = store.all<{ task_id: string }>("SELECT task_id FROM task_view WHERE status = 'done'");
  for (const t of done) {
    const row = store.get<{ commit_hash: string }>("SELECT commit_hash FROM patch_view WHERE task_id = ? AND status = 'promoted'", [
      t.task_id,
    ]);
    assert.ok(row?.commit_hash, `done task ${t.task_id} has a promoted patch`);
    git(p.dir, 'merge-base', '--is-ancestor', row.commit_hash, 'main');
  }
  const before = viewRows(store);
  await store.rebuild();
  assert.equal(viewRows(store), before, 'views rebuilt from events equal the stored views');
  // The user's HEAD, index and working tree agree (no phantom reverse diff of promoted work).
  assert.equal(git(p.dir, 'diff', '--cached', '--name-only'), '');
}

/** A scripted turn that holds the agent until the test says go (a file in its worktree). */
const GO_FILE = '.ralph-test-go';
const AWAIT_GO = { tools: [{ tool: 'bash', command: `while [ ! -e ${GO_FILE} ]; do sleep 0.05; done; rm -f ${GO_FILE}` }] };

/** Lets an agent held by AWAIT_GO go on: the test's own change is made before, never raced. */
async function letAgentGoOn(projectDir: string, agent: string): Promise<void> {
  writeFileSync(join(await worktreesRoot(projectDir), agent, GO_FILE), 'go\n');
}

describe('loop/Loop end to end (scripted claude)', function () {
  this.timeout(120_000);
  let p: SampleProject;
  let store: EventStore;
  freshSampleProjectEachTest((s) => ({ p, store } = s));

  it('given a tier-1 task with a sub-step plan and an S task, then the primary and a worker finish both in parallel', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 },
      { id: 'T-2', title: 'Add mul()', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      script(
        'plan/T-1/',
        [],
        plan('T-1', [
          { description: 'write add', files: ['src/add.js'] },
          { description: 'test add', files: ['test/add.test.js'] },
        ]),
      ),
      script('implement/T-1/step-1/', [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }]),
      script('implement/T-1/step-2/', [
        { tool: 'write', path: 'test/add.test.js', content: "require('assert').equal(require('../src/add.js')(2, 3), 5);\n" },
      ]),
      script('worker/T-2/attempt-1/', [
        { tool: 'write', path: 'src/mul.js', content: 'module.exports = (a, b) => a * b;\n' },
        { tool: 'write', path: 'test/mul.test.js', content: "require('assert').equal(require('../src/mul.js')(2, 3), 6);\n" },
      ]),
    ]);
    // A user edit in the checkout during the run must survive.
    writeFileSync(join(p.dir, 'README.md'), '# Sample\nuser notes, uncommitted\n');
    const { loop, events } = scriptedLoop(p, store, {}, true);
    const summary = await loop.run();
    assert.equal(
      summary.promoted,
      2,
      JSON.stringify(
        events.filter((e) => e.type === 'log' || e.type === 'task.blocked'),
        null,
        1,
      ),
    );
    const tasks = store.all<{ task_id: string; status: string; claimed_by: string | null }>(
      'SELECT task_id, status, claimed_by FROM task_view ORDER BY task_id',
    );
    assert.deepEqual(
      tasks.map((t) => `${t.task_id}:${t.status}`),
      ['T-1:done', 'T-2:done'],
    );
    const log = git(p.dir, 'log', '--format=%s', 'main');
    assert.match(log, /ralph\(T-1\): Add add\(\)/);
    assert.match(log, /ralph\(T-2\): Add mul\(\)/);
    // Sub-steps: plan, implement x2 with a build check each, verify, commit.
    const phases = events
      .filter((e): e is Extract<LoopEvent, { type: 'phase.changed' }> => e.type === 'phase.changed' && e.taskId === 'T-1')
      .map((e) => e.to);
    assert.deepEqual(phases.slice(0, 5), ['plan', 'implement', 'implement', 'verify', 'commit']);
    // The last step's build passed on the files verify checks: verify does not build them again,
    // and the patch's gate record still has that build.
    const primaryGates = events.flatMap((e) => (e.type === 'gate.started' && e.agent === 'primary' && e.taskId === 'T-1' ? [e.gate] : []));
    assert.deepEqual(primaryGates.slice(0, 5), ['build', 'build', 'test', 'lint', 'fmt']);
    const [firstRecord] = store.all<{ payload: string }>(
      "SELECT payload FROM events WHERE event_type = 'patch.gates' AND json_extract(payload, '$.task_id') = 'T-1' ORDER BY event_id",
    );
    assert.deepEqual(
      (JSON.parse(firstRecord?.payload ?? '{}') as { gates?: { gate: string; status: string }[] }).gates?.map(
        (g) => `${g.gate}:${g.status}`,
      ),
      ['build:passed', 'test:passed', 'lint:skipped', 'fmt:skipped', 'forbidden_patterns:passed'],
    );
    // The worker ran T-2 (in its own worktree) while the primary had T-1.
    const workerStarted = events.find((e) => e.type === 'agent.started' && e.agent === 'worker-1' && e.taskId === 'T-2');
    assert.ok(workerStarted);
    assert.equal(readFileSync(join(p.dir, 'README.md'), 'utf8'), '# Sample\nuser notes, uncommitted\n');
    assert.equal(
      readFileSync(join(p.dir, 'src', 'add.js'), 'utf8'),
      'module.exports = (a, b) => a + b;\n',
      'promoted files reach the checkout',
    );
    assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=no'), ' M README.md');
    execOk(p.dir, 'node scripts/test.js');
    await assertInvariants(p, store);
  });

  it("given a first run with a worker, then the primary's worktree is made first and its plan takes it as made", async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 },
      { id: 'T-2', title: 'Add mul()', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      script('plan/T-1/', [], plan('T-1', [{ description: 'write add', files: ['src/add.js'] }])),
      script('implement/T-1/step-1/', [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }]),
      script('worker/T-2/attempt-1/', [{ tool: 'write', path: 'src/mul.js', content: 'module.exports = (a, b) => a * b;\n' }]),
    ]);
    // Every git the loop starts, in the order it starts them: where, and with what.
    const logDir = mkdtempSync(join(tmpdir(), 'ralph-git-log-'));
    const logFile = join(logDir, 'git.log');
    const undo = wrapGitOnPath(() => [`printf '%s\\t%s\\n' "$(pwd)" "$*" >> '${logFile}'`]);
    // The primary looks at the specs before it claims: held there until the worker's agent
    // runs, it is the later of the two to need a worktree (as a busy assess makes it).
    let workerStarted: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (workerStarted = resolve));
    const specs = { changed: () => held.then(() => []), markEvolved: async () => undefined };
    try {
      const { loop } = scriptedLoop(p, store, {}, true, { specs });
      loop.events.on((e) => {
        if (e.type === 'agent.started' && e.agent === 'worker-1') workerStarted();
      });
      assert.equal((await loop.run()).promoted, 2);
    } finally {
      undo();
    }
    const calls = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        const [cwd = '', args = ''] = l.split('\t');
        return { cwd, args };
      });
    rmSync(logDir, { recursive: true, force: true });
    const adds = calls.filter((c) => c.args.startsWith('worktree add '));
    assert.deepEqual(
      adds.map((c) => /-B (\S+)/.exec(c.args)?.[1]),
      ['ralph/primary', 'ralph/worker-1'],
    );
    // Made at the start, the worktree is what a reset would leave: the plan and the step ran in
    // it as made, without a checkout or clean before the step's change is captured.
    const primaryWorktree = join(await worktreesRoot(p.dir), 'primary');
    const inPrimary = calls.filter((c) => c.cwd === primaryWorktree).map((c) => c.args);
    const beforeCapture = inPrimary.slice(
      0,
      inPrimary.findIndex((a) => a.startsWith('add --all')),
    );
    assert.ok(beforeCapture.length > 0, inPrimary.join('\n'));
    assert.deepEqual(
      beforeCapture.filter((a) => /^(checkout|reset|clean) /.test(a)),
      [],
    );
  });

  it('given a task failing its tests first, a tier-2 task and a tier-3 task, then retry fixes it, the judge approves, and the tier-3 task is decomposed', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-3', title: 'Add sub()', effort: 'M', wave: 0 },
      { id: 'T-4', title: 'Token check', effort: 'M', wave: 1 },
      { id: 'T-5', title: 'Key rotation', effort: 'M', wave: 2 },
    ]);
    const subTest = "require('assert').equal(require('../src/sub.js')(5, 3), 2);\n";
    writeScenario(p, [
      script('plan/T-3/', [], plan('T-3', [{ description: 'write sub and its test', files: ['src/sub.js', 'test/sub.test.js'] }])),
      script('implement/T-3/step-1/', [
        { tool: 'write', path: 'src/sub.js', content: 'module.exports = (a, b) => a + b;\n' },
        { tool: 'write', path: 'test/sub.test.js', content: subTest },
      ]),
      script('reflect/T-3/', [], {
        class: 'recoverable',
        diagnosis: 'sub adds instead of subtracting',
        lesson: 'check the operator against the test',
        decision: 'retry',
        guardrail: { trigger: 'arithmetic helper', instruction: 'run the unit test before finishing' },
      }),
      script('implement/T-3/fix-1/', [{ tool: 'write', path: 'src/sub.js', content: 'module.exports = (a, b) => a - b;\n' }]),
      script('plan/T-4/', [], plan('T-4', [{ description: 'token check', files: ['src/auth/token.js'] }])),
      script('implement/T-4/step-1/', [
        { tool: 'write', path: 'src/auth/token.js', content: 'module.exports = (t) => typeof t === "string" && t.length > 8;\n' },
      ]),
      script('review_deferred/T-4/', [], { task_id: 'T-4', verdict: 'approve', rationale: 'small, safe check', confidence: 0.9 }),
      script('plan/T-5/', [], plan('T-5', [{ description: 'rotate', files: ['config/secrets.json'] }])),
      script('implement/T-5/step-1/', [{ tool: 'write', path: 'config/secrets.json', content: '{"rotate": true}\n' }]),
      script('decompose/T-5/', [], {
        specs_read: [],
        summary: 'split',
        proposals: [
          {
            proposal_type: 'decompose',
            confidence: 0.9,
            parent_task: 'T-5',
            rationale: 'keep secrets out of the change',
            sub_tasks: [
              { id: 'T-5a', title: 'Rotation schedule', source: 'ES:1', effort: 'S', wave: 2, deps: '-' },
              { id: 'T-5b', title: 'Rotation docs', source: 'ES:1', effort: 'S', wave: 2, deps: '-' },
            ],
          },
        ],
      }),
      script('worker/T-5a/attempt-1/', [{ tool: 'write', path: 'src/rotation.js', content: 'module.exports = { days: 30 };\n' }]),
      script('worker/T-5b/attempt-1/', [{ tool: 'write', path: 'docs/rotation.md', content: '# Rotation\nEvery 30 days.\n' }]),
      script('plan/T-5a/', [], plan('T-5a', [{ description: 'schedule', files: ['src/rotation.js'] }])),
      script('implement/T-5a/step-1/', [{ tool: 'write', path: 'src/rotation.js', content: 'module.exports = { days: 30 };\n' }]),
      script('plan/T-5b/', [], plan('T-5b', [{ description: 'docs', files: ['docs/rotation.md'] }])),
      script('implement/T-5b/step-1/', [{ tool: 'write', path: 'docs/rotation.md', content: '# Rotation\nEvery 30 days.\n' }]),
    ]);
    const { loop, events } = scriptedLoop(p, store, {}, true);
    const summary = await loop.run();
    const status = Object.fromEntries(
      store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view').map((t) => [t.task_id, t.status]),
    );
    assert.deepEqual(
      status,
      { 'T-3': 'done', 'T-4': 'done', 'T-5': 'dropped', 'T-5a': 'done', 'T-5b': 'done' },
      JSON.stringify(
        events.filter((e) => e.type === 'log' || e.type.startsWith('task.')),
        null,
        1,
      ),
    );
    // T-3: failed the test gate once, reflected, fixed on retry.
    assert.ok(events.some((e) => e.type === 'gate.finished' && e.taskId === 'T-3' && e.gate === 'test' && e.status === 'failed'));
    assert.match(readFileSync(join(p.ralphDir, 'REFLECTIONS.md'), 'utf8'), /T-3 \(test, recoverable\)/);
    assert.match(readFileSync(join(p.ralphDir, 'GUARDRAILS.md'), 'utf8'), /arithmetic helper/);
    // The retry is visible in ralph.db: one task.reflected note with the machine's decision.
    const reflected = store
      .all<{ actor: string; payload: string }>(
        "SELECT actor, payload FROM events WHERE entity_type = 'task' AND entity_id = 'T-3' AND event_type = 'task.reflected' ORDER BY event_id",
      )
      .map((r): Record<string, unknown> => ({ ...(JSON.parse(r.payload) as Record<string, unknown>), actor: r.actor }));
    assert.equal(reflected.length, 1, JSON.stringify(reflected));
    assert.deepEqual(
      {
        actor: reflected[0]?.actor,
        attempt: reflected[0]?.attempt,
        gate: reflected[0]?.gate,
        class: reflected[0]?.class,
        decision: reflected[0]?.decision,
      },
      { actor: 'primary', attempt: 1, gate: 'test', class: 'recoverable', decision: 'retry' },
    );
    assert.match(String(reflected[0]?.lesson), /check the operator against the test/);
    // T-4: deferred, judged in a separate invocation that saw only task, diff, gates, rules.
    assert.ok(events.some((e) => e.type === 'patch.deferred' && e.taskId === 'T-4'));
    assert.ok(events.some((e) => e.type === 'verdict' && e.taskId === 'T-4' && e.verdict === 'approve' && e.by === 'judge'));
    const judge = events.find((e) => e.type === 'agent.started' && e.agent === 'judge');
    assert.ok(judge);
    // T-5: decomposed, parent dropped only because its children were accepted.
    assert.ok(events.some((e) => e.type === 'task.decomposed' && e.taskId === 'T-5'));
    assert.ok(summary.promoted >= 4);
    execOk(p.dir, 'node scripts/test.js');
    await assertInvariants(p, store);
  });
});

describe('loop/Loop periodic phases (scripted claude)', function () {
  this.timeout(120_000);
  let p: SampleProject;
  let store: EventStore;
  beforeEach(async () => {
    p = createSampleProject();
    store = await openSampleStore(p.ralphDir);
  });
  afterEach(async () => {
    await store.close().catch(() => undefined);
    rmSync(p.dir, { recursive: true, force: true });
  });

  it('given refactor_dry due after a commit, then its change becomes a maintenance task that passes the gates and is promoted', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-1', title: 'Add add()', effort: 'S', wave: 0 }]);
    writeScenario(p, [
      script('worker/T-1/attempt-1/', [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }]),
      script('plan/T-1/', [], plan('T-1', [{ description: 'add', files: ['src/add.js'] }])),
      script('implement/T-1/step-1/', [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }]),
      script(
        'refactor_dry/-/',
        [{ tool: 'write', path: 'src/add.js', content: '// Adds two numbers.\nmodule.exports = (a, b) => a + b;\n' }],
        'Documented add()',
      ),
    ]);
    const { loop, events } = scriptedLoop(p, store, { periodic: { refactor_every: 1, evolve_every: 1000 } }, true);
    await loop.run();
    const maint = store.all<{ task_id: string; status: string; title: string }>(
      "SELECT task_id, status, title FROM task_view WHERE task_id LIKE 'MAINT-%'",
    );
    assert.equal(
      maint.length,
      1,
      JSON.stringify(
        events.filter((e) => e.type === 'log' || e.type.startsWith('task.') || e.type === 'phase.changed'),
        null,
        1,
      ),
    );
    assert.equal(maint[0]?.status, 'done');
    assert.match(maint[0]?.title ?? '', /^refactor_dry: Documented add\(\)/);
    assert.equal(readFileSync(join(p.dir, 'src', 'add.js'), 'utf8'), '// Adds two numbers.\nmodule.exports = (a, b) => a + b;\n');
    await assertInvariants(p, store);
  });
});

describe('loop/Loop stop, pause and budgets (scripted claude)', function () {
  this.timeout(60_000);
  let p: SampleProject;
  let store: EventStore;
  freshSampleProjectEachTest((s) => ({ p, store } = s));

  it('given agents that never answer, when stopped, then both process groups end within seconds and no task stays claimed', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Slow primary', effort: 'M', wave: 0 },
      { id: 'T-2', title: 'Slow worker', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      { name: 'hang-plan', match: 'RALPH-KEY: plan/T-1/', turns: [{ hang: true }] },
      { name: 'hang-worker', match: 'RALPH-KEY: worker/T-2/', turns: [{ hang: true }] },
    ]);
    const { loop, events } = scriptedLoop(p, store, {}, false);
    await loop.start();
    await loop.events.next((e) => e.type === 'agent.started' && e.agent === 'primary');
    if (!events.some((e) => e.type === 'agent.started' && e.agent === 'worker-1'))
      await loop.events.next((e) => e.type === 'agent.started' && e.agent === 'worker-1');
    const t0 = Date.now();
    const summary = await loop.stop('test stop');
    assert.ok(Date.now() - t0 < 5000, `stopped in ${Date.now() - t0} ms`);
    assert.equal(summary.stopReason, 'test stop');
    assert.equal(loop.state, 'stopped');
    const finished = events.filter((e) => e.type === 'agent.finished');
    assert.deepEqual(finished.map((e) => e.type === 'agent.finished' && e.status).sort(), ['cancelled', 'cancelled']);
    const claimed = store.all("SELECT task_id FROM task_view WHERE status = 'claimed'");
    assert.deepEqual(claimed, []);
  });

  it('given a paused loop whose inbox poll is an hour away, when a resume lands in its inbox, then the loop reads it on arrival and runs again', async () => {
    writeScenario(p, []);
    // Paused, no agent reads the inbox at its assess: only the watch (or the poll) can.
    const { loop } = scriptedLoop(p, store, { workers: { count: 0 } }, false, { inboxPollMs: 3_600_000 });
    await loop.start();
    loop.pause('test pause');
    assert.equal(loop.state, 'paused');
    const resumed = loop.events.next((e) => e.type === 'loop.state' && e.state === 'running');
    submitToInbox(p.ralphDir, { command: 'resume', actor: 'human:test', reason: 'back' });
    await resumed;
    assert.equal(loop.state, 'running');
    await loop.stop('done testing');
    assert.deepEqual(
      readdirSync(join(p.ralphDir, 'inbox')).filter((f) => f.endsWith('.json')),
      [],
      'the command file was moved out',
    );
  });

  it('given a deferred tier-2 patch, when a human approves through the inbox while the judge is still thinking, then the judge is cancelled at once, the human wins and it is promoted once', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    writeScenario(p, [
      script('plan/T-4/', [], plan('T-4', [{ description: 'token check', files: ['src/auth/token.js'] }])),
      script('implement/T-4/step-1/', [{ tool: 'write', path: 'src/auth/token.js', content: 'module.exports = (t) => t.length > 8;\n' }]),
      // A slow judge that would reject late: its verdict must never count.
      {
        name: 'slow-judge',
        match: 'RALPH-KEY: review_deferred/T-4/',
        turns: [
          {
            text: JSON.stringify({ task_id: 'T-4', verdict: 'reject', rationale: 'too late to matter', confidence: 0.9 }),
            delayMs: 600_000,
          },
        ],
      },
    ]);
    const { loop, events } = scriptedLoop(p, store, {}, false);
    await loop.start();
    await loop.events.next((e) => e.type === 'agent.started' && e.agent === 'judge');
    const judgeDone = loop.events.next((e) => e.type === 'agent.finished' && e.agent === 'judge');
    submitToInbox(p.ralphDir, {
      command: 'resolve-deferred',
      task_id: 'T-4',
      decision: 'approve',
      actor: 'human:test',
      rationale: 'looks fine to me',
    });
    await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-4');
    // The judge ends because of the human, not because of the stop (which comes after).
    const finished = await judgeDone;
    assert.ok(finished.type === 'agent.finished' && finished.status === 'cancelled', JSON.stringify(finished));
    submitToInbox(p.ralphDir, { command: 'stop', actor: 'human:test', reason: 'done testing' });
    const summary = await loop.whenStopped();
    assert.equal(summary.stopReason, 'done testing');
    assert.ok(events.some((e) => e.type === 'verdict' && e.by === 'human' && e.verdict === 'approve'));
    assert.ok(!events.some((e) => e.type === 'verdict' && e.by === 'judge'));
    assert.equal(events.filter((e) => e.type === 'patch.promoted' && e.taskId === 'T-4').length, 1);
    assert.equal(store.get<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE entity_id = 'T-4' AND event_type = 'task.done'")?.n, 1);
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-4'")?.status, 'done');
    await assertInvariants(p, store);
  });

  it('given an uncommitted user edit to a file the task changes, then the promotion waits with the reason; once the user commits it, the conflict sends the task back naming it', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-6', title: 'Readme section', effort: 'S', wave: 0 }]);
    writeScenario(p, [script('worker/T-6/attempt-1/', [{ tool: 'write', path: 'README.md', content: '# Sample\n\n## Usage\nrun it\n' }])]);
    writeFileSync(join(p.dir, 'README.md'), '# Sample\nmy local notes\n');
    const { loop, events } = scriptedLoop(p, store, { workers: { count: 1 } }, false);
    await loop.start();
    const waiting = await loop.events.next((e) => e.type === 'patch.waiting');
    assert.ok(waiting.type === 'patch.waiting' && /README\.md \(modified\)/.test(waiting.reason), JSON.stringify(waiting));
    assert.equal(readFileSync(join(p.dir, 'README.md'), 'utf8'), '# Sample\nmy local notes\n', 'the user edit is untouched');
    // The user resolves it by committing their edit; the patch then applies 3-way or conflicts visibly.
    git(p.dir, 'commit', '-q', '-am', 'user notes');
    loop.wakeAll();
    // Both sides add their lines after the same first line: the patch cannot apply on the
    // user's commit, so the task goes back with that reason, and its next attempt is told.
    const settled = await loop.events.next((e) => (e.type === 'patch.promoted' || e.type === 'task.released') && e.taskId === 'T-6');
    await loop.stop();
    assert.ok(events.some((e) => e.type === 'patch.waiting'));
    assert.equal(settled.type, 'task.released', JSON.stringify(settled));
    assert.match(
      settled.type === 'task.released' ? settled.reason : '',
      /^promotion failed after waiting: main moved to [0-9a-f]{8} and the patch does not apply there \(conflicts in README\.md\)/,
    );
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-6'")?.status, 'pending');
    const adapter = new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: sampleSettings().riskPatterns });
    assert.match(adapter.retryNotes('T-6').join('\n'), /^Your previous patch conflicted with the branch .*conflicts in README\.md/);
    assert.equal(readFileSync(join(p.dir, 'README.md'), 'utf8'), '# Sample\nmy local notes\n', "the user's committed edit stays");
    await assertInvariants(p, store);
  });

  it('given the branch moved under a patch in a conflicting way, then the worktree is rebased, and when that conflicts the task is released with the reason (never a silent discard)', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-7', title: 'Rename sample', effort: 'S', wave: 0 }]);
    writeScenario(p, [
      {
        name: 'slow edit',
        match: 'RALPH-KEY: worker/T-7/attempt-1/',
        turns: [
          { tools: [{ tool: 'write', path: 'README.md', content: '# Sample, as the agent wants it\n' }] },
          AWAIT_GO,
          { text: 'done' },
        ],
      },
    ]);
    const { loop, events } = scriptedLoop(p, store, { workers: { count: 1 } }, false);
    await loop.start();
    await loop.events.next((e) => e.type === 'agent.started' && e.taskId === 'T-7');
    // Meanwhile the user commits a conflicting change of the same line on main; then the agent goes on.
    writeFileSync(join(p.dir, 'README.md'), '# Sample, as the user wants it\n');
    git(p.dir, 'commit', '-q', '-am', 'user: version 2');
    await letAgentGoOn(p.dir, 'worker-1');
    const released = await loop.events.next((e) => e.type === 'task.released' && e.taskId === 'T-7');
    await loop.stop();
    assert.ok(released.type === 'task.released');
    assert.match(
      released.reason,
      /rebase onto [0-9a-f]{8} conflicts in README\.md \(changed on main since [0-9a-f]{8} by [0-9a-f]{7,} user: version 2\)/,
    );
    assert.ok(events.some((e) => e.type === 'patch.discarded' && e.taskId === 'T-7'));
    // The next attempt's prompt is told what it conflicted with.
    const adapter = new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: sampleSettings().riskPatterns });
    const notes = adapter.retryNotes('T-7');
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.match(
      notes[0]!,
      /^Your previous patch conflicted with the branch and was discarded: .*conflicts in README\.md .*user: version 2\)\. Work from the branch/,
    );
    assert.match(git(p.dir, 'log', '-1', '--format=%s', 'main'), /user: version 2/);
    await assertInvariants(p, store);
  });

  it('given the branch moved under a patch without conflict, then the patch is rebased and verified again before it is promoted (gates always saw the parent)', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-8', title: 'Add notes', effort: 'S', wave: 0 }]);
    writeScenario(p, [
      {
        name: 'slow add',
        match: 'RALPH-KEY: worker/T-8/attempt-1/',
        turns: [{ tools: [{ tool: 'write', path: 'NOTES.md', content: '# Notes\n' }] }, AWAIT_GO, { text: 'done' }],
      },
    ]);
    const { loop, events } = scriptedLoop(p, store, { workers: { count: 1 } }, false);
    await loop.start();
    await loop.events.next((e) => e.type === 'agent.started' && e.taskId === 'T-8');
    // Meanwhile the user commits an unrelated file on main.
    writeFileSync(join(p.dir, 'USER.md'), 'mine\n');
    git(p.dir, 'add', 'USER.md');
    git(p.dir, 'commit', '-q', '-m', 'user: unrelated');
    const userCommit = git(p.dir, 'rev-parse', 'main').trim();
    await letAgentGoOn(p.dir, 'worker-1');
    const promoted = await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-8');
    await loop.stop();
    assert.ok(promoted.type === 'patch.promoted');
    assert.equal(git(p.dir, 'rev-parse', `${promoted.commit}^`).trim(), userCommit);
    const verifies = events.filter((e) => e.type === 'gate.finished' && e.taskId === 'T-8' && e.gate === 'forbidden_patterns');
    assert.equal(verifies.length, 2, 'verified on the old base, then again after the rebase');
    const discarded = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'patch.discarded'");
    assert.ok(
      discarded.some((r) => /superseded by a rebase/.test(r.payload)),
      'the first patch is discarded as superseded',
    );
    // The task never looked free to claim while its patch was re-based.
    const statuses = store
      .all<{ event_type: string }>("SELECT event_type FROM events WHERE entity_id = 'T-8' AND entity_type = 'task' ORDER BY event_id")
      .map((r) => r.event_type);
    assert.deepEqual(statuses.filter((t) => /^task\.(claimed|pending|proposed|done)$/.test(t)).slice(-4), [
      'task.claimed',
      'task.proposed',
      'task.proposed',
      'task.done',
    ]);
    await assertInvariants(p, store);
  });

  it('given a paused loop, then no agent starts until it is resumed', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-2', title: 'Quick', effort: 'S', wave: 0 }]);
    writeScenario(p, [script('worker/T-2/attempt-1/', [{ tool: 'write', path: 'src/q.js', content: 'module.exports = 1;\n' }])]);
    const { loop, events } = scriptedLoop(p, store, { workers: { count: 1 } }, false);
    await loop.start();
    loop.pause('test pause');
    const startedBefore = events.filter((e) => e.type === 'agent.started').length;
    assert.equal(loop.state, 'paused');
    loop.resume();
    await loop.events.next((e) => e.type === 'patch.promoted');
    assert.ok(startedBefore <= 1);
    await loop.stop();
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-2'")?.status, 'done');
  });

  it('given every call answered 401, then the loop pauses once with the reason as a typed event, status says it, nothing starts while paused, and a resume through the inbox goes on once the model answers', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-1', title: 'Addition', effort: 'M', wave: 0 }]);
    // Every invocation alike: the API refuses the key before any turn.
    writeFileSync(
      p.scenarioFile,
      JSON.stringify({ scripts: [{ name: 'unauthorized', turns: [{ error: { status: 401, message: 'invalid x-api-key' } }] }] }),
    );
    const { loop, events } = scriptedLoop(p, store, {}, false);
    // Another process reads the journal: wait until the pause is acknowledged (on disk), not
    // only applied to this process's database, before asking `ralph status`.
    const pauseOnDisk = new Promise<void>((resolve) => {
      const sub = store.onDidAppend((batch) => {
        if (!batch.some((e) => e.event_type === 'loop.paused')) return;
        sub.dispose();
        resolve();
      });
    });
    await loop.start();
    await loop.events.next((e) => e.type === 'loop.state' && e.state === 'paused');
    await pauseOnDisk;
    assert.equal(loop.state, 'paused', 'paused, not stopped');
    const paused = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'loop.paused'");
    assert.equal(paused.length, 1, 'one pause');
    const pause = JSON.parse(paused[0]?.payload ?? '{}') as Record<string, unknown>;
    assert.equal(pause['cause'], 'agents_failing');
    assert.equal(pause['failure_class'], 'not_logged_in');
    assert.deepEqual(pause['agents'], ['primary']);
    assert.match(String(pause['reason']), /primary fails the same way: the agent CLI is not logged in .*401.*then resume/);
    const startedAtPause = events.filter((e) => e.type === 'agent.started').length;
    assert.ok(startedAtPause >= 2 && startedAtPause <= 3, `paused after ${startedAtPause} invocations`);
    // What a person sees, from another process (an observer of the running writer).
    const text = execFileSync(process.execPath, [CLI, 'status'], { cwd: p.dir, encoding: 'utf8' });
    assert.match(text, /Paused since \S+: primary fails the same way: the agent CLI is not logged in/);
    const json = JSON.parse(execFileSync(process.execPath, [CLI, 'status', '--json'], { cwd: p.dir, encoding: 'utf8' })) as {
      paused?: { reason: string; failureClass?: string; agents?: string[] };
    };
    assert.equal(json.paused?.failureClass, 'not_logged_in');
    assert.deepEqual(json.paused?.agents, ['primary']);
    // Two CLI runs later (real time passed), still nothing started: no spinning, no spend.
    assert.equal(events.filter((e) => e.type === 'agent.started').length, startedAtPause, 'no agent starts while paused');
    // The key is fixed; the person resumes through the inbox, as VS Code's Resume does.
    writeScenario(p, [
      script('plan/T-1/', [], plan('T-1', [{ description: 'add', files: ['src/add.js'] }])),
      script('implement/T-1/step-1/', [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }]),
    ]);
    submitToInbox(p.ralphDir, { command: 'resume', actor: 'human:test', reason: 'logged in again' });
    await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-1');
    await loop.stop('done testing');
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-1'")?.status, 'done');
    assert.equal(store.all("SELECT 1 FROM events WHERE event_type = 'loop.resumed'").length, 1);
    assert.equal(store.all("SELECT 1 FROM events WHERE event_type = 'loop.paused'").length, 1, 'the working model does not pause it again');
    const after = execFileSync(process.execPath, [CLI, 'status', '--json'], { cwd: p.dir, encoding: 'utf8' });
    assert.equal((JSON.parse(after) as { paused?: unknown }).paused, undefined, 'status no longer says paused');
  });

  it('given the day budget already spent, then the loop stops (once) with a budget event and runs no agent', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-2', title: 'Quick', effort: 'S', wave: 0 }]);
    writeScenario(p, []);
    const today = new Date().toISOString();
    writeFileSync(
      join(p.ralphDir, 'logs', `par-metrics-${today.slice(0, 10).replace(/-/g, '')}.jsonl`),
      JSON.stringify({ ts: today, agent: 'A', cost: 60, task: null }) + '\n',
    );
    const { loop, events } = scriptedLoop(p, store, { budgets: { per_day: 50 } }, true);
    const summary = await loop.run();
    assert.match(summary.stopReason, /daily budget reached/);
    assert.equal(events.filter((e) => e.type === 'agent.started').length, 0);
  });
});

function execOk(cwd: string, cmd: string): void {
  execSync(cmd, { cwd, stdio: 'pipe' });
}
