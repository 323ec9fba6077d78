// The demo (`ralph demo`): spec -> evolve_goals proposals -> tasks; a worker in parallel;
// a failing test fixed on retry; a tier-2 patch judged and promoted; the sample's tests pass.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { runDemo } from '../../../src/loop/demo';

describe('loop/demo', function () {
  this.timeout(180_000);
  it('runs the sample project to completion with the scripted executable (--scripted) and tells the whole story', async () => {
    const lines: string[] = [];
    const r = await runDemo((l) => lines.push(l), { scripted: true });
    try {
      const text = lines.join('\n');
      assert.equal(r.testsPass, true);
      assert.equal(r.backend.kind, 'scripted');
      assert.match(text, /Agents: the lightweight scripted claude executable/);
      assert.equal(r.summary.promoted, 4, text);
      assert.match(text, /primary assess → evolve_goals \(backlog empty and specs changed\)/);
      assert.match(text, /worker-1 worker \[CALC-2\]: success/);
      assert.match(text, /primary gate test \[CALC-3\]: failed/);
      assert.match(text, /reflect → implement \[CALC-3\] \(recoverable: retry 1\/3\)/);
      assert.match(text, /CALC-4 deferred to the judge/);
      assert.match(text, /judge approves CALC-4/);
      assert.match(text, /Tasks \(4\): done=4/);
      assert.match(text, new RegExp(`Inspect: ${r.dir}`));
      const log = execFileSync('git', ['log', '--format=%s', 'main'], { cwd: r.dir, encoding: 'utf8' });
      for (const id of ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4']) assert.match(log, new RegExp(`ralph\\(${id}\\)`));
    } finally {
      rmSync(r.dir, { recursive: true, force: true });
    }
  });
});
