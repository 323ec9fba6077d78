// Issue 5's evidence, whole, through the REAL `claude` CLI (pinned, .tools/) and the scripted
// model server: one `ralph start --once` run (openLoopHost, backends from ralph.config.json)
// in which a spec becomes tasks through evolve_goals proposals, the primary completes a
// two-step plan, a worker an S task in parallel, a task fails its tests and is fixed on
// retry, a tier-2 patch is judged in a separate invocation (its request checked) and
// promoted, a tier-3 task is decomposed from its plan, and the user's edits in the checkout survive (one
// beside the promotions, one on a file a patch touches: the promotion waits until the user
// commits). Then the same story in a child process killed with SIGKILL while the judge runs,
// and a resume in this process that finishes it: every task done once, nothing left running.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { detectConfinement } from '../../../src/agents/sandbox';
import { judgeRoot } from '../../../src/git/repoCache';
import { dirname, join } from 'node:path';
import { rebuildViews } from '../../../src/control/derived';
import { testsPassOnTip } from '../../../src/cli/demo';
import { openLoopHost } from '../../../src/loop/host';
import type { LoopHost } from '../../../src/loop/host';
import type { LoopEvent, LoopSummary } from '../../../src/loop/events';
import type { EventStore } from '../../../src/store/types';
import { claudeSandbox, ensureAgentClis, processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';
import type { Sandbox } from '../../kit/agentEnv';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';
import {
  commandOf,
  createStoryProject,
  cwdOf,
  NOTES_USER_TEXT,
  processesWithEnv,
  README_AGENT_LINE,
  README_USER_LINE,
  STORY_DONE,
  STORY_TASKS,
  storyScenario,
} from './fullStoryProject';
import { runLoopChildUntil } from './sampleProject';
import { git } from '../../kit/git';

interface Row {
  readonly entity_id: string;
  readonly event_type: string;
  readonly actor: string;
  readonly payload: string;
  readonly ts: string;
}

/** The checkout's tracked changes outside .ralph/ (the loop keeps BACKLOG.md, REFLECTIONS.md, ... there). */
const userChanges = (dir: string): string[] =>
  execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: dir, encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.length > 0 && !l.slice(3).startsWith('.ralph/'));
const payloadOf = (r: Row): Record<string, unknown> => JSON.parse(r.payload) as Record<string, unknown>;
const debug = (t0: number, e: LoopEvent): void => {
  if (process.env.RALPH_LOOP_DEBUG && e.type !== 'gate.progress') console.log(Date.now() - t0, JSON.stringify(e).slice(0, 300));
};

function statusOf(store: EventStore): Record<string, string> {
  return Object.fromEntries(
    store
      .all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view ORDER BY task_id')
      .map((t) => [t.task_id, t.status]),
  );
}

function viewRows(store: EventStore): string {
  return JSON.stringify([store.all('SELECT * FROM task_view ORDER BY task_id'), store.all('SELECT * FROM patch_view ORDER BY patch_id')]);
}

const story = (events: readonly LoopEvent[]): string =>
  JSON.stringify(
    events
      .filter((e) => e.type === 'log' || e.type === 'agent.finished' || e.type.startsWith('task.') || e.type.startsWith('patch.'))
      .slice(-60),
    null,
    1,
  );

/** Every done task: its promoted patch's commit is on main, with the task's subject, exactly once. */
function assertDoneTasksPromoted(dir: string, store: EventStore): void {
  const subjects = git(dir, 'log', '--format=%s', 'main').split('\n');
  for (const t of store.all<{ task_id: string }>("SELECT task_id FROM task_view WHERE status = 'done'")) {
    const rows = store.all<{ commit_hash: string }>("SELECT commit_hash FROM patch_view WHERE task_id = ? AND status = 'promoted'", [
      t.task_id,
    ]);
    assert.equal(rows.length, 1, `${t.task_id}: one promoted patch`);
    const commit = rows[0]?.commit_hash ?? '';
    execFileSync('git', ['merge-base', '--is-ancestor', commit, 'main'], { cwd: dir }); // throws when not
    assert.match(git(dir, 'log', '-1', '--format=%s', commit), new RegExp(`^ralph\\(${t.task_id}\\): `));
    assert.equal(
      subjects.filter((s) => s.startsWith(`ralph(${t.task_id}):`)).length,
      1,
      `one commit for ${t.task_id}: ${subjects.join(' | ')}`,
    );
  }
}

