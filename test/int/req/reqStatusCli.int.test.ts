// `ralph req status [--json]` on a real project directory: the seed's contract before any run,
// a cycle reported with its chain (and nothing run), a bad specification named by file, line,
// REQ and field, and the invariants on every answer. `ralph req run` refuses an unknown
// dependency, a duplicate id or a cycle before any REQ or agent starts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../src/cli/run';
import { reqStatusProblems } from '../../../src/domain/reqStatus';
import type { ReqStatusReport } from '../../../src/domain/reqStatus';
import { createSampleProject, openSampleStore } from '../loop/sampleProject';
import { git } from '../../kit/git';
import type { SampleProject } from '../loop/sampleProject';

async function cli(dir: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['--dir', dir, ...args], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
  return { code, out, err };
}

const SPEC = `specification:
  requirements:
    - id: REQ-001
      description: "Create User Model"
      acceptance_criteria:
        - id: AC-001-01
          criteria: "email (unique), password_hash, created_at"
      priority: 1
      status: pending
    - id: REQ-002
      description: "Password encryption"
      depends_on: [REQ-001]
      priority: 2
      status: pending
    - id: REQ-003
      description: "Health endpoint"
      priority: 1
`;

describe('ralph req status', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-req-status-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('given the seed specification and no run yet, then --json is the seed contract in Kahn + priority order', async () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC);
    const r = await cli(dir, 'req', 'status', '--json');
    assert.equal(r.code, 0, r.err);
    const s = JSON.parse(r.out) as ReqStatusReport;
    assert.equal(s.skill_name, 'ralph-loop');
    assert.equal(s.version, '2.0.0');
    assert.deepEqual(s.requirements, { total: 3, done: 0, pending: 3, blocked: 0, skipped: 0 });
    assert.deepEqual(s.learnings, { permanent: [], contextual: [] });
    assert.equal(s.status, 'idle');
    assert.equal(s.checkpoint_at, null);
    assert.deepEqual(s.order, ['REQ-001', 'REQ-003', 'REQ-002']);
    assert.equal(s.iteration, 0);
    assert.equal(s.max_iterations, 15);
    assert.deepEqual(reqStatusProblems(s), []);
    const text = await cli(dir, 'req', 'status');
    assert.match(text.out, /level 0:\n {2}· REQ-001 Create User Model/);
    assert.match(text.out, /level 1:\n {2}· REQ-002 Password encryption/);
  });

  it('given a cycle, then the status is WAIT_USER with the chain', async () => {
    writeFileSync(
      join(dir, 'specification.yaml'),
      SPEC.replace('description: "Create User Model"', 'description: "Create User Model"\n      depends_on: [REQ-002]'),
    );
    const r = await cli(dir, 'req', 'status', '--json');
    assert.equal(r.code, 0, r.err);
    const s = JSON.parse(r.out) as ReqStatusReport;
    assert.equal(s.status, 'WAIT_USER');
    assert.deepEqual(s.cycle, ['REQ-001', 'REQ-002', 'REQ-001']);
    assert.deepEqual(reqStatusProblems(s), []);
  });

  it('given a bad field, then exit 1 and the message names file, line, REQ and field', async () => {
    writeFileSync(join(dir, 'specification.yaml'), SPEC.replace('priority: 2', 'priority: soon'));
    const r = await cli(dir, 'req', 'status', '--json');
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    assert.match(r.err, /specification\.yaml:13:\d+: specification\.requirements\[1\]\.priority: .*\(REQ-002, field priority\)/);
  });

  it('given no specification, then exit 1 naming the file; an unknown verb is a usage error', async () => {
    const r = await cli(dir, 'req', 'status');
    assert.equal(r.code, 1);
    assert.match(r.err, /specification\.yaml: not found/);
    assert.equal((await cli(dir, 'req', 'fly')).code, 2);
  });
});

describe('ralph req run: a bad specification is refused before anything runs', function () {
  this.timeout(120_000);
  let p: SampleProject;
  beforeEach(() => {
    p = createSampleProject();
    writeFileSync(
      join(p.dir, 'ralph.config.json'),
      JSON.stringify({ name: 'sample', lang: 'generic', build: 'node scripts/build.js', test: 'node scripts/test.js' }),
    );
  });
  afterEach(() => rmSync(p.dir, { recursive: true, force: true }));

  for (const [what, spec, message] of [
    ['an unknown dependency', SPEC.replace('depends_on: [REQ-001]', 'depends_on: [REQ-009]'), /REQ-009/],
    ['a duplicate id', SPEC.replace('id: REQ-003', 'id: REQ-001'), /duplicate/i],
    [
      'a cycle',
      SPEC.replace('description: "Create User Model"', 'description: "Create User Model"\n      depends_on: [REQ-002]'),
      /REQ-001 → REQ-002 → REQ-001/,
    ],
  ] as const) {
    it(`given ${what}, then it is named and no REQ starts, no agent runs, nothing is committed`, async () => {
      writeFileSync(join(p.dir, 'specification.yaml'), spec);
      const head = git(p.dir, 'rev-parse', 'HEAD');
      const r = await cli(p.dir, 'req', 'run');
      // A cycle ends the run WAIT_USER (exit 0, the status says why); a bad file is an error.
      assert.equal(r.code, what === 'a cycle' ? 0 : 1, `${r.out}${r.err}`);
      assert.match(`${r.out}${r.err}`, /specification\.yaml/);
      assert.match(`${r.out}${r.err}`, message);
      const store = await openSampleStore(p.ralphDir);
      try {
        const types = store.all<{ event_type: string }>(
          "SELECT DISTINCT event_type FROM events WHERE event_type LIKE 'req.%' OR event_type LIKE 'agent.%'",
        );
        // A cycle is recorded as such (the status shows its chain); nothing else is.
        assert.deepEqual(
          types.map((t) => t.event_type),
          what === 'a cycle' ? ['req.cycle'] : [],
        );
      } finally {
        await store.close();
      }
      assert.equal(git(p.dir, 'rev-parse', 'HEAD'), head);
    });
  }
});
