// REQ mode's crash recovery (seed 001: check the checkpoint, skip the done REQs, continue with
// the next pending) on the REAL claude CLI with the scripted model: a REQ run in its own
// process is killed with SIGKILL after REQ-002's commit — once between the commit and
// `req.done`, once after REQ-002 was recorded done — and `resume` finishes the specification
// without committing REQ-001 or REQ-002 a second time. The status contract after every step.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { EventStore } from '../../../src/store/types';
import { CHECKPOINT_FILE, PROGRESS_LOG } from '../../../src/req/checkpoint';
import { ensureAgentClis } from '../../kit/agentEnv';
import { createSampleProject, openSampleStore } from '../loop/sampleProject';
import type { SampleProject } from '../loop/sampleProject';
import { addReqFiles, assertContract, reqScript, specYaml, startReqRun, subjects, writes } from './reqKit';
import type { ReqRun } from './reqKit';

const ROOT = resolve(__dirname, '..', '..', '..');
const FNS: Record<string, string> = { 'REQ-001': 'inc', 'REQ-002': 'dec', 'REQ-003': 'dbl' };
const BODY: Record<string, string> = { inc: '(a) => a + 1', dec: '(a) => a - 1', dbl: '(a) => a * 2' };

function scripts(): Record<string, unknown>[] {
  return Object.entries(FNS).map(([id, fn]) =>
    reqScript(
      `req/${id}/round-1/`,
      writes({
        [`test/${fn}.test.js`]: `const { ${fn} } = require('../src/${fn}.js');\nrequire('assert').equal(typeof ${fn}(1), 'number');\n`,
        [`src/${fn}.js`]: `exports.${fn} = ${BODY[fn]};\n`,
      }),
      { req_id: id, summary: fn, learnings: [{ kind: 'contextual', text: `${fn} lives in src/${fn}.js` }] },
    ),
  );
}

/** Runs the REQ loop in a child process until it kills itself at the event; resolves with its output. */
function runUntilKilled(dir: string, scriptsFile: string, type: string, text: string): Promise<{ out: string; signal: string | null }> {
  return new Promise((res, rej) => {
    const child = spawn(
      process.execPath,
      ['-r', 'tsx/cjs', join(ROOT, 'test', 'int', 'req', 'reqChild.ts'), dir, scriptsFile, type, text],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => void (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => void (err += b.toString()));
    child.on('error', rej);
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' ? res({ out, signal }) : rej(new Error(`the child was not killed:\n${out}\n${err}`)),
    );
  });
}

describe('req: kill -9 and resume through the real claude CLI', function () {
  this.timeout(600_000);
  let p: SampleProject;
  let store: EventStore | undefined;
  let run: ReqRun | undefined;
  let claudeBin: string;
  let tmp: string;

  before(() => {
    claudeBin = ensureAgentClis().claude;
  });
  beforeEach(() => {
    p = createSampleProject();
    tmp = mkdtempSync(join(tmpdir(), 'ralph-req-resume-'));
    addReqFiles(
      p,
      specYaml([
        { id: 'REQ-001', title: 'Add inc', priority: 1 },
        { id: 'REQ-002', title: 'Add dec', priority: 2, deps: ['REQ-001'] },
        { id: 'REQ-003', title: 'Add dbl', priority: 3, deps: ['REQ-002'] },
      ]),
    );
    writeFileSync(join(tmp, 'scripts.json'), JSON.stringify(scripts()));
  });
  afterEach(async () => {
    await run?.dispose();
    run = undefined;
    await store?.close().catch(() => undefined);
    store = undefined;
    rmSync(p.dir, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  const resumeToTheEnd = async (): Promise<void> => {
    store = await openSampleStore(p.ralphDir);
    run = await startReqRun(p, store, claudeBin, scripts());
    const report = await run.engine.run({ resume: true });
    assert.equal(report.status, 'COMPLETE', run.lines.join('\n'));
    // One commit per REQ, in order: nothing committed twice.
    assert.deepEqual(subjects(p.dir).slice(0, 4), [
      'ralph-loop: REQ-003 - Add dbl',
      'ralph-loop: REQ-002 - Add dec',
      'ralph-loop: REQ-001 - Add inc',
      'REQ mode files',
    ]);
    const done = store.all<{ entity_id: string }>("SELECT entity_id FROM events WHERE event_type = 'req.done' ORDER BY rowid");
    assert.deepEqual(
      done.map((d) => d.entity_id),
      ['REQ-001', 'REQ-002', 'REQ-003'],
      'each REQ recorded done once',
    );
    const promoted = store.all<{ n: number }>("SELECT COUNT(*) AS n FROM patch_view WHERE status = 'promoted'");
    assert.equal(promoted[0]?.n, 3);
    // Only REQ-003's agent ran in the resumed run: REQ-001 and REQ-002 were skipped.
    const keys = run.server.requests.map((r) => /RALPH-KEY: (req\/REQ-\d+)/.exec(r.prompt)?.[1]).filter((k) => k !== undefined);
    assert.deepEqual([...new Set(keys)], ['req/REQ-003']);
    // Every learning recorded once, REQ-002's too (it came from the verified answer).
    const cli = await assertContract(run, p.dir);
    assert.deepEqual(cli.learnings.contextual, ['inc lives in src/inc.js', 'dec lives in src/dec.js', 'dbl lives in src/dbl.js']);
    const cp = JSON.parse(readFileSync(join(p.dir, CHECKPOINT_FILE), 'utf8')) as { status: string; requirements: { done: number } };
    assert.equal(cp.status, 'COMPLETE');
    assert.equal(cp.requirements.done, 3);
    const log = readFileSync(join(p.dir, PROGRESS_LOG), 'utf8').trim().split('\n');
    assert.ok(log.length >= 6, 'one progress line per checkpoint, appended across both runs');
    assert.match(log.at(-1) ?? '', /COMPLETE: 3\/3 done/);
  };

  it("given a kill -9 between REQ-002's commit and its req.done, then resume records it done from its patch and builds only REQ-003", async () => {
    const killed = await runUntilKilled(p.dir, join(tmp, 'scripts.json'), 'patch.promoted', '"task_id":"REQ-002"');
    assert.match(killed.out, /kill patch\.promoted/);
    assert.deepEqual(
      subjects(p.dir).slice(0, 2),
      ['ralph-loop: REQ-002 - Add dec', 'ralph-loop: REQ-001 - Add inc'],
      'committed before the kill',
    );
    await resumeToTheEnd();
    assert.match(run?.lines.join('\n') ?? '', /resume from checkpoint .*: skipping done REQ-001; next REQ-002/);
    assert.match(run?.lines.join('\n') ?? '', /REQ-002: committed by the killed run \([0-9a-f]{8}\); recorded done/);
  });

  it('given a kill -9 after REQ-002 was recorded done, then resume skips REQ-001 and REQ-002 and builds REQ-003', async () => {
    const killed = await runUntilKilled(p.dir, join(tmp, 'scripts.json'), 'req.started', '"entity_id":"REQ-003"');
    assert.match(killed.out, /kill req\.started/);
    await resumeToTheEnd();
    assert.match(run?.lines.join('\n') ?? '', /resume from checkpoint .*: skipping done REQ-001, REQ-002; next REQ-003/);
  });
});
