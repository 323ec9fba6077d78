// Late promotions keep "done means done": a tier-2 patch approved after the branch moved,
// and a promotion that waited on the user's checkout while the branch moved, are replayed
// and re-verified on the new tip (real git, real gate processes, the scripted claude
// executable) before they land; a patch the moved branch breaks is discarded with the
// failing gate named and its task goes back to pending, with nothing on the branch.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectConfinement } from '../../../src/agents/sandbox';
import { createScriptedBackend } from '../../../src/agents/scriptedBackend';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { JsonlMetrics } from '../../../src/loop/metricsFile';
import { submitToInbox } from '../../../src/control/inbox';
import { domainEvent } from '../../../src/domain/events';
import { LoopEmitter } from '../../../src/loop/events';
import { notificationsOf } from '../../../src/loop/storeFeed';
import type { LoopEvent } from '../../../src/loop/events';
import type { Loop } from '../../../src/loop/loop';
import { Harness } from '../../../src/loop/harness';
import { systemClock } from '../../../src/loop/sleep';
import { capturePatch } from '../../../src/git/capture';
import { formatPromotionMessage, promotePatch } from '../../../src/git/promote';
import { ensureWorktree } from '../../../src/git/worktrees';
import type { EventStore } from '../../../src/store/types';
import { addTasks, freshSampleProjectEachTest, plan, sampleSettings, script, scriptedLoop, writeScenario } from './sampleProject';
import { git } from '../../kit/git';
import type { SampleProject } from './sampleProject';

/** Every done task has its promoted commit on main; views rebuilt from events equal the stored ones. */
async function assertConsistent(p: SampleProject, store: EventStore): Promise<void> {
  for (const t of store.all<{ task_id: string }>("SELECT task_id FROM task_view WHERE status = 'done'")) {
    const row = store.get<{ commit_hash: string }>("SELECT commit_hash FROM patch_view WHERE task_id = ? AND status = 'promoted'", [
      t.task_id,
    ]);
    assert.ok(row?.commit_hash, `done task ${t.task_id} has a promoted patch`);
    git(p.dir, 'merge-base', '--is-ancestor', row.commit_hash, 'main');
  }
  const views = (): string =>
    JSON.stringify([store.all('SELECT * FROM task_view ORDER BY task_id'), store.all('SELECT * FROM patch_view ORDER BY patch_id')]);
  const before = views();
  await store.rebuild();
  assert.equal(views(), before, 'views rebuilt from events equal the stored views');
  assert.equal(git(p.dir, 'diff', '--cached', '--name-only'), '');
}

/** The user commits directly on main in their checkout; returns the new tip. */
function userCommit(p: SampleProject, files: Record<string, string>, message: string): string {
  for (const [f, content] of Object.entries(files)) {
    writeFileSync(join(p.dir, f), content);
    git(p.dir, 'add', f);
  }
  git(p.dir, 'commit', '-q', '-m', message);
  return git(p.dir, 'rev-parse', 'main');
}

function gateStartsAfter(events: readonly LoopEvent[], mark: number, taskId: string): string[] {
  return events.slice(mark).flatMap((e) => (e.type === 'gate.started' && e.taskId === taskId ? [e.gate] : []));
}

function reverifyMs(events: readonly LoopEvent[]): number[] {
  return events.flatMap((e) => {
    const m = e.type === 'log' ? / re-verified on [0-9a-f]{8} in (\d+) ms/.exec(e.message) : null;
    return m?.[1] !== undefined ? [Number(m[1])] : [];
  });
}

/** The gates below play the user, who works outside any sandbox: they must reach the checkout. */
const UNCONFINED_GATES = { confine_gates: false };

/**
 * A test-gate step that, run in the late-verify scratch worktree, commits to main in the
 * user's checkout (up to `limit` times): the branch moves while the re-verification runs.
 */
