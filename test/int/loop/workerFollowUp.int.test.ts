// Worker retries and a reviewer's modify, with real git, a real sql.js store, real gates and
// the scripted claude: a worker's failed attempts are task.reflected notes (and a worker that
// gives up writes its lesson to REFLECTIONS.md); a tier-2 task a human resolves `modify`
// through the inbox is attempted again from the reviewed patch, with the change asked in the
// prompt, and its promoted commit holds both; a worker takes the efforts workers.effort names.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { Loop } from '../../../src/loop/loop';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { startFromPatch } from '../../../src/loop/startFromPatch';
import { submitToInbox } from '../../../src/control/inbox';
import { capturePatch } from '../../../src/git/capture';
import { ensureWorktree } from '../../../src/git/worktrees';
import { runCli } from '../../../src/cli/run';
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
import { git } from '../../kit/git';

function notes(store: EventStore, taskId: string, type: string): Record<string, unknown>[] {
  return store
    .all<{ actor: string; payload: string }>(
      "SELECT actor, payload FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type = ? ORDER BY event_id",
      [taskId, type],
    )
    .map((r) => ({ ...(JSON.parse(r.payload) as Record<string, unknown>), actor: r.actor }));
}

const debugOf = (events: readonly LoopEvent[]): string =>
  JSON.stringify(
    events.filter((e) => e.type === 'log' || e.type.startsWith('task.') || e.type.startsWith('patch.')),
    null,
    1,
  );

const statusOf = (store: EventStore, id: string): string | undefined =>
  store.get<{ status: string }>('SELECT status FROM task_view WHERE task_id = ?', [id])?.status;

/** Resolves when the predicate holds for an event already seen or a later one. */
function seen(loop: Loop, events: readonly LoopEvent[], pred: (e: LoopEvent) => boolean): Promise<LoopEvent> {
  const hit = events.find(pred);
  return hit !== undefined ? Promise.resolve(hit) : loop.events.next(pred);
}

/** Resolves at the n-th event (counting those already seen) the predicate holds for. */
function nth(loop: Loop, events: readonly LoopEvent[], pred: (e: LoopEvent) => boolean, n: number): Promise<LoopEvent> {
  let count = events.filter(pred).length;
  const last = events.filter(pred)[n - 1];
  if (last !== undefined) return Promise.resolve(last);
  return loop.events.next((e) => pred(e) && ++count >= n);
}

