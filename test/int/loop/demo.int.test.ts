// The demo (`ralph demo --scripted`): spec -> evolve_goals proposals -> tasks; a worker in
// parallel; a failing test fixed on retry; a tier-2 patch judged and promoted; the sample's
// tests pass. Driven through the CLI verb with the lightweight scripted executable.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { demoCommand } from '../../../src/cli/loopCommands';

describe('loop/demo', function () {
  this.timeout(180_000);
  it('given --scripted, runs the sample project to completion with the scripted executable and tells the whole story', async () => {
    const out: string[] = [];
    const code = await demoCommand({ out: (t) => out.push(t), err: (t) => out.push(t) }, ['--scripted']);
    const text = out.join('');
    const dir = /^Sample project: (\/.+)$/m.exec(text)?.[1];
    assert.ok(dir !== undefined, text);
    try {
      assert.equal(code, 0, text);
      assert.match(
        text,
        /Agents: the lightweight scripted claude executable \(src\/agents\/scripted\/scriptedClaude\.mjs\) \(--scripted\)/,
      );
      assert.match(text, /Promoted: 4 \|/);
      assert.match(text, /primary assess → evolve_goals \(backlog empty and specs changed\)/);
      assert.match(text, /worker-1 worker \[CALC-2\]: success/);
      assert.match(text, /primary gate test \[CALC-3\]: failed/);
      assert.match(text, /reflect → implement \[CALC-3\] \(recoverable: retry 1\/3\)/);
      assert.match(text, /CALC-4 deferred to the judge/);
      assert.match(text, /judge approves CALC-4/);
      assert.match(text, /Tasks \(4\): done=4/);
      assert.match(text, /The sample's own tests on the branch tip \(main\): pass/);
      assert.match(text, new RegExp(`Inspect: ${dir} \\(`));
      assert.match(text, /Demo finished in \d+\.\d s \(scripted executable\)/);
      const log = execFileSync('git', ['log', '--format=%s', 'main'], { cwd: dir, encoding: 'utf8' });
      for (const id of ['CALC-1', 'CALC-2', 'CALC-3', 'CALC-4']) assert.match(log, new RegExp(`ralph\\(${id}\\)`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('given an unknown argument, prints the usage and exits 2 without generating anything', async () => {
    const err: string[] = [];
    const code = await demoCommand({ out: () => assert.fail('nothing printed to stdout'), err: (t) => err.push(t) }, ['--bogus']);
    assert.equal(code, 2);
    assert.match(err.join(''), /ralph demo: unknown argument '--bogus' \(usage: ralph demo \[--req\] \[--scripted\]\)/);
  });
});