function branchMoverGate(p: SampleProject, limit: number): string {
  const file = join(p.ralphDir, 'mover.js');
  writeFileSync(
    file,
    `const { execFileSync } = require('child_process'); const fs = require('fs'); const path = require('path');
if (!process.cwd().split(path.sep).join('/').endsWith('/worktrees/verify')) process.exit(0);
const state = ${JSON.stringify(join(p.ralphDir, 'moves'))};
const n = fs.existsSync(state) ? Number(fs.readFileSync(state, 'utf8')) : 0;
if (n >= ${limit}) process.exit(0);
fs.writeFileSync(state, String(n + 1));
const dir = ${JSON.stringify(p.dir)};
fs.writeFileSync(path.join(dir, 'MOVE' + (n + 1) + '.md'), 'moved\\n');
const env = { ...process.env, GIT_AUTHOR_NAME: 'U', GIT_AUTHOR_EMAIL: 'u@x', GIT_COMMITTER_NAME: 'U', GIT_COMMITTER_EMAIL: 'u@x' };
execFileSync('git', ['add', 'MOVE' + (n + 1) + '.md'], { cwd: dir, env });
execFileSync('git', ['commit', '-q', '-m', 'user: move ' + (n + 1)], { cwd: dir, env });
`,
  );
  return `node scripts/test.js && node ${JSON.stringify(file)}`;
}

/**
 * A test-gate step that, run in the late-verify scratch worktree, has a human drop T-4
 * through the inbox and waits until the running loop has processed it: the decision lands
 * while the re-verification's gates run.
 */
function dropDuringReverifyGate(p: SampleProject): string {
  const file = join(p.ralphDir, 'dropper.js');
  writeFileSync(
    file,
    `const fs = require('fs'); const path = require('path');
if (!process.cwd().split(path.sep).join('/').endsWith('/worktrees/verify')) process.exit(0);
const inbox = ${JSON.stringify(join(p.ralphDir, 'inbox'))};
fs.mkdirSync(inbox, { recursive: true });
const name = 'cmd_drop_T-4.json';
fs.writeFileSync(path.join(inbox, '.tmp'), JSON.stringify({ command: 'transition-task', task_id: 'T-4', status: 'dropped', actor: 'human:test' }));
fs.renameSync(path.join(inbox, '.tmp'), path.join(inbox, name));
const deadline = Date.now() + 60000;
while (!fs.existsSync(path.join(inbox, 'processed', name))) {
  if (Date.now() > deadline) { console.error('the loop never read the inbox'); process.exit(1); }
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
}
`,
  );
  return `node scripts/test.js && node ${JSON.stringify(file)}`;
}

const TOKEN = 'module.exports = (t) => typeof t === "string" && t.length > 8;\n';
// The patch's own test also leans on src/index.js: a commit that changes it breaks the patch.
const TOKEN_TEST =
  "const assert = require('assert');\nassert.equal(require('../src/auth/token.js')('123456789'), true);\nassert.equal(require('../src/index.js').name, 'sample');\n";

/**
 * A second attempt at T-4 (its prompt says why the first patch was discarded) never
 * answers: a test that sends the task back to pending ends before it matters. It is in the
 * scenario from the start: a scenario rewritten while the judge's CLI starts may be the one
 * the judge reads.
 */
const SILENT_REPLAN = { name: 'silent re-plan', match: 'Your previous patch was discarded', turns: [{ hang: true }] };

/** T-4 touches src/auth/ (tier 2): deferred; its judge never answers, so a human decides. */
function tier2Scenario(p: SampleProject): void {
  writeScenario(p, [
    SILENT_REPLAN,
    script('plan/T-4/', [], plan('T-4', [{ description: 'token check', files: ['src/auth/token.js', 'test/token.test.js'] }])),
    script('implement/T-4/step-1/', [
      { tool: 'write', path: 'src/auth/token.js', content: TOKEN },
      { tool: 'write', path: 'test/token.test.js', content: TOKEN_TEST },
    ]),
    { name: 'silent judge', match: 'RALPH-KEY: review_deferred/T-4/', turns: [{ hang: true }] },
  ]);
}

