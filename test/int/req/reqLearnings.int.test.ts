// REQ mode's learnings and AGENTS.md on the REAL claude CLI with the scripted model, asserted
// on the requests the scripted server received: permanent learnings always passed on,
// contextual ones in a window of the last 3 that age out, promoted when a second REQ
// references one or when the user marks it (`ralph req promote`, queued beside the writer);
// AGENTS.md written only by the orchestrator (an agent's own edit is not taken) and
// archived past 500 lines into .sprint-state/ralph-loop/agents-archive/.
import assert from 'node:assert/strict';
import { runCli } from '../../../src/cli/run';
import { git } from '../../kit/git';
import { addReqFiles, assertContract, reqScript, specYaml, subjects, useReqTest, writes } from './reqKit';

const section = (prompt: string, title: string): string[] => {
  const m = new RegExp(`## ${title.replace(/[()]/g, '\\$&')}\\n([\\s\\S]*?)\\n## `).exec(prompt);
  return (m?.[1] ?? '')
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .map((l) => l.slice(2));
};

function passing(id: string, fn: string, answer: unknown, extraTools: unknown[] = []): Record<string, unknown> {
  return reqScript(
    `req/${id}/round-1/`,
    [
      ...extraTools,
      ...writes({
        [`test/${fn}.test.js`]: `const { ${fn} } = require('../src/${fn}.js');\nrequire('assert').equal(typeof ${fn}, 'function');\n`,
        [`src/${fn}.js`]: `exports.${fn} = (a) => a;\n`,
      }),
    ],
    answer,
  );
}

