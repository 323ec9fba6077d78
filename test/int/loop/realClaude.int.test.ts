// The loop driving the REAL `claude` CLI (pinned, in .tools/) against the scripted model
// server: the primary completes a tier-1 task with a sub-step plan, a worker an S task in
// parallel, and a tier-2 patch is judged in a separate invocation whose request holds only
// the task, the diff, the gate results and the rules.
import assert from 'node:assert/strict';
import type { EventStore } from '../../../src/store/types';
import { freshClaudeRunEachTest } from './claudeRun';
import type { ClaudeRun } from './claudeRun';
import { addTasks, plan, script } from './sampleProject';
import { git } from '../../kit/git';
import type { SampleProject } from './sampleProject';

describe('loop/Loop with the real claude CLI and the scripted model server', function () {
  this.timeout(240_000);
  let run: ClaudeRun;
  let p: SampleProject;
  let store: EventStore;
  freshClaudeRunEachTest((r) => {
    run = r;
    ({ p, store } = r);
  });

  it('given a sub-step plan, an S task and a tier-2 task, then all are promoted and the judge saw only task, diff, gates and rules', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 },
      { id: 'T-2', title: 'Add mul()', effort: 'S', wave: 0 },
      { id: 'T-4', title: 'Token check', effort: 'M', wave: 1 },
    ]);
    const server = await run.serve({
      scripts: [
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
        script('worker/T-2/attempt-1/', [{ tool: 'write', path: 'src/mul.js', content: 'module.exports = (a, b) => a * b;\n' }]),
        script('plan/T-4/', [], plan('T-4', [{ description: 'token check', files: ['src/auth/token.js'] }])),
        script('implement/T-4/step-1/', [{ tool: 'write', path: 'src/auth/token.js', content: 'module.exports = (t) => t.length > 8;\n' }]),
        script('review_deferred/T-4/', [], { task_id: 'T-4', verdict: 'approve', rationale: 'tiny and safe', confidence: 0.8 }),
        { name: 'fallback', turns: [{ text: 'nothing to do' }] },
      ],
    });
    // acceptEdits (the default) inside bubblewrap, as the product runs it: the worktrees are
    // in the cache, no longer under .git/ where acceptEdits refused edits.
    const { loop, events } = run.loop({ periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 } });
    const summary = await loop.run();
    const status = Object.fromEntries(
      store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view').map((t) => [t.task_id, t.status]),
    );
    assert.deepEqual(
      status,
      { 'T-1': 'done', 'T-2': 'done', 'T-4': 'done' },
      JSON.stringify(
        events.filter((e) => e.type === 'agent.finished' || e.type === 'log' || e.type.startsWith('task.')),
        null,
        1,
      ),
    );
    assert.equal(summary.promoted, 3);
    assert.ok(events.some((e) => e.type === 'verdict' && e.by === 'judge' && e.taskId === 'T-4'));
    const judgeRequests = server.requests.filter((r) => r.prompt.includes('RALPH-KEY: review_deferred/T-4/'));
    assert.ok(judgeRequests.length >= 1);
    for (const r of judgeRequests) {
      assert.match(r.prompt, /diff --git a\/src\/auth\/token\.js/);
      assert.match(r.prompt, /Task T-4: Token check/);
      assert.match(r.prompt, /Gate results: build=passed, test=passed/);
      assert.ok(!r.prompt.includes('Small modules, tests beside them'), 'the judge does not get core.md');
      assert.ok(!r.prompt.includes('src/add.js') && !r.prompt.includes('T-1'), 'the judge sees nothing of other work');
    }
    assert.ok(summary.costUsd > 0, 'cost accounted from the CLI');
    const subjects = git(p.dir, 'log', '--format=%s', 'main');
    for (const id of ['T-1', 'T-2', 'T-4']) assert.match(subjects, new RegExp(`ralph\\(${id}\\)`));
  });
});
