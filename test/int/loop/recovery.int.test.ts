// Crash recovery: a loop process is killed with SIGKILL in the middle of a promotion; a new
// run recovers (stale claims back to pending, orphaned worktrees, queued patches re-evaluated)
// and finishes without losing or duplicating promoted work.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLoopHost } from '../../../src/loop/host';
import type { LoopEvent } from '../../../src/loop/events';
import { addTasks, createSampleProject, openSampleStore, plan, runLoopChildUntil, script, writeScenario } from './sampleProject';
import { git } from '../../kit/git';
import type { SampleProject } from './sampleProject';

function writeConfig(p: SampleProject): void {
  const config = {
    name: 'sample',
    lang: 'generic',
    build: 'node scripts/build.js',
    test: 'node scripts/test.js',
    lint: '',
    forbidden_patterns: ['eval('],
    model: 'claude-sonnet-4-5-20250929',
    backends: { primary: 'scripted', worker: 'scripted', judge: 'scripted', scripted: { scenario: '.ralph/scenario.json' } },
    workers: { count: 1 },
    intervals: { primary: 1, worker: 1 },
  };
  writeFileSync(join(p.dir, 'ralph.config.json'), JSON.stringify(config, null, 2));
  git(p.dir, 'add', 'ralph.config.json');
  git(p.dir, 'commit', '-q', '-m', 'ralph config');
}

describe('loop recovery after kill -9', function () {
  this.timeout(180_000);
  let p: SampleProject;
  beforeEach(() => {
    p = createSampleProject();
    writeConfig(p);
  });
  afterEach(() => rmSync(p.dir, { recursive: true, force: true }));

  for (const [label, killAt] of [
    ['right after patch.queued (promotion in flight)', (e: LoopEvent) => e.type === 'patch.queued'],
    ['while a worker agent runs (claim held)', (e: LoopEvent) => e.type === 'agent.started' && e.agent === 'worker-1'],
    ['right after the first promotion', (e: LoopEvent) => e.type === 'patch.promoted'],
  ] as const) {
    it(`given a run killed ${label}, then a new run finishes every task exactly once`, async () => {
      const store0 = await openSampleStore(p.ralphDir);
      await addTasks(store0, p.ralphDir, [
        { id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 },
        { id: 'T-2', title: 'Add mul()', effort: 'S', wave: 0 },
        { id: 'T-3', title: 'Add neg()', effort: 'S', wave: 0 },
      ]);
      await store0.close();
      writeScenario(p, [
        script('plan/T-1/', [], plan('T-1', [{ description: 'add', files: ['src/add.js'] }])),
        script('implement/T-1/step-1/', [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }]),
        script('worker/T-2/', [{ tool: 'write', path: 'src/mul.js', content: 'module.exports = (a, b) => a * b;\n' }]),
        script('worker/T-3/', [{ tool: 'write', path: 'src/neg.js', content: 'module.exports = (a) => -a;\n' }]),
        script('plan/T-2/', [], plan('T-2', [{ description: 'mul', files: ['src/mul.js'] }])),
        script('implement/T-2/step-1/', [{ tool: 'write', path: 'src/mul.js', content: 'module.exports = (a, b) => a * b;\n' }]),
        script('plan/T-3/', [], plan('T-3', [{ description: 'neg', files: ['src/neg.js'] }])),
        script('implement/T-3/step-1/', [{ tool: 'write', path: 'src/neg.js', content: 'module.exports = (a) => -a;\n' }]),
      ]);
      const { seen: before } = await runLoopChildUntil(p.dir, killAt);
      assert.ok(before.length > 0);

      const host = await openLoopHost({ projectDir: p.dir, once: true });
      const events: LoopEvent[] = [];
      host.loop.events.on((e) => events.push(e));
      try {
        await host.loop.run();
        const status = Object.fromEntries(
          host.store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view').map((t) => [t.task_id, t.status]),
        );
        assert.deepEqual(
          status,
          { 'T-1': 'done', 'T-2': 'done', 'T-3': 'done' },
          JSON.stringify(events.filter((e) => e.type !== 'gate.progress').slice(-30), null, 1),
        );
        const subjects = git(p.dir, 'log', '--format=%s', 'main').split('\n');
        for (const id of ['T-1', 'T-2', 'T-3']) {
          assert.equal(subjects.filter((s) => s.startsWith(`ralph(${id})`)).length, 1, `one commit for ${id}: ${subjects.join(' | ')}`);
        }
        const promoted = host.store.all<{ task_id: string; n: number }>(
          "SELECT task_id, COUNT(*) AS n FROM patch_view WHERE status = 'promoted' GROUP BY task_id",
        );
        assert.ok(
          promoted.every((r) => r.n === 1),
          JSON.stringify(promoted),
        );
        const rows = JSON.stringify(host.store.all('SELECT * FROM task_view ORDER BY task_id'));
        await host.store.rebuild();
        assert.equal(JSON.stringify(host.store.all('SELECT * FROM task_view ORDER BY task_id')), rows);
        assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=no'), '');
        // The closed patches' files left commits/pending/, the killed run's included.
        assert.deepEqual(readdirSync(join(p.ralphDir, 'commits', 'pending')), []);
        for (const r of host.store.all<{ patch_path: string }>("SELECT patch_path FROM patch_view WHERE status = 'promoted'"))
          assert.ok(existsSync(r.patch_path) && r.patch_path.includes('/commits/applied/'), r.patch_path);
      } finally {
        await host.close();
      }
    });
  }
});
