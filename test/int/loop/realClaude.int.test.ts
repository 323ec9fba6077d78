// The loop driving the REAL `claude` CLI (pinned, in .tools/) against the scripted model
// server: the primary completes a tier-1 task with a sub-step plan, a worker an S task in
// parallel, and a tier-2 patch is judged in a separate invocation whose request holds only
// the task, the diff, the gate results and the rules.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { Loop } from '../../../src/loop/loop';
import { JsonlMetrics } from '../../../src/loop/metricsFile';
import type { LoopEvent } from '../../../src/loop/events';
import type { EventStore } from '../../../src/store/types';
import { detectConfinement } from '../../../src/agents/sandbox';
import { claudeSandbox, ensureAgentClis } from '../../kit/agentEnv';
import type { Sandbox } from '../../kit/agentEnv';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';
import { addTasks, createSampleProject, git, openSampleStore, plan, sampleSettings, script } from './sampleProject';
import type { SampleProject } from './sampleProject';

describe('loop/Loop with the real claude CLI and the scripted model server', function () {
  this.timeout(240_000);
  let p: SampleProject;
  let store: EventStore;
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  let claudeBin: string;

  before(() => {
    claudeBin = ensureAgentClis().claude;
  });
  beforeEach(async () => {
    p = createSampleProject();
    store = await openSampleStore(p.ralphDir);
  });
  afterEach(async () => {
    await server?.close();
    sandbox?.cleanup();
    await store.close().catch(() => undefined);
    rmSync(p.dir, { recursive: true, force: true });
  });

  it('given a sub-step plan, an S task and a tier-2 task, then all are promoted and the judge saw only task, diff, gates and rules', async () => {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 },
      { id: 'T-2', title: 'Add mul()', effort: 'S', wave: 0 },
      { id: 'T-4', title: 'Token check', effort: 'M', wave: 1 },
    ]);
    server = await startModelServer({
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
    sandbox = claudeSandbox(server.url);
    const settings = sampleSettings({ periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 } });
    // acceptEdits (the default) inside bubblewrap, as the product runs it: the worktrees are
    // in the cache, no longer under .git/ where acceptEdits refused edits.
    const backend = createClaudeBackend({ command: claudeBin, baseEnv: {}, confinement: detectConfinement('claude') });
    const loop = new Loop({
      projectDir: p.dir,
      settings,
      control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
      backends: { primary: backend, worker: backend, judge: backend },
      metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
      agentEnv: sandbox.env,
      once: true,
    });
    const events: LoopEvent[] = [];
    const t0 = Date.now();
    loop.events.on((e) => {
      events.push(e);
      if (process.env.RALPH_LOOP_DEBUG && e.type !== 'gate.progress') console.log(Date.now() - t0, JSON.stringify(e).slice(0, 400));
    });
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
