// REQ mode's test infrastructure check (seed 001: 测试基础设施检查) on the REAL claude CLI
// with the scripted model, asserted on the requests the server received: a missing
// test-utilities module is dispatched first and its API goes into the REQ's context; one
// lacking an export the configuration asks for gets an incremental dispatch naming only the
// missing exports; a complete one is not dispatched (its summary is in the prompt, reqLoop);
// one that two dispatches do not create is given up and the REQ goes on without it.
import assert from 'node:assert/strict';
import { git } from '../../kit/git';
import { addReqFiles, assertContract, reqScript, specYaml, subjects, useReqTest, writes } from './reqKit';

const REQ_ROUND = reqScript(
  'req/REQ-001/round-1/',
  writes({
    'test/inc.test.js':
      "const { approx } = require('./test-utils.js');\nrequire('assert').ok(approx(require('../src/inc.js').inc(1), 2));\n",
    'src/inc.js': 'exports.inc = (a) => a + 1;\n',
  }),
);

describe('req: test infrastructure first, through the real claude CLI', function () {
  this.timeout(600_000);
  const t = useReqTest();

  const infraEvents = (): { path: string; outcome: string; missing: string[]; tries: number }[] =>
    t.store
      .all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'req.test_infra' ORDER BY rowid")
      .map((e) => JSON.parse(e.payload) as { path: string; outcome: string; missing: string[]; tries: number });

  it('given no test-utilities module, then a dispatch creates it before the REQ, whose context then carries its API', async () => {
    const { p } = t;
    addReqFiles(p, specYaml([{ id: 'REQ-001', title: 'Add inc' }]), { testUtils: false });
    const run = await t.start(
      [
        reqScript(
          'req_test_infra/REQ-001/try-1/',
          writes({ 'test/test-utils.js': 'exports.approx = (a, b) => Math.abs(a - b) < 1e-9;\nexports.fixture = (name) => ({ name });\n' }),
        ),
        REQ_ROUND,
      ],
      { req: { testUtilsExports: ['approx', 'fixture'] } },
    );
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    const keys = run.server.requests.map((r) => /RALPH-KEY: (\S+)/.exec(r.prompt)?.[1]).filter((k) => k !== undefined);
    assert.deepEqual([...new Set(keys)], ['req_test_infra/REQ-001/try-1/', 'req/REQ-001/round-1/'], 'infrastructure first');
    const infra = run.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req_test_infra/'))!;
    assert.match(infra.prompt, /Create the project's test-utilities module test\/test-utils\.js exporting: approx, fixture/);
    const req = run.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req/REQ-001/round-1/'))!;
    assert.match(req.prompt, /## Test utilities \(test\/test-utils\.js\): use these\nexports\.approx = .*\nexports\.fixture = /);
    assert.deepEqual(infraEvents(), [{ path: 'test/test-utils.js', outcome: 'created', missing: [], tries: 1 }]);
    // The module is committed with the REQ that needed it.
    assert.equal(subjects(p.dir)[0], 'ralph-loop: REQ-001 - Add inc');
    assert.match(git(p.dir, 'show', 'main:test/test-utils.js'), /exports\.fixture/);
    await assertContract(run, p.dir);
  });

  it('given a module lacking an export the REQs need, then an incremental dispatch asks for only the missing one', async () => {
    const { p } = t;
    addReqFiles(p, specYaml([{ id: 'REQ-001', title: 'Add inc' }]));
    const run = await t.start(
      [
        reqScript('req_test_infra/REQ-001/try-1/', [
          { tool: 'bash', command: "printf 'exports.numbers = (n) => [...Array(n).keys()];\\n' >> test/test-utils.js" },
        ]),
        REQ_ROUND,
      ],
      { req: { testUtilsExports: ['approx', 'fixture', 'numbers'] } },
    );
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    const infra = run.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req_test_infra/'))!;
    assert.match(
      infra.prompt,
      /Extend the test-utilities module test\/test-utils\.js with the missing exports: numbers\. Keep its existing exports/,
    );
    const e = infraEvents();
    assert.equal(e.length, 1);
    assert.equal(e[0]?.outcome, 'extended');
    assert.deepEqual(e[0]?.missing, []);
    const req = run.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req/REQ-001/round-1/'))!;
    assert.match(req.prompt, /exports\.numbers = /);
    await assertContract(run, p.dir);
  });

  it('given a dispatch that never creates the module, then after 2 tries the REQ proceeds without it and says so', async () => {
    const { p } = t;
    addReqFiles(p, specYaml([{ id: 'REQ-001', title: 'Add inc' }]), { testUtils: false });
    // No script answers the infra dispatches: each try ends with nothing written.
    const run = await t.start(
      [
        reqScript(
          'req/REQ-001/round-1/',
          writes({
            'test/inc.test.js': "require('assert').equal(require('../src/inc.js').inc(1), 2);\n",
            'src/inc.js': 'exports.inc = (a) => a + 1;\n',
          }),
        ),
      ],
      { req: { testUtilsExports: ['approx'] } },
    );
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    const keys = run.server.requests.map((r) => /RALPH-KEY: (\S+)/.exec(r.prompt)?.[1]).filter((k) => k !== undefined);
    assert.deepEqual(
      [...new Set(keys)],
      ['req_test_infra/REQ-001/try-1/', 'req_test_infra/REQ-001/try-2/', 'req/REQ-001/round-1/'],
      'two tries, then the REQ',
    );
    assert.deepEqual(infraEvents(), [{ path: 'test/test-utils.js', outcome: 'failed', missing: ['approx'], tries: 2 }]);
    assert.match(run.lines.join('\n'), /test utilities test\/test-utils\.js: still absent after 2 tries; REQ-001 goes on without/);
    const req = run.server.requests.find((r) => r.prompt.includes('RALPH-KEY: req/REQ-001/round-1/'))!;
    assert.doesNotMatch(req.prompt, /## Test utilities/);
    assert.deepEqual(subjects(p.dir).slice(0, 1), ['ralph-loop: REQ-001 - Add inc']);
    await assertContract(run, p.dir);
  });
});
