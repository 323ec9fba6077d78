// REQ mode end to end on the REAL claude CLI (pinned, .tools/) against the scripted model
// server: the build order, the per-REQ context as the server received it, PASS commits, the
// specification's statuses, learnings and AGENTS.md, a cycle, and the status contract after
// every step.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../kit/git';
import { addReqFiles, assertContract, reqScript, specYaml, subjects, useReqTest, writes } from './reqKit';

const FNS: Record<string, [string, string]> = {
  'REQ-001': ['add', '(a, b) => a + b'],
  'REQ-002': ['sub', '(a, b) => a - b'],
  'REQ-003': ['mul', '(a, b) => a * b'],
  'REQ-004': ['div', '(a, b) => a / b'],
  'REQ-005': ['neg', '(a) => -a'],
  'REQ-006': ['sq', '(a) => a * a'],
};

/** A passing round: the module and its test, written test-first in one turn. */
function passing(id: string, answer?: unknown): Record<string, unknown> {
  const [name, body] = FNS[id] as [string, string];
  return reqScript(
    `req/${id}/round-1/`,
    writes({
      [`test/${name}.test.js`]: `const { ${name} } = require('../src/${name}.js');\nconst assert = require('assert');\nassert.equal(typeof ${name}, 'function');\nassert.ok(!Number.isNaN(${name}(6, 3)));\n`,
      [`src/${name}.js`]: `exports.${name} = ${body};\n`,
    }),
    answer,
  );
}

