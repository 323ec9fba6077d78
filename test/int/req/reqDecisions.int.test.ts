// The user's decisions on blocked REQs (seed 001: skip / manual / stop / rollback) doing what
// they say, on the REAL claude CLI with the scripted model: `skip` skips the REQ and the REQs
// waiting on it and nothing of them is built or committed; `rollback` throws the attempt
// away (a fresh worktree from the branch tip, a fresh round budget, no earlier failures in
// the prompt) and the REQ is built again; `stop` decided while a REQ is being built ends the
// run after that REQ (PARTIAL), the rest untouched. `manual` is in reqRetries. The status
// contract after every step.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../../src/cli/run';
import { queueReqDecision } from '../../../src/req/decisions';
import { addReqFiles, assertContract, reqScript, specYaml, subjects, useReqTest, writes } from './reqKit';
import type { ReqRun } from './reqKit';

const keysOf = (run: ReqRun): string[] => [
  ...new Set(run.server.requests.map((r) => /RALPH-KEY: (\S+)/.exec(r.prompt)?.[1]).filter((k): k is string => k !== undefined)),
];

function passing(id: string, fn: string, body: string): Record<string, unknown> {
  return reqScript(
    `req/${id}/round-1/`,
    writes({
      [`test/${fn}.test.js`]: `const { ${fn} } = require('../src/${fn}.js');\nrequire('assert').equal(typeof ${fn}(2), 'number');\n`,
      [`src/${fn}.js`]: `exports.${fn} = ${body};\n`,
    }),
  );
}

async function decide(dir: string, id: string, decision: string): Promise<void> {
  let out = '';
  const code = await runCli(['--dir', dir, 'req', 'decide', id, decision], {
    io: { out: (t) => void (out += t), err: (t) => void (out += t) },
  });
  assert.equal(code, 0, out);
  assert.match(out, /^QUEUED /, 'the test holds the writer: the decision is queued for the run');
}