describe('loop/Harness late promotion: approved or waiting patches are re-verified on a moved branch (scripted claude)', function () {
  this.timeout(120_000);
  let p: SampleProject;
  let store: EventStore;
  freshSampleProjectEachTest((s) => ({ p, store } = s));

  it('given a deferred tier-2 patch and a user commit on main before a human approves, then the approved patch is re-verified on the new tip and promoted onto it', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    tier2Scenario(p);
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    const deferred = await loop.events.next((e) => e.type === 'patch.deferred' && e.taskId === 'T-4');
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    const verifiedOn = git(p.dir, 'rev-parse', 'main');
    const moved = userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    const mark = events.length;
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'approve', actor: 'human:test', rationale: 'fine' });
    const promoted = await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-4');
    await loop.stop();
    assert.ok(promoted.type === 'patch.promoted' && deferred.type === 'patch.deferred');
    // The gates ran again, for this task, after the approval, and the commit sits on the moved tip.
    assert.deepEqual(
      gateStartsAfter(events, mark, 'T-4'),
      ['build', 'test', 'lint', 'fmt'],
      JSON.stringify(
        events.slice(mark).filter((e) => e.type !== 'gate.progress'),
        null,
        1,
      ),
    );
    assert.notEqual(verifiedOn, moved);
    assert.equal(git(p.dir, 'rev-parse', `${promoted.commit}^`), moved);
    assert.equal(git(p.dir, 'rev-parse', 'main'), promoted.commit);
    assert.equal(git(p.dir, 'show', '--format=', '--name-only', promoted.commit), 'src/auth/token.js\ntest/token.test.js');
    // The re-based patch is the one promoted; the approved one is closed as superseded by it.
    assert.notEqual(promoted.patchId, deferred.patchId);
    const patches = store.all<{ patch_id: string; status: string }>(
      "SELECT patch_id, status FROM patch_view WHERE task_id = 'T-4' ORDER BY patch_id",
    );
    assert.deepEqual(Object.fromEntries(patches.map((r) => [r.patch_id, r.status])), {
      [deferred.patchId]: 'discarded',
      [promoted.patchId]: 'promoted',
    });
    const superseded = store.get<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'patch.discarded' AND entity_id = ?", [
      deferred.patchId,
    ]);
    assert.match(superseded?.payload ?? '', /superseded by/);
    // Durable: the commit each patch's gates ran on is in its patch.gates note.
    const notes = store.all<{ entity_id: string; payload: string }>(
      "SELECT entity_id, payload FROM events WHERE event_type = 'patch.gates' ORDER BY event_id",
    );
    assert.deepEqual(
      notes.map((n) => [n.entity_id, (JSON.parse(n.payload) as { base_commit?: string }).base_commit]),
      [
        [deferred.patchId, verifiedOn],
        [promoted.patchId, moved],
      ],
    );
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-4'")?.status, 'done');
    assert.equal(git(p.dir, 'status', '--porcelain'), '');
    assert.equal(reverifyMs(events).length, 1);
    if (process.env.RALPH_LOOP_DEBUG) console.log('re-verification ms', reverifyMs(events));
    await assertConsistent(p, store);
  });

  it('given a deferred tier-2 patch whose test the moved branch breaks, when a human approves, then it is not promoted: discarded naming the failing gate, the task back to pending, nothing on the branch', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    tier2Scenario(p);
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    const deferred = await loop.events.next((e) => e.type === 'patch.deferred' && e.taskId === 'T-4');
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    // The user renames the project (and keeps main's own tests green); the patch's test expects the old name.
    const moved = userCommit(
      p,
      {
        'src/index.js': "module.exports = { name: 'sample-2' };\n",
        'test/index.test.js': "require('assert').equal(require('../src/index.js').name, 'sample-2');\n",
      },
      'user: rename',
    );
    const mark = events.length;
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'approve', actor: 'human:test', rationale: 'fine' });
    const released = await loop.events.next((e) => e.type === 'task.released' && e.taskId === 'T-4');
    const after = store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-4'")?.status;
    // The next attempt is told why its predecessor's work is gone (and hangs: SILENT_REPLAN).
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.phase === 'plan' && e.taskId === 'T-4', events.indexOf(released));
    const settings = sampleSettings();
    const notes = new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }).retryNotes(
      'T-4',
    );
    await loop.stop();
    assert.match(
      notes.join('\n'),
      /^Your previous patch was discarded: the approval was for a patch that no longer passes its gates: .*the test gate failed/,
    );
    assert.ok(released.type === 'task.released' && deferred.type === 'patch.deferred');
    assert.match(
      released.reason,
      /^the approval was for a patch that no longer passes its gates: main moved to [0-9a-f]{8} and, re-verified there, the test gate failed/,
    );
    assert.match(released.reason, /AssertionError|sample-2/);
    assert.ok(gateStartsAfter(events, mark, 'T-4').includes('test'));
    assert.equal(after, 'pending');
    assert.ok(!events.some((e) => e.type === 'patch.promoted'));
    assert.equal(git(p.dir, 'rev-parse', 'main'), moved, 'nothing reached the branch');
    assert.doesNotMatch(git(p.dir, 'log', '--format=%s', 'main'), /ralph\(T-4\)/);
    const patches = store.all<{ status: string }>("SELECT status FROM patch_view WHERE task_id = 'T-4'");
    assert.deepEqual(
      patches.map((r) => r.status),
      ['discarded'],
    );
    const discarded = store.get<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'patch.discarded' AND entity_id = ?", [
      deferred.patchId,
    ]);
    assert.match(discarded?.payload ?? '', /the test gate failed/);
    assert.ok(events.some((e) => e.type === 'patch.discarded' && e.patchId === deferred.patchId && /test gate failed/.test(e.reason)));
    const pending = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'task.pending' AND entity_id = 'T-4'");
    assert.ok(
      pending.some((r) => /approval was for a patch that no longer passes/.test(r.payload)),
      'the task went back to pending with the reason',
    );
    assert.equal(git(p.dir, 'status', '--porcelain'), '');
    await assertConsistent(p, store);
  });

  it('given a promotion waiting on a user edit while the user commits on main, then the patch is re-verified on the new tip before it is promoted', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-6', title: 'Readme section', effort: 'S', wave: 0 }]);
    writeScenario(p, [script('worker/T-6/attempt-1/', [{ tool: 'write', path: 'README.md', content: '# Sample\n\n## Usage\nrun it\n' }])]);
    writeFileSync(join(p.dir, 'README.md'), '# Sample\nmy local notes\n');
    const { loop, events } = scriptedLoop(p, store, { workers: { count: 1 } });
    await loop.start();
    const waiting = await loop.events.next((e) => e.type === 'patch.waiting' && e.taskId === 'T-6');
    assert.ok(waiting.type === 'patch.waiting' && /README\.md \(modified\)/.test(waiting.reason), JSON.stringify(waiting));
    const mark = events.length;
    // The user commits something else, then drops their README edit: the branch moved meanwhile.
    const moved = userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    git(p.dir, 'checkout', '--', 'README.md');
    loop.wakeAll();
    const promoted = await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-6');
    await loop.stop();
    assert.ok(promoted.type === 'patch.promoted');
    assert.deepEqual(gateStartsAfter(events, mark, 'T-6').slice(0, 3), ['build', 'test', 'lint'], 'verified again after the branch moved');
    assert.ok(events.slice(mark).some((e) => e.type === 'gate.started' && e.taskId === 'T-6' && e.agent === 'harness'));
    assert.equal(git(p.dir, 'rev-parse', `${promoted.commit}^`), moved);
    assert.notEqual(promoted.patchId, waiting.patchId);
    assert.equal(readFileSync(join(p.dir, 'README.md'), 'utf8'), '# Sample\n\n## Usage\nrun it\n');
    assert.equal(git(p.dir, 'status', '--porcelain'), '');
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-6'")?.status, 'done');
    assert.equal(store.get<{ status: string }>('SELECT status FROM patch_view WHERE patch_id = ?', [waiting.patchId])?.status, 'discarded');
    await assertConsistent(p, store);
  });

  it('given a deferred tier-2 patch and an unmoved branch, when a human approves, then it is promoted onto the commit its gates ran on without running them again', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    tier2Scenario(p);
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    const deferred = await loop.events.next((e) => e.type === 'patch.deferred' && e.taskId === 'T-4');
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    const base = git(p.dir, 'rev-parse', 'main');
    const mark = events.length;
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'approve', actor: 'human:test', rationale: 'fine' });
    const promoted = await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-4');
    await loop.stop();
    assert.ok(promoted.type === 'patch.promoted' && deferred.type === 'patch.deferred');
    assert.equal(promoted.patchId, deferred.patchId);
    assert.deepEqual(gateStartsAfter(events, mark, 'T-4'), []);
    assert.equal(git(p.dir, 'rev-parse', `${promoted.commit}^`), base);
    await assertConsistent(p, store);
  });

  it('given an approved patch whose re-verification is overtaken by another commit, then it is re-verified again on the newer tip and promoted onto that', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    tier2Scenario(p);
    const { loop, events } = scriptedLoop(p, store, { test: branchMoverGate(p, 1), agents: UNCONFINED_GATES });
    await loop.start();
    await loop.events.next((e) => e.type === 'patch.deferred' && e.taskId === 'T-4');
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'approve', actor: 'human:test', rationale: 'fine' });
    const promoted = await loop.events.next((e) => e.type === 'patch.promoted' && e.taskId === 'T-4');
    await loop.stop();
    assert.ok(promoted.type === 'patch.promoted');
    assert.equal(reverifyMs(events).length, 2, 'verified on the first moved tip, then on the tip that overtook it');
    assert.equal(git(p.dir, 'log', '-1', '--format=%s', `${promoted.commit}^`), 'user: move 1');
    assert.equal(git(p.dir, 'rev-parse', 'main'), promoted.commit);
    assert.equal(git(p.dir, 'status', '--porcelain'), '');
    const live = store
      .all<{ status: string }>("SELECT status FROM patch_view WHERE task_id = 'T-4' ORDER BY patch_id")
      .map((r) => r.status);
    assert.deepEqual(live, ['discarded', 'discarded', 'promoted']);
    await assertConsistent(p, store);
  });

  it("given an approved patch being re-verified, when a human drops the task meanwhile, then nothing is promoted: the human's decision stands and the patch is closed", async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    tier2Scenario(p);
    const { loop, events } = scriptedLoop(p, store, { test: dropDuringReverifyGate(p), agents: UNCONFINED_GATES });
    await loop.start();
    await loop.events.next((e) => e.type === 'patch.deferred' && e.taskId === 'T-4');
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    const moved = userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'approve', actor: 'human:test', rationale: 'fine' });
    const closed = await loop.events.next(
      (e) => e.type === 'patch.discarded' && e.taskId === 'T-4' && /not promoted: task T-4 is dropped/.test(e.reason),
    );
    await loop.stop();
    assert.ok(closed.type === 'patch.discarded');
    assert.ok(
      events.some((e) => e.type === 'gate.started' && e.taskId === 'T-4' && e.agent === 'harness'),
      'the re-verification ran',
    );
    assert.ok(!events.some((e) => e.type === 'patch.promoted'));
    assert.equal(git(p.dir, 'rev-parse', 'main'), moved, 'nothing reached the branch');
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-4'")?.status, 'dropped');
    const live = store.all<{ status: string }>(
      "SELECT status FROM patch_view WHERE task_id = 'T-4' AND status IN ('queued', 'applied', 'verified')",
    );
    assert.deepEqual(live, [], 'no patch of the dropped task is left queued');
    await assertConsistent(p, store);
  });

  it('given a branch that moves during every re-verification, then after three the approved patch is discarded with that reason and the task goes back to pending', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    tier2Scenario(p);
    const { loop, events } = scriptedLoop(p, store, { test: branchMoverGate(p, 99), agents: UNCONFINED_GATES });
    await loop.start();
    await loop.events.next((e) => e.type === 'patch.deferred' && e.taskId === 'T-4');
    await seenOrNext(loop, events, (e) => e.type === 'agent.started' && e.agent === 'judge');
    userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'approve', actor: 'human:test', rationale: 'fine' });
    const released = await loop.events.next((e) => e.type === 'task.released' && e.taskId === 'T-4');
    await loop.stop();
    assert.ok(released.type === 'task.released');
    assert.match(released.reason, /^the approved patch was not promoted: main kept moving: 3 re-verifications/);
    assert.equal(reverifyMs(events).length, 3);
    assert.ok(!events.some((e) => e.type === 'patch.promoted'));
    assert.equal(git(p.dir, 'log', '-1', '--format=%s', 'main'), 'user: move 3');
    const patches = store.all<{ status: string }>("SELECT status FROM patch_view WHERE task_id = 'T-4'").map((r) => r.status);
    assert.deepEqual(patches, ['discarded', 'discarded', 'discarded', 'discarded']);
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-4'")?.status, 'pending');
    await assertConsistent(p, store);
  });
});