describe('req: the REQ loop through the real claude CLI', function () {
  this.timeout(600_000);
  const t = useReqTest();

  it('given 6 REQs with dependencies and priorities, then they run in Kahn + priority order, each with exactly its own context, and each PASS is a ralph-loop commit', async () => {
    const { p, store } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'Add add()', priority: 1, acs: ['add(2, 3) is 5', 'add is exported from src/add.js'] },
        { id: 'REQ-002', title: 'Add sub()', priority: 2, deps: ['REQ-001'] },
        { id: 'REQ-003', title: 'Add mul()', priority: 3 },
        { id: 'REQ-004', title: 'Add div()', priority: 1, deps: ['REQ-002', 'REQ-003'] },
        { id: 'REQ-005', title: 'Add neg()', priority: 2 },
        { id: 'REQ-006', title: 'Add sq()', priority: 1, deps: ['REQ-003'] },
      ]),
    );
    const scripts = Object.keys(FNS).map((id) =>
      id === 'REQ-001'
        ? passing(id, {
            req_id: id,
            summary: 'add',
            learnings: [
              { kind: 'permanent', text: 'Each math function lives in its own module under src/' },
              { kind: 'contextual', text: 'assert.equal is enough for these checks' },
            ],
            agentmd_addition: '- Math functions: one module per function, CommonJS exports.',
          })
        : id === 'REQ-005'
          ? passing(id, { learnings: [{ kind: 'contextual', text: 'negative zero compares equal with assert.equal' }] })
          : passing(id),
    );
    const run = await t.start(scripts);
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    assert.deepEqual(report.requirements, { total: 6, done: 6, pending: 0, blocked: 0, skipped: 0 });
    assert.equal(report.iteration, 6);

    // Kahn + priority: the greedy choice among READY REQs, lowest priority number first.
    const ran = run.server.requests
      .map((r) => /RALPH-KEY: req\/(REQ-\d+)\/round-1\//.exec(r.prompt)?.[1])
      .filter((x, i, a): x is string => x !== undefined && a.indexOf(x) === i);
    assert.deepEqual(ran, ['REQ-001', 'REQ-005', 'REQ-002', 'REQ-003', 'REQ-006', 'REQ-004']);
    assert.deepEqual(report.order, ['REQ-001', 'REQ-005', 'REQ-003', 'REQ-006', 'REQ-002', 'REQ-004'], 'the Kahn layers');

    // Each PASS: one commit `ralph-loop: REQ-XXX - <title>` on main, in the order they ran.
    const s = subjects(p.dir);
    assert.deepEqual(
      s.slice(0, 6).reverse(),
      ran.map((id) => `ralph-loop: ${id} - ${`Add ${FNS[id]?.[0]}()`}`),
    );
    const tasks = store.all<{ task_id: string; status: string }>("SELECT task_id, status FROM task_view WHERE task_id LIKE 'REQ-%'");
    assert.ok(tasks.every((t) => t.status === 'done') && tasks.length === 6, JSON.stringify(tasks));
    const promoted = store.all<{ task_id: string; commit_hash: string }>(
      "SELECT task_id, commit_hash FROM patch_view WHERE status = 'promoted'",
    );
    assert.equal(promoted.length, 6, 'every done REQ has its patch.promoted commit');
    for (const pr of promoted) assert.equal(git(p.dir, 'merge-base', '--is-ancestor', pr.commit_hash, 'main'), '');
    // The user's checkout follows (checkout-safe promotion): HEAD is main's tip and clean.
    assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=no'), '');
    // specification.yaml's statuses are written back.
    const spec = readFileSync(join(p.dir, 'specification.yaml'), 'utf8');
    assert.equal((spec.match(/status: done/g) ?? []).length, 6);
    assert.doesNotMatch(spec, /status: pending/);

    // The context of REQ-005 (after REQ-001): exactly its REQ and ACs, the learnings, AGENTS.md, git log -5, the policy.
    const req5 = run.server.requests.filter((r) => r.prompt.includes('RALPH-KEY: req/REQ-005/round-1/'));
    assert.ok(req5.length >= 1);
    for (const r of req5) {
      assert.match(r.prompt, /## Requirement REQ-005: Add neg\(\)/);
      assert.match(r.prompt, /- AC-005-01: Add neg\(\) works/);
      assert.match(r.prompt, /## Permanent learnings\n- Each math function lives in its own module under src\//);
      assert.match(r.prompt, /## Recent contextual learnings \(last 3\)\n- assert\.equal is enough for these checks/);
      assert.match(
        r.prompt,
        /## AGENTS\.md\n# AGENTS\.md\n\nUse CommonJS modules in src\/\.\n\n## REQ-001\n- Math functions: one module per function/,
      );
      assert.match(r.prompt, /## git log -5\n[0-9a-f]+ ralph-loop: REQ-001 - Add add\(\)\n[0-9a-f]+ REQ mode files/);
      assert.match(r.prompt, /Mock: external HTTP APIs, LLM calls/);
      assert.match(r.prompt, /## Test utilities \(test\/test-utils\.js\): use these\nexports\.approx/);
      assert.match(r.prompt, /TDD/);
      // nothing of REQ-001's dialogue: not its prompt, not its tool calls, not its answer
      const body = JSON.stringify(r.body);
      assert.ok(!body.includes('RALPH-KEY: req/REQ-001/'), 'no earlier REQ prompt');
      assert.ok(!body.includes('exports.add ='), 'no earlier REQ tool call');
      assert.ok(!body.includes('add(2, 3) is 5'), 'no earlier REQ acceptance criteria');
      assert.ok(!r.prompt.includes('Previous failures'));
    }
    // AGENTS.md on main holds the orchestrator's addition, committed with REQ-001.
    assert.match(git(p.dir, 'show', 'main:AGENTS.md'), /## REQ-001\n- Math functions/);
    assert.match(git(p.dir, 'show', '--stat', '--format=%s', 'main~5'), /AGENTS\.md/);
    const cli = await assertContract(run, p.dir);
    assert.deepEqual(cli.learnings.permanent, ['Each math function lives in its own module under src/']);
    assert.deepEqual(cli.learnings.contextual, [
      'assert.equal is enough for these checks',
      'negative zero compares equal with assert.equal',
    ]);
    assert.ok(cli.checkpoint_at !== null);
  });

  it('given a dependency cycle, then it is reported with its chain and nothing runs', async () => {
    const { p } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'A', deps: ['REQ-003'] },
        { id: 'REQ-002', title: 'B', deps: ['REQ-001'] },
        { id: 'REQ-003', title: 'C', deps: ['REQ-002'] },
        { id: 'REQ-004', title: 'D' },
      ]),
    );
    const run = await t.start([passing('REQ-001')]);
    const before = subjects(p.dir);
    const report = await run.engine.run();
    assert.equal(report.status, 'WAIT_USER');
    assert.deepEqual(report.cycle, ['REQ-001', 'REQ-003', 'REQ-002', 'REQ-001']);
    assert.match(run.lines.join('\n'), /REQ-001 → REQ-003 → REQ-002 → REQ-001: dependency cycle/);
    assert.equal(run.server.requests.length, 0, 'no agent ran');
    assert.deepEqual(subjects(p.dir), before, 'nothing committed');
    const cli = await assertContract(run, p.dir);
    assert.deepEqual(cli.cycle, ['REQ-001', 'REQ-003', 'REQ-002', 'REQ-001']);
  });
});
