// A REQ's agent works in its own confined worktree, like every agent (issue 12), on the REAL
// claude CLI with the scripted model: the request says its working directory is the REQ's
// worktree, outside the user's checkout; a write into the checkout from inside the round
// changes nothing there, and the REQ's commit holds only what it wrote in its worktree.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../kit/git';
import { addReqFiles, assertContract, reqScript, specYaml, subjects, useReqTest, writes } from './reqKit';

describe('req: the REQ agent confined to its worktree, through the real claude CLI', function () {
  this.timeout(600_000);
  const t = useReqTest();

  it("given a round that also writes into the user's checkout, then the checkout is unchanged and the commit holds only the worktree's files", async () => {
    const { p, store } = t;
    addReqFiles(p, specYaml([{ id: 'REQ-001', title: 'Add inc' }]));
    const run = await t.start([
      reqScript('req/REQ-001/round-1/', [
        { tool: 'bash', command: `printf 'escaped\\n' >> ${join(p.dir, 'README.md')}; printf x > ${join(p.dir, 'ESCAPED')}` },
        ...writes({
          'test/inc.test.js': "require('assert').equal(require('../src/inc.js').inc(1), 2);\n",
          'src/inc.js': 'exports.inc = (a) => a + 1;\n',
        }),
      ]),
    ]);
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    const worktree = (
      JSON.parse(
        store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'req.started' AND entity_id = 'REQ-001'")[0]!.payload,
      ) as { worktree: string }
    ).worktree;
    assert.ok(!worktree.startsWith(`${p.dir}/`), `the worktree ${worktree} is outside the checkout ${p.dir}`);
    const req = run.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req/REQ-001/round-1/'))!;
    const wd = /Primary working directory: ([^\\"]+)/.exec(JSON.stringify(req.body))?.[1];
    assert.equal(wd, worktree, 'the agent ran in the REQ worktree');
    assert.equal(readFileSync(join(p.dir, 'README.md'), 'utf8'), '# Sample\n', 'the checkout README is unchanged');
    assert.ok(!existsSync(join(p.dir, 'ESCAPED')), 'nothing new in the checkout from the agent');
    assert.equal(subjects(p.dir)[0], 'ralph-loop: REQ-001 - Add inc');
    assert.deepEqual(git(p.dir, 'show', '--name-only', '--format=', 'main').split('\n').filter(Boolean).sort(), [
      'specification.yaml',
      'src/inc.js',
      'test/inc.test.js',
    ]);
    await assertContract(run, p.dir);
  });
});
