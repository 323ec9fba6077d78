// REQ mode's retries, blocks and decisions on the REAL claude CLI with the scripted model:
// round 2's prompt carries the failure summary, round 3's both and the different-approach
// instruction; a REQ that keeps failing blocks itself and its dependents (blocked(auto))
// while an independent one completes; `ralph req decide ... manual` queued beside the
// writer, then a resume verifies the hand fix and commits it; two timeouts block as "REQ too
// large". The status contract after every step.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../../src/cli/run';
import { DIFFERENT_APPROACH } from '../../../src/domain/reqPrompt';
import { addReqFiles, assertContract, reqScript, specYaml, subjects, useReqTest, writes } from './reqKit';
import type { ReqRun } from './reqKit';

const promptsOf = (run: ReqRun, key: string): string[] =>
  run.server.requests.filter((r) => r.prompt.includes(`RALPH-KEY: ${key}`)).map((r) => r.prompt);

describe('req: retries, blocks and decisions through the real claude CLI', function () {
  this.timeout(600_000);
  const t = useReqTest();

  it('given a REQ failing coverage and one failing L1 then L2, then both pass on retry with the failure summaries in rounds 2 and 3', async () => {
    const { p, store } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'Add add and twice' },
        { id: 'REQ-002', title: 'Add half', deps: ['REQ-001'] },
      ]),
    );
    const testAdd =
      "const { add } = require('../src/add.js');\nrequire('assert').equal(add(2, 3), 5);\nrequire('assert').equal(add(0, 0), 0);\n";
    const run = await t.start([
      // round 1: twice() is not covered by any test -> L3 50 %
      reqScript(
        'req/REQ-001/round-1/',
        writes({ 'test/add.test.js': testAdd, 'src/add.js': 'exports.add = (a, b) => a + b;\nexports.twice = (a) => 2 * a;\n' }),
      ),
      // (a new file: Claude Code's Write refuses to overwrite a file it has not read)
      reqScript(
        'req/REQ-001/round-2/',
        writes({ 'test/twice.test.js': "require('assert').equal(require('../src/add.js').twice(4), 8);\n" }),
      ),
      // round 1: a syntax error -> L1; round 2: a failing assertion -> L2; round 3 passes
      reqScript(
        'req/REQ-002/round-1/',
        writes({
          'test/half.test.js': "require('assert').equal(require('../src/half.js').half(4), 2);\n",
          'src/half.js': 'exports.half = (a) => a / ;\n',
        }),
      ),
      reqScript('req/REQ-002/round-2/', [{ tool: 'bash', command: "printf 'exports.half = (a) => a / 3;\\n' > src/half.js" }]),
      reqScript('req/REQ-002/round-3/', [{ tool: 'bash', command: "printf 'exports.half = (a) => a * 0.5;\\n' > src/half.js" }]),
    ]);
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    const r1 = promptsOf(run, 'req/REQ-001/round-2/');
    assert.ok(r1.length > 0);
    assert.match(r1[0]!, /## Previous failures\nRound 1 failed at L3:\nL3 \(coverage\): lines 50% below the threshold 80%/);
    assert.ok(!r1[0]!.includes(DIFFERENT_APPROACH));
    const r2 = promptsOf(run, 'req/REQ-002/round-2/');
    assert.match(r2[0]!, /Round 1 failed at L1:\nL1 \(build\) failed:\n.*SyntaxError/s);
    const r3 = promptsOf(run, 'req/REQ-002/round-3/');
    assert.match(r3[0]!, /Round 1 failed at L1:.*Round 2 failed at L2:\nL2 \(test\) failed:\n.*(AssertionError|Expected)/s);
    assert.ok(r3[0]!.includes(DIFFERENT_APPROACH));
    assert.deepEqual(subjects(p.dir).slice(0, 2), ['ralph-loop: REQ-002 - Add half', 'ralph-loop: REQ-001 - Add add and twice']);
    const layers = store.all<{ n: number }>("SELECT count(*) AS n FROM events WHERE event_type = 'req.round_failed'");
    assert.equal(layers[0]?.n, 3);
    await assertContract(run, p.dir);
  });

  it('given a REQ that keeps failing, then it and its dependent block while an independent REQ completes; a manual decision queued beside the run is verified and committed on resume', async () => {
    const { p, store } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'Add inc', priority: 1 },
        { id: 'REQ-002', title: 'Add dec', deps: ['REQ-001'], priority: 1 },
        { id: 'REQ-003', title: 'Add one', priority: 2 },
      ]),
    );
    const run = await t.start([
      // REQ-001 has no script: every round answers "nothing to do" and changes nothing.
      reqScript(
        'req/REQ-003/round-1/',
        writes({ 'test/one.test.js': "require('assert').equal(require('../src/one.js').one, 1);\n", 'src/one.js': 'exports.one = 1;\n' }),
      ),
      reqScript(
        'req/REQ-002/round-1/',
        writes({
          'test/dec.test.js': "require('assert').equal(require('../src/dec.js').dec(2), 1);\n",
          'src/dec.js': 'exports.dec = (a) => a - 1;\n',
        }),
      ),
    ]);
    const first = await run.engine.run();
    assert.equal(first.status, 'WAIT_USER', run.lines.join('\n'));
    const byId = Object.fromEntries(first.reqs.map((r) => [r.id, r]));
    assert.equal(byId['REQ-001']?.status, 'blocked');
    assert.equal(byId['REQ-002']?.status, 'blocked_auto');
    assert.equal(byId['REQ-002']?.blocked_by, 'REQ-001');
    assert.equal(byId['REQ-003']?.status, 'done', 'the independent REQ went on');
    assert.deepEqual(first.requirements, { total: 3, done: 1, pending: 0, blocked: 2, skipped: 0 });
    assert.equal(promptsOf(run, 'req/REQ-001/round-').length >= 3, true);
    assert.equal(promptsOf(run, 'req/REQ-002/').length, 0, 'the dependent never ran');
    assert.ok(store.all("SELECT 1 FROM events WHERE event_type = 'req.blocked_auto' AND entity_id = 'REQ-002'").length === 1);

    // The writer holds the store: the decision is queued for it.
    let out = '';
    const code = await runCli(['--dir', p.dir, 'req', 'decide', 'REQ-001', 'manual'], {
      io: { out: (t) => void (out += t), err: () => undefined },
    });
    assert.equal(code, 0);
    assert.match(out, /^QUEUED /);
    // The user fixes it by hand in the REQ's worktree.
    const wt =
      run.engine.status() &&
      store.all<{ payload: string }>(
        "SELECT payload FROM events WHERE event_type = 'req.started' AND entity_id = 'REQ-001' ORDER BY rowid DESC LIMIT 1",
      );
    const worktree = (JSON.parse(wt[0]!.payload) as { worktree: string }).worktree;
    writeFileSync(join(worktree, 'src', 'inc.js'), 'exports.inc = (a) => a + 1;\n');
    writeFileSync(join(worktree, 'test', 'inc.test.js'), "require('assert').equal(require('../src/inc.js').inc(1), 2);\n");
    const second = await run.engine.run({ resume: true });
    assert.equal(second.status, 'COMPLETE', run.lines.join('\n'));
    assert.match(run.lines.join('\n'), /decision: REQ-001 manual/);
    assert.deepEqual(subjects(p.dir).slice(0, 3), [
      'ralph-loop: REQ-002 - Add dec',
      'ralph-loop: REQ-001 - Add inc',
      'ralph-loop: REQ-003 - Add one',
    ]);
    await assertContract(run, p.dir);
  });

  it('given two rounds that time out, then the REQ is blocked as "REQ too large" with split / skip / continue', async () => {
    const { p, store } = t;
    addReqFiles(p, specYaml([{ id: 'REQ-001', title: 'Everything at once' }]));
    const run = await t.start([{ name: 'hang', match: 'RALPH-KEY: req/REQ-001/', turns: [{ hang: true }] }], {
      req: { roundTimeoutMs: 4000 },
    });
    const report = await run.engine.run();
    assert.equal(report.status, 'WAIT_USER');
    const blocked = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'req.blocked'");
    assert.equal(blocked.length, 1);
    const b = JSON.parse(blocked[0]!.payload) as { kind: string; reason: string; options: string[]; rounds: number };
    assert.equal(b.kind, 'too_large');
    assert.match(b.reason, /^REQ too large: 2 rounds timed out/);
    assert.deepEqual(b.options, ['split', 'skip', 'continue']);
    assert.equal(b.rounds, 2, 'no third round');
    await assertContract(run, p.dir);
  });
});