describe('req: decisions on blocked REQs through the real claude CLI', function () {
  this.timeout(600_000);
  const t = useReqTest();

  it('given two blocked REQs, when one is rolled back and the other skipped, then the first is built afresh and committed, the second and its dependent are skipped, nothing of them committed', async () => {
    const { p, store } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'Add inc', priority: 1 },
        { id: 'REQ-002', title: 'Add dec', deps: ['REQ-001'], priority: 1 },
        { id: 'REQ-003', title: 'Add one', priority: 2 },
        { id: 'REQ-004', title: 'Add neg', priority: 3 },
        { id: 'REQ-005', title: 'Add sq', deps: ['REQ-004'], priority: 1 },
      ]),
    );
    // Run 1: REQ-001's attempt leaves a module that does not load (L1 fails in all 3 rounds);
    // REQ-004 never changes anything; REQ-003 passes.
    const first = await t.start([
      reqScript(
        'req/REQ-001/round-1/',
        writes({
          'test/inc.test.js': "require('assert').equal(require('../src/inc.js').inc(1), 2);\n",
          'src/inc.js': 'exports.inc = (a) => a + ;\n',
        }),
      ),
      passing('REQ-003', 'one', '() => 1'),
    ]);
    const r1 = await first.engine.run();
    assert.equal(r1.status, 'WAIT_USER', first.lines.join('\n'));
    const status1 = Object.fromEntries(r1.reqs.map((r) => [r.id, r.status]));
    assert.deepEqual(status1, {
      'REQ-001': 'blocked',
      'REQ-003': 'done',
      'REQ-004': 'blocked',
      'REQ-002': 'blocked_auto',
      'REQ-005': 'blocked_auto',
    });
    const attempt = (
      JSON.parse(
        store.all<{ payload: string }>(
          "SELECT payload FROM events WHERE event_type = 'req.started' AND entity_id = 'REQ-001' ORDER BY rowid DESC LIMIT 1",
        )[0]!.payload,
      ) as { worktree: string }
    ).worktree;
    assert.equal(
      readFileSync(join(attempt, 'src', 'inc.js'), 'utf8'),
      'exports.inc = (a) => a + ;\n',
      'the failed attempt is in its worktree',
    );
    const before = subjects(p.dir);
    assert.equal(before[0], 'ralph-loop: REQ-003 - Add one');
    assert.ok(!before.some((s) => /REQ-00[14]/.test(s)), 'nothing committed on a failure');
    await assertContract(first, p.dir);

    await decide(p.dir, 'REQ-001', 'rollback');
    await decide(p.dir, 'REQ-004', 'skip');
    // Run 2: REQ-001's round 1 writes the module anew (Claude Code's Write would refuse to
    // replace a file it has not read: the rolled-back worktree must not have the old one).
    const second = await t.start([passing('REQ-001', 'inc', '(a) => a + 1'), passing('REQ-002', 'dec', '(a) => a - 1')]);
    const r2 = await second.engine.run({ resume: true });
    assert.equal(r2.status, 'PARTIAL', second.lines.join('\n'));
    assert.deepEqual(r2.requirements, { total: 5, done: 3, pending: 0, blocked: 0, skipped: 2 });
    assert.match(second.lines.join('\n'), /decision: REQ-001 rollback/);
    assert.match(second.lines.join('\n'), /decision: REQ-004 skip/);
    assert.match(second.lines.join('\n'), /PARTIAL: 3\/5 done, 0 blocked, 2 skipped/);
    // Skipped: REQ-004 by the decision, REQ-005 because it depends on it; neither ran again.
    const skipped = store
      .all<{ entity_id: string; payload: string }>("SELECT entity_id, payload FROM events WHERE event_type = 'req.skipped' ORDER BY rowid")
      .map((e) => [e.entity_id, (JSON.parse(e.payload) as { because: string | null }).because]);
    assert.deepEqual(skipped, [
      ['REQ-004', null],
      ['REQ-005', 'REQ-004'],
    ]);
    assert.deepEqual(keysOf(second), ['req/REQ-001/round-1/', 'req/REQ-002/round-1/'], 'a fresh round 1 for REQ-001; nothing for 004/005');
    const again = second.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req/REQ-001/round-1/'))!;
    assert.doesNotMatch(again.prompt, /## Previous failures/, 'the rolled-back attempt is forgotten');
    assert.match(again.prompt, /round 1 of 3/);
    // Built and committed afresh: the new module, not the attempt's.
    assert.deepEqual(subjects(p.dir).slice(0, 3), [
      'ralph-loop: REQ-002 - Add dec',
      'ralph-loop: REQ-001 - Add inc',
      ...before.slice(0, 1),
    ]);
    assert.equal(readFileSync(join(p.dir, 'src', 'inc.js'), 'utf8'), 'exports.inc = (a) => a + 1;\n');
    assert.ok(!existsSync(join(p.dir, 'src', 'neg.js')) && !existsSync(join(p.dir, 'src', 'sq.js')), 'nothing of the skipped REQs');
    assert.ok(!subjects(p.dir).some((s) => /REQ-00[45]/.test(s)), 'no commit for a skipped REQ');
    await assertContract(second, p.dir);
  });

  it('given a stop decided while a REQ is being built, then that REQ finishes and is committed, the run ends PARTIAL and no other REQ starts', async () => {
    const { p, store } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'Add inc', priority: 1 },
        { id: 'REQ-002', title: 'Add dec', priority: 2 },
        { id: 'REQ-003', title: 'Add one', priority: 3 },
      ]),
    );
    const run = await t.start([
      passing('REQ-001', 'inc', '(a) => a + 1'),
      passing('REQ-002', 'dec', '(a) => a - 1'),
      passing('REQ-003', 'one', '() => 1'),
    ]);
    // Queued the moment REQ-001 starts (as `ralph req decide` or VS Code queue it beside a run).
    let queued = '';
    const sub = store.onDidAppend((events) => {
      if (queued === '' && events.some((e) => e.event_type === 'req.started' && e.entity_id === 'REQ-001'))
        queued = queueReqDecision(p.ralphDir, { req: 'REQ-001', decision: 'stop', actor: 'test' });
    });
    try {
      const report = await run.engine.run();
      assert.ok(queued !== '', 'the stop was queued during REQ-001');
      assert.equal(report.status, 'PARTIAL', run.lines.join('\n'));
      assert.deepEqual(report.requirements, { total: 3, done: 1, pending: 2, blocked: 0, skipped: 0 });
      assert.match(run.lines.join('\n'), /decision: REQ-001 stop/);
      assert.deepEqual(keysOf(run), ['req/REQ-001/round-1/'], 'no REQ after the stop');
      assert.equal(subjects(p.dir)[0], 'ralph-loop: REQ-001 - Add inc');
      const ids = store.all<{ entity_id: string }>("SELECT DISTINCT entity_id FROM events WHERE event_type = 'req.started'");
      assert.deepEqual(
        ids.map((r) => r.entity_id),
        ['REQ-001'],
      );
      await assertContract(run, p.dir);
      // A later run goes on from there: the stop was for that run only.
      const next = await run.engine.run({ resume: true });
      assert.equal(next.status, 'COMPLETE', run.lines.join('\n'));
      assert.deepEqual(subjects(p.dir).slice(0, 3), [
        'ralph-loop: REQ-003 - Add one',
        'ralph-loop: REQ-002 - Add dec',
        'ralph-loop: REQ-001 - Add inc',
      ]);
    } finally {
      sub.dispose();
    }
  });
});