/** The first event from index `from` on (already seen or still to come) the predicate holds for. */
function seenOrNext(loop: Loop, events: readonly LoopEvent[], pred: (e: LoopEvent) => boolean, from = 0): Promise<LoopEvent> {
  const hit = events.slice(from).find(pred);
  return hit !== undefined ? Promise.resolve(hit) : loop.events.next(pred);
}

/** A port that cannot tell a patch's base (an older store, another implementation). */
describe('loop/Harness.promoteLate after a restart (no in-memory record of the base)', function () {
  this.timeout(60_000);
  let p: SampleProject;
  let store: EventStore;
  freshSampleProjectEachTest((s) => ({ p, store } = s));

  /** A fresh harness (as after a restart) and T-9 proposed with a queued patch verified on main's tip by a run before. */
  async function queuedByAnEarlierRun(
    withBases: boolean,
  ): Promise<{ harness: Harness; control: ControlAdapter; events: LoopEvent[]; patchId: string; patchPath: string; base: string }> {
    const settings = sampleSettings();
    const options = { store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns };
    const control = new ControlAdapter(options);
    const emitter = new LoopEmitter();
    const events: LoopEvent[] = [];
    emitter.on((e) => events.push(e));
    // As in a Loop: the notifications come from what the store appends.
    control.onDidAppend((batch) => notificationsOf(batch).forEach((e) => emitter.emit(e)));
    const backend = createScriptedBackend({ scenario: p.scenarioFile, confinement: detectConfinement('scripted') });
    const harness = new Harness({
      projectDir: p.dir,
      ralphDir: p.ralphDir,
      branch: 'main',
      settings,
      control,
      backends: { primary: backend, worker: backend, judge: backend },
      metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
      emitter,
      clock: systemClock,
    });
    await addTasks(store, p.ralphDir, [{ id: 'T-9', title: 'Notes', effort: 'S', wave: 0 }]);
    await control.claimTask('T-9', 'worker-1');
    const wt = await ensureWorktree(p.dir, { name: 'worker-1', branch: 'main' });
    writeFileSync(join(wt.path, 'NOTES.md'), '# Notes\n');
    const patch = await capturePatch(wt.path, wt.base, join(p.ralphDir, 'commits', 'pending', 'T-9_worker-1_earlier.patch'));
    const patchId = await control.queuePatch('T-9', patch.path, 'worker-1');
    // Without bases: a run from before the commit a patch's gates ran on was recorded.
    if (withBases)
      await control.record([
        domainEvent('patch.gates', patchId, 'worker-1', {
          task_id: 'T-9',
          gates: [{ gate: 'test', status: 'passed' }],
          base_commit: wt.base,
        }),
      ]);
    return { harness, control, events, patchId, patchPath: patch.path, base: wt.base };
  }

  it('given a stop while recovery re-verifies a leftover patch, then the loop stops cleanly with a summary and the patch is kept for the next run', async () => {
    await queuedByAnEarlierRun(true);
    userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    const slowInVerify = `node -e "if (process.cwd().endsWith('/worktrees/verify')) setTimeout(() => {}, 120000)"`;
    const { loop, events } = scriptedLoop(p, store, { test: slowInVerify });
    const starting = loop.start();
    await seenOrNext(loop, events, (e) => e.type === 'gate.started' && e.agent === 'harness' && e.gate === 'test' && e.taskId === 'T-9');
    const summary = await loop.stop('test stop');
    await starting;
    assert.equal(summary.stopReason, 'test stop');
    assert.equal(loop.state, 'stopped');
    assert.ok(!events.some((e) => e.type === 'agent.started'), 'no agent started after a stop during recovery');
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-9'")?.status, 'proposed');
    assert.equal(store.all("SELECT 1 FROM patch_view WHERE task_id = 'T-9' AND status = 'queued'").length, 1);
  });

  it('given a run killed between queueing a tier-2 patch and deferring it, when a new run starts, then the patch goes to the judge instead of being promoted', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-7', title: 'Token rules', effort: 'S', wave: 0 }]);
    const control = new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: sampleSettings().riskPatterns });
    await control.claimTask('T-7', 'worker-1');
    const wt = await ensureWorktree(p.dir, { name: 'worker-1', branch: 'main' });
    mkdirSync(join(wt.path, 'src', 'auth'), { recursive: true });
    writeFileSync(join(wt.path, 'src', 'auth', 'rules.js'), 'module.exports = [];\n');
    const patch = await capturePatch(wt.path, wt.base, join(p.ralphDir, 'commits', 'pending', 'T-7_worker-1_killed.patch'));
    const patchId = await control.queuePatch('T-7', patch.path, 'worker-1');
    writeScenario(p, [{ name: 'silent judge', match: 'RALPH-KEY: review_deferred/T-7/', turns: [{ hang: true }] }]);
    const tip = git(p.dir, 'rev-parse', 'main');
    const { loop, events } = scriptedLoop(p, store);
    await loop.start();
    const deferred = await seenOrNext(loop, events, (e) => e.type === 'patch.deferred' && e.taskId === 'T-7');
    await loop.stop();
    assert.ok(
      deferred.type === 'patch.deferred' && deferred.patchId === patchId && /found unreviewed after a restart/.test(deferred.reason),
      JSON.stringify(deferred),
    );
    assert.ok(!events.some((e) => e.type === 'patch.promoted'));
    assert.equal(git(p.dir, 'rev-parse', 'main'), tip);
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-7'")?.status, 'deferred');
  });

  it('given a run killed after the branch update but before the store heard of it, then the commit is found by its trailer and recorded, not re-verified or applied twice', async () => {
    const q = await queuedByAnEarlierRun(false);
    const r = await promotePatch(p.dir, {
      branch: 'main',
      patchFile: q.patchPath,
      message: formatPromotionMessage('T-9', 'Notes'),
      patchId: q.patchId,
      expectedTip: q.base,
    });
    assert.equal(r.status, 'promoted');
    const out = await q.harness.late.promoteLate('T-9', q.patchId, q.patchPath, 'harness', 'recovered');
    assert.ok(out?.kind === 'promoted' && r.status === 'promoted');
    assert.equal(out.commit, r.commit);
    assert.equal(git(p.dir, 'rev-list', '--count', `${q.base}..main`), '1');
    assert.ok(!q.events.some((e) => e.type === 'gate.started'));
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-9'")?.status, 'done');
  });

  it('given the base is not known to the new run, then the patch is re-verified before it is promoted (safe, only slower)', async () => {
    const q = await queuedByAnEarlierRun(false);
    const out = await q.harness.late.promoteLate('T-9', q.patchId, q.patchPath, 'harness', 'recovered');
    assert.ok(out?.kind === 'promoted');
    assert.ok(q.events.some((e) => e.type === 'gate.started' && e.taskId === 'T-9' && e.agent === 'harness'));
    assert.equal(git(p.dir, 'rev-parse', `${out.commit}^`), q.base);
    assert.equal(store.get<{ status: string }>('SELECT status FROM patch_view WHERE patch_id = ?', [q.patchId])?.status, 'discarded');
  });

  it('given a promotion waiting on a user edit to its file, when the branch moves while the edit is still there, then it keeps waiting without running the gates; once the edit is gone it is re-verified and promoted', async () => {
    const q = await queuedByAnEarlierRun(true);
    writeFileSync(join(p.dir, 'NOTES.md'), 'my own notes\n');
    const first = await q.harness.late.promoteLate('T-9', q.patchId, q.patchPath, 'harness', 'waiting');
    assert.ok(first?.kind === 'waiting' && /NOTES\.md \(untracked\)/.test(first.reason), JSON.stringify(first));
    const waitingEvents = q.events.filter((e) => e.type === 'patch.waiting').length;
    userCommit(p, { 'USER.md': 'mine\n' }, 'user: unrelated');
    await q.harness.late.retryWaiting();
    await q.harness.late.retryWaiting();
    assert.ok(!q.events.some((e) => e.type === 'gate.started'), 'no gates while the edit still blocks the promotion');
    assert.equal(q.events.filter((e) => e.type === 'patch.waiting').length, waitingEvents, 'said once, not again per retry');
    assert.equal(q.control.waitingPromotions().length, 1);
    rmSync(join(p.dir, 'NOTES.md'));
    await q.harness.late.retryWaiting();
    assert.ok(q.events.some((e) => e.type === 'gate.started' && e.taskId === 'T-9' && e.agent === 'harness'));
    const promoted = q.events.find((e) => e.type === 'patch.promoted');
    assert.ok(promoted?.type === 'patch.promoted');
    assert.equal(git(p.dir, 'log', '-1', '--format=%s', `${promoted.commit}^`), 'user: unrelated');
    assert.equal(q.control.waitingPromotions().length, 0);
  });

  it('given the control port reads base_commit from the patch.gates note and the branch did not move, then the patch is promoted onto it without running the gates again', async () => {
    const q = await queuedByAnEarlierRun(true);
    const out = await q.harness.late.promoteLate('T-9', q.patchId, q.patchPath, 'harness', 'recovered');
    assert.ok(out?.kind === 'promoted');
    assert.equal(out.patchId, q.patchId);
    assert.ok(!q.events.some((e) => e.type === 'gate.started'));
    assert.equal(git(p.dir, 'rev-parse', `${out.commit}^`), q.base);
  });
});