/** `ralph rebuild` (rebuildViews: every event replayed into fresh views) changes nothing. */
async function assertViewsRebuildEqual(host: LoopHost): Promise<void> {
  const stored = viewRows(host.store);
  const n = await rebuildViews(host.control.ctx);
  assert.ok(n > 50, `${n} events replayed`);
  assert.equal(viewRows(host.store), stored, 'views rebuilt from the events equal the stored ones');
}

describe('loop: the whole story through the real claude CLI', function () {
  this.timeout(300_000);
  let claudeBin: string;

  before(() => {
    claudeBin = ensureAgentClis().claude;
  });

  describe('one run', () => {
    let server: ModelServer;
    let sandbox: Sandbox;
    let dir: string;
    let host: LoopHost;
    let summary: LoopSummary;
    const events: LoopEvent[] = [];
    const userErrors: string[] = [];
    let userCommit = '';
    let wallMs = 0;
    const rows = (): Row[] => host.store.all<Row>('SELECT entity_id, event_type, actor, payload, ts FROM events ORDER BY rowid');

    before(async () => {
      server = await startModelServer(storyScenario());
      sandbox = claudeSandbox(server.url);
      dir = await createStoryProject(claudeBin, sandbox.env);
      host = await openLoopHost({ projectDir: dir, once: true });
      const t0 = Date.now();
      let notesEdited = false;
      let readmeEdited = false;
      // The user, acting in the checkout while the loop runs. Listeners run synchronously
      // inside the loop's emit, so each edit lands at exactly that moment of the run.
      host.loop.events.on((e) => {
        events.push(e);
        debug(t0, e);
        try {
          if (e.type === 'patch.promoted' && !notesEdited) {
            // A file no task touches, edited and never committed.
            notesEdited = true;
            writeFileSync(join(dir, 'NOTES.md'), NOTES_USER_TEXT);
          }
          if (e.type === 'agent.started' && e.taskId === 'CALC-6' && !readmeEdited) {
            // A file CALC-6's patch touches, edited while its agent works.
            readmeEdited = true;
            appendFileSync(join(dir, 'README.md'), `${README_USER_LINE}\n`);
          }
          if (e.type === 'patch.waiting' && e.taskId === 'CALC-6' && userCommit === '') {
            // The promotion waits naming README.md: the user commits their edit (only that file).
            git(dir, 'commit', '-q', '-m', 'user: README note', '--', 'README.md');
            userCommit = git(dir, 'rev-parse', 'HEAD');
          }
        } catch (err) {
          userErrors.push(String(err));
        }
      });
      summary = await host.loop.run();
      wallMs = Date.now() - t0;
      console.log(
        `      [wall] one run: ${(wallMs / 1000).toFixed(1)} s, ${summary.invocations} claude invocations (agents ${(summary.modelMs / 1000).toFixed(1)} s, gates ${(summary.gateMs / 1000).toFixed(1)} s), ${server.requests.length} model requests`,
      );
    });
    after(async () => {
      await host?.close().catch(() => undefined);
      await server?.close();
      sandbox?.cleanup();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    it('ran every task to its end through the real claude CLI', () => {
      assert.deepEqual(userErrors, []);
      assert.deepEqual(
        statusOf(host.store),
        { ...Object.fromEntries(STORY_DONE.map((t) => [t, 'done'])), 'CALC-5': 'dropped' },
        story(events),
      );
      assert.equal(summary.stopReason, 'backlog empty or blocked');
      assert.ok(summary.costUsd > 0, 'cost accounted from the CLI');
      const logs = join(dir, '.ralph', 'logs');
      const lines = readdirSync(logs)
        .filter((f) => f.endsWith('.jsonl'))
        .flatMap((f) => readFileSync(join(logs, f), 'utf8').trim().split('\n'));
      assert.deepEqual([...new Set(lines.map((l) => (JSON.parse(l) as { backend: string }).backend))], ['claude']);
      assert.ok(
        server.requests.filter((r) => r.api === 'anthropic' && r.script !== '').length >= 20,
        'the CLI talked to the scripted server',
      );
      assert.deepEqual(
        server.requests.filter((r) => r.answer === 'no-script'),
        [],
      );
    });

    it('turned the spec into tasks through evolve_goals proposals', () => {
      const r = rows();
      const created = r.filter((e) => e.event_type === 'task.created').map((e) => e.entity_id);
      assert.deepEqual(created.slice(0, 6).sort(), ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4', 'CALC-5', 'CALC-6']);
      const accepted = r.filter((e) => e.event_type === 'proposal.accepted').map((e) => e.entity_id);
      assert.equal(accepted.filter((id) => /_evolve_\d+\.\d{17}-[0-9a-f]{6}\.json$/.test(id)).length, 6, JSON.stringify(accepted));
      const evolve = server.requests.filter((q) => q.prompt.includes('RALPH-KEY: evolve_goals/'));
      assert.ok(evolve.length >= 1);
      assert.match(evolve[0]?.prompt ?? '', /specs\/calculator\.md/);
    });

    it('the primary completed CALC-1 with its two-step plan, a build check after each step', () => {
      const phases = events.flatMap((e) => (e.type === 'phase.changed' && e.agent === 'primary' && e.taskId === 'CALC-1' ? [e.to] : []));
      assert.deepEqual(phases.slice(0, 5), ['plan', 'implement', 'implement', 'verify', 'commit'], JSON.stringify(phases));
      for (const step of ['step-1', 'step-2'])
        assert.ok(
          server.requests.some((q) => q.prompt.includes(`RALPH-KEY: implement/CALC-1/${step}/`)),
          step,
        );
      const builds = events.filter(
        (e) => e.type === 'gate.finished' && e.taskId === 'CALC-1' && e.gate === 'build' && e.agent === 'primary',
      );
      assert.ok(builds.length >= 3, 'a build after each of the two steps, then verify');
      assert.equal(git(dir, 'show', 'main:src/add.js'), 'module.exports = (a, b) => a + b;');
    });

    it('a worker claimed and promoted an S task while the primary worked on its own', () => {
      const r = rows();
      const workerClaim = r.find((e) => e.event_type === 'task.claimed' && e.actor === 'worker-1');
      assert.ok(workerClaim !== undefined, 'a worker claimed a task');
      assert.ok(['CALC-2', 'CALC-6', 'CALC-5a', 'CALC-5b'].includes(workerClaim.entity_id));
      const workerDone = r.find(
        (e) => e.event_type === 'patch.promoted' && e.actor === 'worker-1' && payloadOf(e).task_id === workerClaim.entity_id,
      );
      assert.ok(workerDone !== undefined, 'the worker promoted its task');
      const primaryClaim = r.find((e) => e.event_type === 'task.claimed' && e.actor === 'primary');
      assert.ok(primaryClaim !== undefined);
      const primaryDone = r.find((e) => e.event_type === 'task.done' && e.entity_id === primaryClaim.entity_id);
      assert.ok(primaryDone !== undefined);
      // In parallel: each claimed before the other finished.
      assert.ok(
        workerClaim.ts <= primaryDone.ts && primaryClaim.ts <= workerDone.ts,
        JSON.stringify([workerClaim, workerDone, primaryClaim, primaryDone]),
      );
      assert.ok(server.requests.some((q) => q.prompt.includes(`RALPH-KEY: worker/${workerClaim.entity_id}/attempt-1/`)));
    });

    it('CALC-3 failed its test gate, was reflected and fixed on retry within the same claim', () => {
      assert.ok(events.some((e) => e.type === 'gate.finished' && e.taskId === 'CALC-3' && e.gate === 'test' && e.status === 'failed'));
      const reflected = rows()
        .filter((e) => e.event_type === 'task.reflected' && e.entity_id === 'CALC-3')
        .map(payloadOf);
      assert.equal(reflected.length, 1, JSON.stringify(reflected));
      assert.deepEqual(
        { gate: reflected[0]?.gate, class: reflected[0]?.class, decision: reflected[0]?.decision },
        { gate: 'test', class: 'recoverable', decision: 'retry' },
      );
      assert.match(readFileSync(join(dir, '.ralph', 'REFLECTIONS.md'), 'utf8'), /CALC-3 \(test, recoverable\)/);
      assert.match(readFileSync(join(dir, '.ralph', 'GUARDRAILS.md'), 'utf8'), /non-commutative arithmetic/);
      assert.ok(server.requests.some((q) => q.prompt.includes('RALPH-KEY: reflect/CALC-3/')));
      assert.ok(server.requests.some((q) => q.prompt.includes('RALPH-KEY: implement/CALC-3/fix-1/')));
      assert.equal(rows().filter((e) => e.event_type === 'task.claimed' && e.entity_id === 'CALC-3').length, 1);
      assert.equal(git(dir, 'show', 'main:src/sub.js'), 'module.exports = (a, b) => a - b;');
    });

    it('CALC-4 (tier 2) was deferred, judged in a separate invocation that saw only the task and its diff, and promoted', async () => {
      const judges = join(await judgeRoot(dir), 'review-');
      const queued = events.find((e) => e.type === 'patch.queued' && e.taskId === 'CALC-4');
      assert.ok(queued?.type === 'patch.queued' && queued.tier === 2);
      const deferred = events.find((e) => e.type === 'patch.deferred' && e.taskId === 'CALC-4');
      assert.ok(deferred?.type === 'patch.deferred');
      assert.ok(
        events.some((e) => e.type === 'agent.started' && e.agent === 'judge' && e.phase === 'review_deferred' && e.taskId === 'CALC-4'),
      );
      assert.ok(events.some((e) => e.type === 'verdict' && e.by === 'judge' && e.taskId === 'CALC-4' && e.verdict === 'approve'));
      const patchPath =
        host.store.get<{ patch_path: string }>('SELECT patch_path FROM patch_view WHERE patch_id = ?', [deferred.patchId])?.patch_path ??
        '';
      const diff = readFileSync(patchPath, 'utf8').replace(/\s+$/, '');
      const judged = server.requests.filter((q) => q.prompt.includes('RALPH-KEY: review_deferred/CALC-4/'));
      assert.ok(judged.length >= 1);
      const core =
        readFileSync(join(dir, '.ralph', 'core.md'), 'utf8')
          .split('\n')
          .find((l) => l.trim().length > 20) ?? '';
      for (const q of judged) {
        // The diff, whole and verbatim, and the task.
        assert.ok(q.prompt.includes(`## Diff\n\`\`\`diff\n${diff}\n\`\`\``), 'the patch file, verbatim');
        assert.match(q.prompt, /CALC-4: API token check/);
        assert.match(q.prompt, /Gate results: build=passed, test=passed/);
        // Nothing else: no other task, no other file, no spec, no core.md, no guardrails, no repo.
        for (const other of [
          'CALC-1',
          'CALC-2',
          'CALC-3',
          'CALC-5',
          'CALC-6',
          'src/add.js',
          'src/sub.js',
          'README',
          'Calculator specification',
          'non-commutative arithmetic',
          core,
        ]) {
          assert.ok(!q.prompt.includes(other), `the judge's prompt does not mention ${other}`);
        }
        assert.equal((q.body as { messages: unknown[] }).messages.length, 1, 'a fresh conversation: the prompt is all it was told');
        assert.ok(!JSON.stringify(q.body).includes(dir), 'the judge ran outside the repository');
        assert.ok(JSON.stringify(q.body).includes(judges), 'in its own empty folder');
      }
      assert.match(git(dir, 'show', 'main:src/auth/token.js'), /t\.length >= 16/);
    });

    it('CALC-5 (tier 3) was decomposed from its plan, before any code: the parent dropped for its two accepted children, both done, the secrets file never on main', () => {
      // The plan names config/secrets.json: it is never implemented, so no patch is made of it.
      assert.ok(!events.some((e) => e.type === 'patch.queued' && e.taskId === 'CALC-5'), story(events));
      assert.ok(!server.requests.some((q) => q.prompt.includes('RALPH-KEY: implement/CALC-5/')));
      assert.ok(events.some((e) => e.type === 'task.decomposed' && e.taskId === 'CALC-5' && e.accepted === 2));
      assert.ok(server.requests.some((q) => q.prompt.includes('RALPH-KEY: decompose/CALC-5/')));
      const st = statusOf(host.store);
      assert.deepEqual([st['CALC-5'], st['CALC-5a'], st['CALC-5b']], ['dropped', 'done', 'done']);
      assert.throws(() => git(dir, 'cat-file', '-e', 'main:config/secrets.json'));
    });

    it("the user's edits survived: the untouched file uncommitted, the touched one waited for, then both changes on main", () => {
      const waiting = events.find((e) => e.type === 'patch.waiting' && e.taskId === 'CALC-6');
      assert.ok(waiting?.type === 'patch.waiting' && /README\.md/.test(waiting.reason), JSON.stringify(waiting));
      assert.notEqual(userCommit, '');
      const promoted = events.find((e) => e.type === 'patch.promoted' && e.taskId === 'CALC-6');
      assert.ok(promoted?.type === 'patch.promoted', story(events));
      execFileSync('git', ['merge-base', '--is-ancestor', userCommit, promoted.commit], { cwd: dir });
      const readme = git(dir, 'show', 'main:README.md');
      assert.ok(readme.includes(README_AGENT_LINE) && readme.includes(README_USER_LINE), readme);
      assert.equal(readFileSync(join(dir, 'README.md'), 'utf8').trim(), readme);
      assert.equal(readFileSync(join(dir, 'NOTES.md'), 'utf8'), NOTES_USER_TEXT);
      assert.equal(git(dir, 'show', 'main:NOTES.md'), '# Notes\nThe maintainer keeps these; nobody else touches them.');
      // HEAD, index and working tree agree except for the user's own uncommitted edit.
      assert.deepEqual(userChanges(dir), [' M NOTES.md']);
      assert.match(git(dir, 'log', '--format=%s', 'main'), /user: README note/);
    });

    it("every done task has its promoted commit on main, the project's tests pass on the tip, the views rebuild equal, no process left", async () => {
      assertDoneTasksPromoted(dir, host.store);
      assert.equal(testsPassOnTip(dir), true);
      await assertViewsRebuildEqual(host);
      assert.deepEqual(processesIn(dir), []);
      assert.deepEqual(processesWithEnv(server.url), []);
    });
  });

  describe('kill -9 while the judge runs, then resume', () => {
    let server: ModelServer;
    let sandbox: Sandbox;
    let dir: string;
    let judgeDir = '';

    before(async () => {
      // The judge takes its time in the killed run, so the kill lands while its claude runs.
      server = await startModelServer(storyScenario({ judgeDelayMs: 4000 }));
      sandbox = claudeSandbox(server.url);
      dir = await createStoryProject(claudeBin, sandbox.env);
    });
    after(async () => {
      await server?.close();
      sandbox?.cleanup();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      // The killed run never got to remove its judge's folder.
      if (judgeDir !== '') rmSync(judgeDir, { recursive: true, force: true });
    });

    it('given the story in a child killed with SIGKILL while the judge runs, when a new run resumes, then every task is done exactly once and nothing is left running', async () => {
      // The user's uncommitted edits are there from the start: CALC-6's promotion will wait.
      writeFileSync(join(dir, 'NOTES.md'), NOTES_USER_TEXT);
      appendFileSync(join(dir, 'README.md'), `${README_USER_LINE}\n`);

      const judges = join(await judgeRoot(dir), 'review-');
      const judgeProcess = (): number | undefined => processesWithEnv(server.url).find((p) => cwdOf(p).startsWith(judges));
      const t0 = Date.now();
      const { seen, pid } = await runLoopChildUntil(
        dir,
        async (e) => {
          if (e.type !== 'agent.started' || e.agent !== 'judge') return false;
          await waitUntil("the judge's claude process", () => judgeProcess() !== undefined, 60_000);
          return true;
        },
        (e) => debug(t0, e),
      );
      const killedAt = Date.now() - t0;
      const promotedBefore = seen.flatMap((e) => (e.type === 'patch.promoted' ? [e.taskId] : []));
      assert.ok(promotedBefore.length >= 2, `promoted before the kill: ${promotedBefore.join(', ')}`);
      assert.ok(
        seen.some((e) => e.type === 'patch.waiting' && e.taskId === 'CALC-6'),
        'CALC-6 waited on the user',
      );
      assert.ok(!seen.some((e) => e.type === 'verdict'), 'killed before any verdict');

      // What the killed run left behind: its agents run in process groups of their own. In
      // bubblewrap they die with the host (--die-with-parent); unconfined, they outlive it.
      const survivors = [...new Set([...processesWithEnv(server.url), ...processesIn(dir)])].filter((p) => p !== pid);
      const survivorLines = survivors.map((p) => `${p} ${commandOf(p).slice(0, 60)} (cwd ${cwdOf(p)})`);
      const confined = detectConfinement('claude').kind === 'bwrap';
      if (confined) {
        await waitUntil('the confined agents to end with their host', () => survivors.every((p) => commandOf(p) === ''), 10_000);
      } else {
        assert.ok(
          survivors.map(cwdOf).some((d) => d.startsWith(judges)),
          `the judge's claude outlived the loop: ${survivorLines.join('; ')}`,
        );
      }
      // The killed run never got to remove its judge's folder.
      judgeDir =
        readdirSync(dirname(judges))
          .filter((d) => d.startsWith('review-'))
          .map((d) => join(dirname(judges), d))[0] ?? '';
      assert.notEqual(judgeDir, '', "the killed judge's folder is there");

      // The user commits their README edit; the judge answers at once from now on.
      git(dir, 'commit', '-q', '-m', 'user: README note', '--', 'README.md');
      server.setScenario(storyScenario());

      const host = await openLoopHost({ projectDir: dir, once: true });
      const events: LoopEvent[] = [];
      const t2 = Date.now();
      host.loop.events.on((e) => {
        events.push(e);
        debug(t2, e);
      });
      let resumeMs = 0;
      try {
        const summary = await host.loop.run();
        resumeMs = Date.now() - t2;
        assert.deepEqual(
          statusOf(host.store),
          { ...Object.fromEntries(STORY_DONE.map((t) => [t, 'done'])), 'CALC-5': 'dropped' },
          story(events),
        );
        assert.equal(summary.stopReason, 'backlog empty or blocked');
        // Recovery: the deferred item judged again, the waiting patch re-verified and promoted.
        assert.ok(
          events.some((e) => e.type === 'verdict' && e.by === 'judge' && e.taskId === 'CALC-4' && e.verdict === 'approve'),
          story(events),
        );
        assert.ok(
          events.some((e) => e.type === 'patch.promoted' && e.taskId === 'CALC-6'),
          story(events),
        );
        for (const id of promotedBefore)
          assert.ok(
            !events.some((e) => e.type === 'patch.promoted' && e.taskId === id),
            `${id} was promoted before the kill and not again`,
          );
        assertDoneTasksPromoted(dir, host.store);
        const subjects = git(dir, 'log', '--format=%s', 'main').split('\n');
        for (const id of STORY_TASKS)
          assert.equal(
            subjects.filter((s) => s.startsWith(`ralph(${id}):`)).length,
            id === 'CALC-5' ? 0 : 1,
            `${id}: ${subjects.join(' | ')}`,
          );
        const readme = git(dir, 'show', 'main:README.md');
        assert.ok(readme.includes(README_AGENT_LINE) && readme.includes(README_USER_LINE), readme);
        assert.equal(readFileSync(join(dir, 'NOTES.md'), 'utf8'), NOTES_USER_TEXT);
        assert.deepEqual(userChanges(dir), [' M NOTES.md']);
        assert.equal(testsPassOnTip(dir), true);
        await assertViewsRebuildEqual(host);
      } finally {
        await host.close();
      }
      // The resume ended what the killed run left running (its process ledger under
      // .ralph/locks/processes) before touching a worktree, and removed the judge's folder.
      assert.deepEqual(
        survivors.filter((p) => commandOf(p) !== ''),
        [],
        `still running after the resume: ${survivorLines.join('; ')}`,
      );
      assert.equal(existsSync(judgeDir), false, `the killed judge's folder ${judgeDir} is removed`);
      assert.deepEqual(processesIn(dir), []);
      assert.deepEqual(processesWithEnv(server.url), []);
      const reaped = events.filter((e) => e.type === 'log' && /left running by a killed run/.test(e.message)).length;
      console.log(
        `      [wall] child until the kill ${(killedAt / 1000).toFixed(1)} s (${promotedBefore.length} promoted: ${promotedBefore.join(', ')}), resume ${(resumeMs / 1000).toFixed(1)} s; ` +
          `${survivors.length} process(es) of the killed run outlived it (${survivorLines.join(' | ')}), ${reaped} ended by the resume`,
      );
    });
  });
});
