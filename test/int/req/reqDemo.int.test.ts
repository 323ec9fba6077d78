// `ralph demo --req`: the sample specification built end to end by REQ mode with the scripted
// model through the REAL claude CLI (and the lightweight scripted executable with
// --scripted): four REQs in Kahn + priority order, one commit each, REQ-003 failing L3 in
// round 1 and passing in round 2 with the failure summary, learnings and AGENTS.md, the
// sample's tests passing on the branch tip, and the status contract.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { runCli } from '../../../src/cli/run';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';
import type { ReqStatusReport } from '../../../src/domain/reqStatus';
import { reqStatusProblems } from '../../../src/domain/reqStatus';
import { demoCommand } from '../../../src/cli/loopCommands';
import { runReqDemo } from '../../../src/cli/reqDemo';
import { ensureAgentClis } from '../../kit/agentEnv';

const subjects = (dir: string): string[] =>
  execFileSync('git', ['log', '--format=%s', 'main'], { cwd: dir, encoding: 'utf8' }).trim().split('\n');

async function statusJson(dir: string): Promise<ReqStatusReport> {
  let out = '';
  const code = await runCli(['--dir', dir, 'req', 'status', '--json'], {
    io: { out: (t) => void (out += t), err: (t) => void (out += t) },
  });
  assert.equal(code, 0, out);
  return JSON.parse(out) as ReqStatusReport;
}

const ORDER = [
  'ralph-loop: REQ-001 - Add two numbers',
  'ralph-loop: REQ-003 - Sum a list',
  'ralph-loop: REQ-004 - Average of a list',
  'ralph-loop: REQ-002 - Multiply two numbers',
];

describe('req: ralph demo --req', function () {
  this.timeout(600_000);

  it('given the real claude CLI, then the sample specification is built to COMPLETE, one commit per REQ, with a retry on coverage', async () => {
    const claude = ensureAgentClis().claude;
    const lines: string[] = [];
    let server: ModelServer | undefined;
    const r = await runReqDemo((l) => lines.push(l), {
      claude: { binary: claude, version: '2.1.332' },
      onModelServer: (s) => (server = s),
    });
    try {
      const text = lines.join('\n');
      assert.equal(r.report.status, 'COMPLETE', text);
      assert.equal(r.backend.kind, 'claude');
      assert.match(text, /Agents: the real claude CLI 2\.1\.332/);
      assert.deepEqual(subjects(r.dir).slice(0, 4).reverse(), ORDER);
      assert.match(text, /round 1 failed at L3/);
      assert.ok(r.testsPass, text);
      assert.match(text, /The sample's own tests on the branch tip \(main\): pass/);
      // Round 2 of REQ-003 was given round 1's failure, as the server received it.
      const round2 = server?.requests.find((q) => q.prompt.includes('RALPH-KEY: req/REQ-003/round-2/'));
      assert.ok(round2, 'REQ-003 had a round 2');
      assert.match(round2.prompt, /## Previous failures\nRound 1 failed at L3:\nL3 \(coverage\): lines [\d.]+% below the threshold 80%/);
      const s = await statusJson(r.dir);
      assert.deepEqual(reqStatusProblems(s), []);
      assert.deepEqual(s.requirements, { total: 4, done: 4, pending: 0, blocked: 0, skipped: 0 });
      assert.deepEqual(s.learnings.permanent, [
        'Every math function is a named export of its own module in src/',
        'test-utils eq() is deepStrictEqual',
      ]);
      assert.deepEqual(s.learnings.contextual, ['L3 counts every function: give each one a test']);
      const agents = execFileSync('git', ['show', 'main:AGENTS.md'], { cwd: r.dir, encoding: 'utf8' });
      assert.match(agents, /## REQ-001\n- add\(a, b\)[\s\S]*## REQ-004\n- avg\(\) of an empty list/);
    } finally {
      rmSync(r.dir, { recursive: true, force: true });
    }
  });

  it('given --req --scripted, then `ralph demo` runs the same story with the scripted executable and exits 0', async () => {
    const out: string[] = [];
    const code = await demoCommand({ out: (t) => out.push(t), err: (t) => out.push(t) }, ['--req', '--scripted']);
    const text = out.join('');
    const dir = /^Sample project: (\/\S+)/m.exec(text)?.[1];
    assert.ok(dir !== undefined, text);
    try {
      assert.equal(code, 0, text);
      assert.match(text, /Agents: the lightweight scripted claude executable .*\(--scripted\)/);
      assert.match(text, /COMPLETE: 4\/4 done, 0 blocked, 0 skipped/);
      assert.match(text, /REQ demo finished in \d+\.\d s \(scripted executable\)/);
      assert.deepEqual(subjects(dir).slice(0, 4).reverse(), ORDER);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