describe('loop/worker retries and follow-ups (scripted claude)', function () {
  this.timeout(120_000);
  let p: SampleProject;
  let store: EventStore;
  freshSampleProjectEachTest((s) => ({ p, store } = s));

  it('given a worker task failing its tests first and one failing the same way twice, then each failed attempt is a task.reflected note, the first is fixed on retry and the second blocked with its lesson in REFLECTIONS.md', async () => {
    await addTasks(store, p.ralphDir, [
      // Keeps the primary busy (its plan never answers), so the S tasks go to the worker.
      { id: 'T-0', title: 'Slow primary work', effort: 'M', wave: 0 },
      { id: 'T-3', title: 'Add sub()', effort: 'S', wave: 0 },
      { id: 'T-6', title: 'Add half()', effort: 'S', wave: 0 },
    ]);
    const subTest = "require('assert').equal(require('../src/sub.js')(5, 3), 2);\n";
    writeScenario(p, [
      { name: 'hang-plan', match: 'RALPH-KEY: plan/T-0/', turns: [{ hang: true }] },
      script('worker/T-3/attempt-1/', [
        { tool: 'write', path: 'src/sub.js', content: 'module.exports = (a, b) => a + b;\n' },
        { tool: 'write', path: 'test/sub.test.js', content: subTest },
      ]),
      script('worker/T-3/attempt-2/', [{ tool: 'write', path: 'src/sub.js', content: 'module.exports = (a, b) => a - b;\n' }]),
      // Every attempt of T-6 writes the same wrong code: the same failure twice.
      script('worker/T-6/', [
        { tool: 'write', path: 'src/half.js', content: 'module.exports = (a) => a * 2;\n' },
        { tool: 'write', path: 'test/half.test.js', content: "require('assert').equal(require('../src/half.js')(8), 4);\n" },
      ]),
    ]);
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    try {
      await seen(loop, events, (e) => e.type === 'patch.promoted' && e.taskId === 'T-3');
      await seen(loop, events, (e) => e.type === 'task.blocked' && e.taskId === 'T-6');
    } finally {
      await loop.stop('test done');
    }
    const debug = JSON.stringify(
      events.filter((e) => e.type === 'log' || e.type.startsWith('task.')),
      null,
      1,
    );
    assert.equal(statusOf(store, 'T-3'), 'done', debug);
    assert.equal(statusOf(store, 'T-6'), 'blocked', debug);

    // T-3: one failed attempt, retried, then promoted.
    const r3 = notes(store, 'T-3', 'task.reflected');
    assert.equal(r3.length, 1, JSON.stringify(r3));
    const { lesson: lesson3, ...rest3 } = r3[0] ?? {};
    assert.deepEqual(rest3, { attempt: 1, gate: 'test', origin: 'worker', class: 'recoverable', decision: 'retry', actor: 'worker-1' });
    assert.match(String(lesson3), /^test: AssertionError \[ERR_ASSERTION\]: 8 == 2$/);

    // T-6: retried once, then the identical failure blocks it; the lesson is kept.
    const r6 = notes(store, 'T-6', 'task.reflected');
    assert.deepEqual(
      r6.map((r) => [r['attempt'], r['gate'], r['origin'], r['class'], r['decision']]),
      [
        [1, 'test', 'worker', 'recoverable', 'retry'],
        [2, 'test', 'worker', 'recoverable', 'block'],
      ],
    );
    const reflections = readFileSync(join(p.ralphDir, 'REFLECTIONS.md'), 'utf8');
    assert.match(
      reflections,
      /T-6 \(test, recoverable\)\nidentical test failure twice; not retrying the same way \(worker worker-1, attempt 2\)\.\nLast output: test: AssertionError \[ERR_ASSERTION\]: 16 == 4/,
    );
    assert.ok(!/T-3 \(/.test(reflections), 'a task fixed on retry leaves no lesson');
  });

  const token = 'module.exports = (t) => typeof t === "string" && t.length > 8;\n';
  // Requires the first attempt's file: the build gate fails unless the reviewed patch is there.
  const minLength = "module.exports = { MIN_LENGTH: 9, check: require('./token.js') };\n";
  const modification = 'also export the minimum token length';
  /** The follow-up's work step, whoever runs it: it matches only the sentence with the modification. */
  const followUpScript = {
    name: 'follow-up',
    match: `A reviewer asked for this change on top of the patch already in your worktree: ${modification}`,
    turns: [
      { tools: [{ tool: 'write', path: 'src/auth/minLength.js', content: minLength }] },
      { text: 'DONE: exported the minimum length' },
    ],
  };

  /** After the modify: the follow-up's patch (tier 2 again) is deferred a second time; then it is approved and promoted. */
  async function throughFollowUp(
    loop: Loop,
    events: LoopEvent[],
    approve: () => void,
  ): Promise<Extract<LoopEvent, { type: 'patch.promoted' }>> {
    try {
      await nth(loop, events, (e) => e.type === 'patch.deferred' && e.taskId === 'T-9', 2);
      assert.ok(
        events.some((e) => e.type === 'log' && e.message.includes('follow-up of human:test')),
        debugOf(events),
      );
      approve();
      const promoted = await seen(loop, events, (e) => e.type === 'patch.promoted' && e.taskId === 'T-9');
      assert.ok(promoted.type === 'patch.promoted');
      return promoted;
    } finally {
      await loop.stop('test done');
    }
  }

  function assertFollowedUp(
    events: readonly LoopEvent[],
    reviewed: { patch_id: string; patch_path: string },
    agent: string,
    approvedBy: string,
    commit: string,
  ): void {
    const debug = debugOf(events);
    // The reference's CLI contract: modify -> pending with the modification, the patch discarded.
    const resolved = notes(store, 'T-9', 'task.deferral_resolved');
    assert.deepEqual(
      resolved.map((r) => [r['actor'], r['decision'], r['new_status'], r['modification'] ?? null, r['discarded_patch_id'] ?? null]),
      [
        ['human:test', 'modify', 'pending', modification, reviewed.patch_id],
        [approvedBy, 'approve', 'proposed', null, null],
      ],
      debug,
    );
    // The follow-up started from the reviewed patch, recorded before the agent ran: the modify
    // closed that patch, so its file is read where the store archived it (commits/discarded/).
    const archived = reviewed.patch_path.replace(`${sep}commits${sep}pending${sep}`, `${sep}commits${sep}discarded${sep}`);
    assert.notEqual(archived, reviewed.patch_path, 'the reviewed patch was queued under commits/pending/');
    assert.ok(existsSync(archived), `the reviewed patch's file is kept at ${archived}`);
    const followUps = notes(store, 'T-9', 'task.follow_up');
    assert.equal(followUps.length, 1, JSON.stringify(followUps));
    assert.deepEqual(
      {
        agent: followUps[0]?.['actor'],
        from: followUps[0]?.['started_from'],
        patch: followUps[0]?.['reviewed_patch_id'],
        path: followUps[0]?.['patch_path'],
        by: followUps[0]?.['requested_by'],
      },
      { agent, from: 'patch', patch: reviewed.patch_id, path: archived, by: 'human:test' },
    );
    const startedLog = events.findIndex(
      (e) => e.type === 'log' && e.message.includes(`follow-up of human:test's modify starts from patch ${reviewed.patch_id}`),
    );
    assert.ok(startedLog >= 0, debug);
    const nextRun = events.findIndex((e, i) => i > startedLog && e.type === 'agent.started' && e.agent === agent && e.taskId === 'T-9');
    assert.ok(nextRun > startedLog, 'the patch is in the worktree before the agent starts');
    // The agent wrote one file; the promoted commit holds the reviewed change too.
    const files = git(p.dir, 'show', '--name-only', '--format=', commit).split('\n').sort();
    assert.deepEqual(files, ['src/auth/minLength.js', 'src/auth/token.js']);
    assert.equal(git(p.dir, 'show', `${commit}:src/auth/token.js`) + '\n', token);
    assert.equal(statusOf(store, 'T-9'), 'done');
    // Closed by the approval; the notes of any later attempt keep the modification as history.
    const adapter = new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: sampleSettings().riskPatterns });
    assert.equal(adapter.followUp('T-9'), null);
    assert.deepEqual(adapter.retryNotes('T-9'), [`Reviewer asked for a change: ${modification}`]);
  }

  it('given a gate whose tool is not installed (exit 127), then the worker releases the task after one attempt as an environment failure and backs off, instead of paying for retries', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-0', title: 'Slow primary work', effort: 'M', wave: 0 },
      { id: 'T-7', title: 'Add inc()', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      { name: 'hang-plan', match: 'RALPH-KEY: plan/T-0/', turns: [{ hang: true }] },
      script('worker/T-7/', [{ tool: 'write', path: 'src/inc.js', content: 'module.exports = (a) => a + 1;\n' }]),
    ]);
    const { loop, events } = scriptedLoop(p, store, { build: 'ralph-no-such-tool-xyz --version' });
    await loop.start();
    try {
      await seen(loop, events, (e) => e.type === 'task.released' && e.taskId === 'T-7');
    } finally {
      await loop.stop('test done');
    }
    const runs = events.filter((e) => e.type === 'agent.started' && e.taskId === 'T-7');
    assert.equal(runs.length, 1, 'one paid attempt, no retries against a missing tool');
    const released = events.find((e) => e.type === 'task.released' && e.taskId === 'T-7');
    assert.ok(
      released?.type === 'task.released' && /build could not run .*fix the environment/.test(released.reason),
      JSON.stringify(released),
    );
    const reflected = notes(store, 'T-7', 'task.reflected');
    assert.deepEqual(
      reflected.map((n) => [n['class'], n['decision'], n['gate']]),
      [['environment', 'release', 'build']],
    );
    assert.equal(statusOf(store, 'T-7'), 'pending');
    assert.match(readFileSync(join(p.ralphDir, 'REFLECTIONS.md'), 'utf8'), /T-7 \(build, environment\)/);
  });

  it('given a tool that stays missing, then the second environment failure blocks the task with what to do, instead of more paid attempts', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-0', title: 'Slow primary work', effort: 'M', wave: 0 },
      { id: 'T-7', title: 'Add inc()', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      { name: 'hang-plan', match: 'RALPH-KEY: plan/T-0/', turns: [{ hang: true }] },
      script('worker/T-7/', [{ tool: 'write', path: 'src/inc.js', content: 'module.exports = (a) => a + 1;\n' }]),
    ]);
    const { loop, events } = scriptedLoop(p, store, { build: 'ralph-no-such-tool-xyz --version' });
    await loop.start();
    let blocked: LoopEvent;
    try {
      blocked = await seen(loop, events, (e) => e.type === 'task.blocked' && e.taskId === 'T-7');
    } finally {
      await loop.stop('test done');
    }
    assert.ok(
      blocked.type === 'task.blocked' && /could not run .* in 2 attempts; fix the environment, then unblock the task/.test(blocked.reason),
      JSON.stringify(blocked),
    );
    assert.equal(events.filter((e) => e.type === 'agent.started' && e.taskId === 'T-7').length, 2);
    assert.equal(statusOf(store, 'T-7'), 'blocked');
  });

  it("given a tier-2 worker patch a human resolves `modify` through the inbox, then the worker's next attempt starts from the reviewed patch with the change in its prompt, and the promoted commit holds both changes", async () => {
    await addTasks(store, p.ralphDir, [
      // Keeps the primary busy (its plan never answers): the worker does T-9 and nobody judges.
      { id: 'T-0', title: 'Slow primary work', effort: 'M', wave: 0 },
      { id: 'T-9', title: 'Token check', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      { name: 'hang-plan', match: 'RALPH-KEY: plan/T-0/', turns: [{ hang: true }] },
      followUpScript,
      script('worker/T-9/attempt-1/', [{ tool: 'write', path: 'src/auth/token.js', content: token }]),
    ]);
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    await seen(loop, events, (e) => e.type === 'patch.deferred' && e.taskId === 'T-9');
    const reviewed = store.get<{ patch_id: string; patch_path: string }>(
      "SELECT patch_id, patch_path FROM patch_view WHERE task_id = 'T-9' AND status = 'queued'",
    );
    assert.ok(reviewed, 'the deferred patch is queued');
    submitToInbox(p.ralphDir, {
      command: 'resolve-deferred',
      task_id: 'T-9',
      decision: 'modify',
      actor: 'human:test',
      rationale: modification,
    });
    const promoted = await throughFollowUp(loop, events, () =>
      submitToInbox(p.ralphDir, {
        command: 'resolve-deferred',
        task_id: 'T-9',
        decision: 'approve',
        actor: 'human:test',
        rationale: 'as asked',
      }),
    );
    assertFollowedUp(events, reviewed, 'worker-1', 'human:test', promoted.commit);
  });

  it('given a tier-2 primary patch a human resolves `modify` while the judge thinks, then the primary replans from the reviewed patch with the change in its prompts, and the judge approves both changes', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-9', title: 'Token check', effort: 'S', wave: 0 }]);
    writeScenario(p, [
      script('plan/T-9/', [], plan('T-9', [{ description: 'token check', files: ['src/auth/token.js'] }])),
      followUpScript,
      script('implement/T-9/step-1/', [{ tool: 'write', path: 'src/auth/token.js', content: token }]),
      // The second review sees both files and approves; the first one thinks until the human decides.
      {
        name: 'judge-approves',
        match: 'src/auth/minLength.js',
        turns: [{ text: JSON.stringify({ task_id: 'T-9', verdict: 'approve', rationale: 'as asked', confidence: 0.9 }) }],
      },
      {
        name: 'slow-judge',
        match: 'RALPH-KEY: review_deferred/T-9/',
        turns: [
          {
            text: JSON.stringify({ task_id: 'T-9', verdict: 'reject', rationale: 'too late to matter', confidence: 0.9 }),
            delayMs: 600_000,
          },
        ],
      },
    ]);
    const { loop, events } = scriptedLoop(p, store, { workers: { count: 0 } });
    await loop.start();
    await seen(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    const reviewed = store.get<{ patch_id: string; patch_path: string }>(
      "SELECT patch_id, patch_path FROM patch_view WHERE task_id = 'T-9' AND status = 'queued'",
    );
    assert.ok(reviewed, 'the deferred patch is queued');
    submitToInbox(p.ralphDir, {
      command: 'resolve-deferred',
      task_id: 'T-9',
      decision: 'modify',
      actor: 'human:test',
      rationale: modification,
    });
    const promoted = await throughFollowUp(loop, events, () => undefined);
    assertFollowedUp(events, reviewed, 'primary', 'judge', promoted.commit);
  });

  it('given the branch changed the reviewed lines before the follow-up, then the worker starts from scratch, is told so with the change, and the note says why', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-0', title: 'Slow primary work', effort: 'M', wave: 0 },
      { id: 'T-9', title: 'Token check', effort: 'S', wave: 0 },
    ]);
    writeScenario(p, [
      { name: 'hang-plan', match: 'RALPH-KEY: plan/T-0/', turns: [{ hang: true }] },
      {
        name: 'from-scratch',
        match: `A reviewer asked for this change to this task's previous patch: ${modification}`,
        turns: [
          {
            tools: [
              { tool: 'write', path: 'src/auth/token.js', content: token },
              { tool: 'write', path: 'src/auth/minLength.js', content: minLength },
            ],
          },
          { text: 'DONE: redone with the minimum length' },
        ],
      },
      script('worker/T-9/attempt-1/', [{ tool: 'write', path: 'src/auth/token.js', content: token }]),
    ]);
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    await seen(loop, events, (e) => e.type === 'patch.deferred' && e.taskId === 'T-9');
    // Meanwhile the user commits their own version of the same file.
    mkdirSync(join(p.dir, 'src', 'auth'), { recursive: true });
    writeFileSync(join(p.dir, 'src', 'auth', 'token.js'), 'module.exports = (t) => Boolean(t);\n');
    git(p.dir, 'add', 'src/auth/token.js');
    git(p.dir, 'commit', '-q', '-m', 'user: own token check');
    submitToInbox(p.ralphDir, {
      command: 'resolve-deferred',
      task_id: 'T-9',
      decision: 'modify',
      actor: 'human:test',
      rationale: modification,
    });
    try {
      await nth(loop, events, (e) => e.type === 'patch.deferred' && e.taskId === 'T-9', 2);
    } finally {
      await loop.stop('test done');
    }
    const followUps = notes(store, 'T-9', 'task.follow_up');
    assert.equal(followUps.length, 1, debugOf(events));
    assert.equal(followUps[0]?.['started_from'], 'scratch');
    assert.match(String(followUps[0]?.['reason']), /no longer applies to [0-9a-f]{8}/);
    assert.ok(
      events.some((e) => e.type === 'log' && e.level === 'warn' && /follow-up of human:test's modify starts from scratch/.test(e.message)),
    );
    // The from-scratch prompt matched: its patch carries the agent's own two files.
    const second = store.get<{ patch_path: string }>("SELECT patch_path FROM patch_view WHERE task_id = 'T-9' AND status = 'queued'");
    assert.match(readFileSync(second?.patch_path ?? '', 'utf8'), /src\/auth\/minLength\.js/);
  });

  it('given workers.effort ["S","M"], then the worker claims an M task; the CLI claims by --efforts and keeps its default output', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Medium', effort: 'M', wave: 0 },
      { id: 'T-2', title: 'Large', effort: 'L', wave: 0 },
    ]);
    const settings = sampleSettings({ workers: { count: 1, effort: ['S', 'M'] } });
    assert.deepEqual(settings.workerEfforts, ['S', 'M']);
    const adapter = new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns });
    assert.equal(await adapter.claimReadyTask('worker-1', 'worker', { exclude: [] }), null, 'default S: nothing for a worker');
    assert.equal((await adapter.claimReadyTask('worker-1', 'worker', { exclude: [], efforts: settings.workerEfforts }))?.task_id, 'T-1');
    await store.close();

    const run = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
      let out = '';
      let err = '';
      const code = await runCli(['--dir', p.dir, ...args], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
      return { code, out, err };
    };
    assert.deepEqual(await run('pick-ready-task', 'worker'), { code: 0, out: 'NONE\n', err: '' });
    assert.deepEqual(await run('claim-ready-task', 'worker', '--owner', 'worker-2', '--efforts', 'S,L'), {
      code: 0,
      out: 'T-2\n',
      err: '',
    });
    const bad = await run('claim-ready-task', 'worker', '--efforts', 'S,Q');
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /unknown effort 'Q'/);
    store = await openSampleStore(p.ralphDir);
    assert.equal(statusOf(store, 'T-2'), 'claimed');
  });
});