describe('req: learnings and AGENTS.md through the real claude CLI', function () {
  this.timeout(600_000);
  const t = useReqTest();

  it('given contextual learnings over four REQs, then the window of 3 ages out, a referenced one and a user-marked one become permanent', async () => {
    const { p, store } = t;
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'One', priority: 1 },
        { id: 'REQ-002', title: 'Two', priority: 2 },
        { id: 'REQ-003', title: 'Three', priority: 3 },
        { id: 'REQ-004', title: 'Four', priority: 4 },
      ]),
    );
    const scripts = [
      passing('REQ-001', 'one', {
        learnings: [
          { kind: 'contextual', text: 'c1: the build gate loads every module' },
          { kind: 'contextual', text: 'c2: tests run in file-name order' },
          { kind: 'permanent', text: 'p1: one module per function' },
          // contextual as tagged, but about a data structure: recorded permanent
          { kind: 'contextual', text: 'p2: the result record has fields value and unit' },
        ],
      }),
      passing('REQ-002', 'two', {
        learnings: [
          { kind: 'contextual', text: 'c3: assert.equal is loose' },
          { kind: 'contextual', text: 'c4: keep the test files small' },
        ],
        learnings_used: ['c1: the build gate loads every module'],
      }),
      passing('REQ-003', 'three', {
        learnings: [
          { kind: 'contextual', text: 'c5: no console output in src' },
          { kind: 'contextual', text: 'c6: arrow functions everywhere' },
        ],
      }),
      passing('REQ-004', 'four', { learnings: [] }),
    ];
    // Two REQs, then the user marks c2 while a writer holds the store (queued), then the rest.
    let run = await t.start(scripts, { req: { maxIterations: 2 } });
    const first = await run.engine.run();
    assert.equal(first.status, 'PARTIAL', run.lines.join('\n'));
    await run.dispose();
    let out = '';
    const code = await runCli(['--dir', p.dir, 'req', 'promote', 'tests run in file-name'], {
      io: { out: (t) => void (out += t), err: (t) => void (out += t) },
    });
    assert.equal(code, 0, out);
    assert.match(out, /^QUEUED /);
    run = await t.start(scripts);
    const report = await run.engine.run({ resume: true });
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    assert.match(run.lines.join('\n'), /learning marked permanent by cli:/);

    const prompt = (id: string): string => {
      const r = run.server.requests.find((x) => x.prompt.includes(`RALPH-KEY: req/${id}/round-1/`));
      assert.ok(r, id);
      return r.prompt;
    };
    // REQ-003: c1 referenced by REQ-002 and c2 marked by the user are permanent; the window holds c3, c4.
    assert.deepEqual(section(prompt('REQ-003'), 'Permanent learnings').sort(), [
      'c1: the build gate loads every module',
      'c2: tests run in file-name order',
      'p1: one module per function',
      'p2: the result record has fields value and unit',
    ]);
    assert.deepEqual(section(prompt('REQ-003'), 'Recent contextual learnings (last 3)'), [
      'c3: assert.equal is loose',
      'c4: keep the test files small',
    ]);
    // REQ-004: c3 aged out of the window of the last 3.
    assert.deepEqual(section(prompt('REQ-004'), 'Recent contextual learnings (last 3)'), [
      'c4: keep the test files small',
      'c5: no console output in src',
      'c6: arrow functions everywhere',
    ]);
    const whys = store
      .all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'req.learning_promoted' ORDER BY rowid")
      .map((e) => (JSON.parse(e.payload) as { text: string; why: string }).why);
    assert.equal(whys.length, 2);
    assert.match(whys[0] ?? '', /^referenced by REQ-001 and REQ-002$/);
    assert.match(whys[1] ?? '', /^marked permanent by cli:/);
    const cli = await assertContract(run, p.dir);
    assert.equal(cli.learnings.permanent.length, 4);
    assert.deepEqual(cli.learnings.contextual, [
      'c4: keep the test files small',
      'c5: no console output in src',
      'c6: arrow functions everywhere',
    ]);
  });

  it("given an agent that edits AGENTS.md itself and a file near 500 lines, then only the orchestrator's addition lands and the oldest entries are archived", async () => {
    const { p, store } = t;
    const old = Array.from({ length: 12 }, (_, i) =>
      [`## REQ-${String(900 + i)}`, ...Array.from({ length: 39 }, (_, j) => `- old rule ${i}.${j}`)].join('\n'),
    ).join('\n\n');
    addReqFiles(p, specYaml([{ id: 'REQ-001', title: 'One' }]), { agentsMd: `# AGENTS.md\n\nUse CommonJS modules in src/.\n\n${old}\n` });
    const run = await t.start([
      passing(
        'REQ-001',
        'one',
        // 495 lines before; these 3 take the file past 500
        { learnings: [], agentmd_addition: '- one() is the identity\n- keep it pure\n- no I/O in src/' },
        [{ tool: 'bash', command: "printf '\\n## my own rules\\n- agents may skip tests\\n' >> AGENTS.md" }],
      ),
    ]);
    const report = await run.engine.run();
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    assert.equal(subjects(p.dir)[0], 'ralph-loop: REQ-001 - One');
    const agents = git(p.dir, 'show', 'main:AGENTS.md');
    assert.doesNotMatch(agents, /agents may skip tests/, "the agent's own edit is not taken");
    assert.match(agents, /^# AGENTS\.md\n\nUse CommonJS modules in src\/\.\n/, 'the preamble stays');
    assert.match(agents, /## REQ-001\n- one\(\) is the identity\n- keep it pure\n- no I\/O in src\/$/);
    assert.ok(agents.split('\n').length - 1 <= 500, `${agents.split('\n').length - 1} lines`);
    assert.doesNotMatch(agents, /## REQ-900\n/, 'the oldest entry moved out');
    assert.match(agents, /## REQ-911\n/, 'the newest old entry stays');
    // The archive is committed with the REQ, in .sprint-state/ralph-loop/agents-archive/.
    const files = git(p.dir, 'show', '--name-only', '--format=', 'main').split('\n');
    const archive = files.find((f) => f.startsWith('.sprint-state/ralph-loop/agents-archive/'));
    assert.ok(archive, files.join(', '));
    const archived = git(p.dir, 'show', `main:${archive}`);
    assert.match(archived, /## REQ-900\n- old rule 0\.0\n/);
    assert.doesNotMatch(archived, /agents may skip tests/);
    const ev = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'req.agents_md'");
    assert.equal(ev.length, 1);
    assert.equal((JSON.parse(ev[0]!.payload) as { archived_to: string }).archived_to, archive);
    await assertContract(run, p.dir);
  });
});
