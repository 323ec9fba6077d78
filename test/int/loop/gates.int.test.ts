// Command gates with real processes: pass, fail with the output tail, timeout and stop kill
// the whole process group (no grandchild survives), progress lines stream.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectConfinement } from '../../../src/agents/sandbox';
import { runGate, runGates } from '../../../src/loop/gates';
import { waitUntil } from '../../kit/wait';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('loop/gates command gates', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-gates-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('given a passing command, then passed with its output, run in the worktree', async () => {
    const r = await runGate({ name: 'build', command: 'pwd; echo ok >&2', timeoutMs: 10_000 }, { cwd: dir });
    assert.equal(r.status, 'passed');
    assert.equal(r.ok, true);
    assert.match(r.outputTail, new RegExp(`${dir}\\nok`));
  });

  it('given a failing command with long output, then failed with a bounded tail of the end', async () => {
    const r = await runGate(
      { name: 'test', command: 'seq 1 5000; echo FINAL >&2; exit 3', timeoutMs: 10_000 },
      { cwd: dir, tailBytes: 200 },
    );
    assert.equal(r.status, 'failed');
    assert.equal(r.exitCode, 3);
    assert.ok(Buffer.byteLength(r.outputTail) <= 210, `tail ${Buffer.byteLength(r.outputTail)}`);
    assert.match(r.outputTail, /4999\n5000\nFINAL$/);
  });

  it('given an empty command, then skipped and ok', async () => {
    const r = await runGate({ name: 'lint', command: '', timeoutMs: 1000 }, { cwd: dir });
    assert.equal(r.status, 'skipped');
    assert.equal(r.ok, true);
  });

  it('given a command past its timeout, then timeout and its grandchildren are gone', async () => {
    const pidFile = join(dir, 'gc.pid');
    const r = await runGate(
      { name: 'test', command: `sh -c 'sleep 30' & echo $! > ${pidFile}; wait`, timeoutMs: 300 },
      { cwd: dir, graceMs: 500 },
    );
    assert.equal(r.status, 'timeout');
    const pid = Number((await import('node:fs')).readFileSync(pidFile, 'utf8').trim());
    await waitUntil(`the gate's process ${pid} to exit`, () => !alive(pid));
  });

  it('given a stop request mid-gate, then cancelled within seconds and later gates do not run', async () => {
    const ac = new AbortController();
    const started: string[] = [];
    const lines: string[] = [];
    const p = runGates(
      [
        { name: 'build', command: 'echo building; sleep 30', timeoutMs: 60_000 },
        { name: 'test', command: 'echo never', timeoutMs: 60_000 },
      ],
      { cwd: dir, signal: ac.signal, onGateStart: (g) => started.push(g), onProgress: (_g, l) => lines.push(l), graceMs: 1000 },
    );
    await waitUntil('the gate to print "building"', () => lines.includes('building'));
    const t0 = Date.now();
    ac.abort();
    const results = await p;
    assert.ok(Date.now() - t0 < 3000);
    assert.deepEqual(started, ['build']);
    assert.equal(results[0]?.status, 'cancelled');
  });

  it('given a failing build, then the list stops there by default', async () => {
    const r = await runGates(
      [
        { name: 'build', command: 'exit 1', timeoutMs: 5000 },
        { name: 'test', command: 'true', timeoutMs: 5000 },
      ],
      { cwd: dir },
    );
    assert.deepEqual(
      r.map((x) => x.status),
      ['failed'],
    );
  });
});

describe("loop/gates confined in bubblewrap (the code they run is the agents')", function () {
  this.timeout(60_000);
  let root: string;
  before(function () {
    if (detectConfinement('scripted').kind !== 'bwrap') this.skip(); // .ci/run installs bubblewrap
    root = mkdtempSync(join(tmpdir(), 'ralph-gates-confined-'));
  });
  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('given a gate whose code writes outside the worktree, then only the worktree and the gate scratch are written', async () => {
    const worktree = join(root, 'wt');
    const scratch = join(root, 'scratch');
    const outside = join(root, 'user-README.md');
    mkdirSync(worktree);
    writeFileSync(outside, '# mine\n');
    // What an agent could leave in a test file: it runs when the harness runs the gate.
    writeFileSync(
      join(worktree, 'escape.sh'),
      [
        `echo pwned >> ${outside} || echo refused`,
        'echo built > out.txt',
        'echo cached > "$HOME/cache.txt"',
        'echo t > "$TMPDIR/t.txt"',
        'exit 0',
      ].join('\n'),
    );
    const r = await runGate(
      { name: 'test', command: 'sh escape.sh', timeoutMs: 30_000 },
      { cwd: worktree, confinement: detectConfinement('scripted'), scratch },
    );
    assert.equal(r.status, 'passed', r.outputTail);
    // Under /tmp the sandbox shows its own empty /tmp, so the write lands there, not here;
    // elsewhere the host's root is read-only and it fails.
    assert.equal(readFileSync(outside, 'utf8'), '# mine\n');
    assert.equal(readFileSync(join(worktree, 'out.txt'), 'utf8'), 'built\n');
    assert.equal(readFileSync(join(scratch, 'home', 'cache.txt'), 'utf8'), 'cached\n');
    assert.equal(readFileSync(join(scratch, 'tmp', 't.txt'), 'utf8'), 't\n');
  });

  it('given the same gate unconfined, then the write outside lands (what confinement prevents)', async () => {
    const worktree = join(root, 'wt2');
    const outside = join(root, 'user2.md');
    mkdirSync(worktree);
    writeFileSync(outside, '# mine\n');
    const r = await runGate({ name: 'test', command: `echo pwned >> ${outside}`, timeoutMs: 30_000 }, { cwd: worktree });
    assert.equal(r.status, 'passed', r.outputTail);
    assert.equal(readFileSync(outside, 'utf8'), '# mine\npwned\n');
  });
});