describe('loop/startFromPatch (real git)', () => {
  let p: SampleProject;
  beforeEach(() => {
    p = createSampleProject();
  });
  afterEach(() => rmSync(p.dir, { recursive: true, force: true }));

  async function reviewedPatch(): Promise<string> {
    const wt = await ensureWorktree(p.dir, { name: 'worker-1', branch: 'main' });
    writeFileSync(join(wt.path, 'README.md'), '# Sample\nreviewed line\n');
    writeFileSync(join(wt.path, 'src', 'new.js'), 'module.exports = 1;\n');
    return (await capturePatch(wt.path, wt.base, join(p.ralphDir, 'commits', 'pending', 'T-1_worker-1_x.patch'))).path;
  }

  it('given the branch moved without touching the patched files, then the reviewed patch lands on the fresh worktree', async () => {
    const patch = await reviewedPatch();
    writeFileSync(join(p.dir, 'OTHER.md'), 'x\n');
    git(p.dir, 'add', 'OTHER.md');
    git(p.dir, 'commit', '-q', '-m', 'unrelated');
    const wt = await ensureWorktree(p.dir, { name: 'worker-1', branch: 'main' });
    assert.deepEqual(await startFromPatch(wt.path, wt.base, patch), { applied: true });
    assert.equal(readFileSync(join(wt.path, 'README.md'), 'utf8'), '# Sample\nreviewed line\n');
    assert.equal(readFileSync(join(wt.path, 'src', 'new.js'), 'utf8'), 'module.exports = 1;\n');
    assert.equal(readFileSync(join(wt.path, 'OTHER.md'), 'utf8'), 'x\n');
  });

  it('given the branch changed the same lines, then it does not apply, the worktree is clean at its base, and the reason says so', async () => {
    const patch = await reviewedPatch();
    writeFileSync(join(p.dir, 'README.md'), '# Sample\nthe user rewrote this line\n');
    git(p.dir, 'commit', '-q', '-am', 'conflicting');
    const wt = await ensureWorktree(p.dir, { name: 'worker-1', branch: 'main' });
    const r = await startFromPatch(wt.path, wt.base, patch);
    assert.equal(r.applied, false);
    assert.match(r.applied ? '' : r.reason, new RegExp(`no longer applies to ${wt.base.slice(0, 8)}`));
    assert.equal(git(wt.path, 'status', '--porcelain'), '', 'no conflict markers or half-applied files stay');
    assert.equal(git(wt.path, 'rev-parse', 'HEAD'), wt.base);
  });

  it('given the patch file is gone, then it starts from scratch and says which file', async () => {
    const wt = await ensureWorktree(p.dir, { name: 'worker-1', branch: 'main' });
    const r = await startFromPatch(wt.path, wt.base, join(p.ralphDir, 'commits', 'pending', 'missing.patch'));
    assert.deepEqual(r, { applied: false, reason: `the patch file ${join(p.ralphDir, 'commits', 'pending', 'missing.patch')} is gone` });
  });
});
