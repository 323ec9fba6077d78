// A project from a scripted run for the MCP tests: the sample project's loop (scripted claude
// executable) finishes T-1 (a worker's S task) and defers T-3 and T-4 (tier 2: they touch
// src/auth/) to a judge that never answers; the run is stopped once both wait, so two
// deferred patches are left for a decision. T-5 (wave 1) is added afterwards, pending.
import type { EventStore } from '../../../src/store/types';
import { addTasks, createSampleProject, openSampleStore, plan, script, scriptedLoop, writeScenario } from '../loop/sampleProject';
import type { SampleProject } from '../loop/sampleProject';

export const CLIENT = { name: 'ralph-int-test', version: '9.9.9' } as const;

const hangingJudge = (id: string): Record<string, unknown> => ({
  name: `judge/${id}`,
  match: `RALPH-KEY: review_deferred/${id}/`,
  turns: [{ hang: true }],
});

export async function projectWithDeferredPatches(): Promise<SampleProject> {
  const p = createSampleProject();
  const store: EventStore = await openSampleStore(p.ralphDir);
  try {
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Add mul()', effort: 'S', wave: 0 },
      { id: 'T-3', title: 'Session check', effort: 'M', wave: 0, source: 'specs/auth.md:3' },
      { id: 'T-4', title: 'Token check', effort: 'M', wave: 0, source: 'specs/auth.md:9' },
    ]);
    writeScenario(p, [
      script('worker/T-1/', [
        { tool: 'write', path: 'src/mul.js', content: 'module.exports = (a, b) => a * b;\n' },
        { tool: 'write', path: 'test/mul.test.js', content: "require('assert').equal(require('../src/mul.js')(2, 3), 6);\n" },
      ]),
      script('plan/T-3/', [], plan('T-3', [{ description: 'session check', files: ['src/auth/session.js'] }])),
      script('implement/T-3/step-1/', [{ tool: 'write', path: 'src/auth/session.js', content: 'module.exports = (s) => Boolean(s);\n' }]),
      script('plan/T-4/', [], plan('T-4', [{ description: 'token check', files: ['src/auth/token.js'] }])),
      script('implement/T-4/step-1/', [
        { tool: 'write', path: 'src/auth/token.js', content: 'module.exports = (t) => typeof t === "string" && t.length > 8;\n' },
      ]),
      hangingJudge('T-3'),
      hangingJudge('T-4'),
    ]);
    const { loop } = scriptedLoop(p, store, {}, false);
    const waiting = new Set<string>();
    let promoted = false;
    const settled = loop.events.next((e) => {
      if (e.type === 'patch.deferred') waiting.add(e.taskId);
      if (e.type === 'patch.promoted' && e.taskId === 'T-1') promoted = true;
      return promoted && waiting.has('T-3') && waiting.has('T-4');
    });
    await loop.start();
    await settled;
    await loop.stop('fixture ready');
    await addTasks(store, p.ralphDir, [{ id: 'T-5', title: 'Later work', effort: 'M', wave: 1 }]);
    const statuses = store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view ORDER BY task_id');
    const want = 'T-1:done,T-3:deferred,T-4:deferred,T-5:pending';
    const got = statuses.map((t) => `${t.task_id}:${t.status}`).join(',');
    if (got !== want) throw new Error(`fixture: expected ${want}, got ${got}`);
  } finally {
    await store.close();
  }
  return p;
}
