// The process wrapper with real processes: line delivery, stderr tail, exit codes, and the
// stop path (abort and timeout -> SIGTERM to the group -> SIGKILL) leaving nothing behind.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../../src/agents/process';
import { processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';

describe('agents/process (real processes)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-proc-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const env = { PATH: process.env.PATH };

  it('given a process that prints lines, when it exits, then every line, the exit code and the stderr tail arrive', async () => {
    const lines: string[] = [];
    const out = await runProcess({
      file: 'sh',
      args: ['-c', 'cat; echo two; echo oops >&2; exit 3'],
      cwd: dir,
      env,
      input: 'one\n',
      onStdoutLine: (l) => lines.push(l),
    });
    assert.deepEqual(lines, ['one', 'two']);
    assert.equal(out.exitCode, 3);
    assert.equal(out.stderrTail, 'oops\n');
    assert.equal(out.stopReason, undefined);
  });

  it('given a long stderr, then only the tail is kept', async () => {
    const out = await runProcess({
      file: 'sh',
      args: ['-c', 'for i in $(seq 1 2000); do echo line$i >&2; done'],
      cwd: dir,
      env,
      input: '',
      stderrTailBytes: 100,
    });
    assert.equal(out.stderrTail.length, 100);
    assert.ok(out.stderrTail.endsWith('line2000\n'));
  });

  it('given a missing binary, then a spawn error is reported, not thrown', async () => {
    const out = await runProcess({ file: join(dir, 'no-such-binary'), args: [], cwd: dir, env, input: '' });
    assert.ok(out.spawnError !== undefined);
    assert.equal(out.stopReason, undefined);
  });

  it('given an agent with a grandchild sleep, when aborted, then the whole group is gone and the stop reason is abort', async () => {
    const controller = new AbortController();
    let started = false;
    const run = runProcess({
      file: 'bash',
      args: ['-c', 'sleep 1000 & echo started; sleep 1000; wait'],
      cwd: dir,
      env,
      input: '',
      signal: controller.signal,
      graceMs: 2000,
      onStdoutLine: (l) => {
        if (l === 'started') started = true;
      },
    });
    await waitUntil('the agent started its grandchild', () => started && processesIn(dir).length >= 2);
    controller.abort();
    const out = await run;
    assert.equal(out.stopReason, 'abort');
    await waitUntil('no process left in the run directory', () => processesIn(dir).length === 0, 2000);
  });

  it('given a process that ignores SIGTERM, when the timeout fires, then SIGKILL follows after the grace period', async () => {
    const started = Date.now();
    const out = await runProcess({
      file: 'sh',
      args: ['-c', "trap '' TERM; sleep 1000 & wait; sleep 1000"],
      cwd: dir,
      env,
      input: '',
      timeoutMs: 300,
      graceMs: 500,
    });
    assert.equal(out.stopReason, 'timeout');
    assert.equal(out.signal, 'SIGKILL');
    assert.ok(Date.now() - started >= 700, 'waited for the grace period');
    await waitUntil('no process left in the run directory', () => processesIn(dir).length === 0, 2000);
  });

  it('given an agent that exits leaving a background child holding stdout, then the run still ends and the child is killed', async () => {
    const out = await runProcess({ file: 'sh', args: ['-c', '(sleep 1000) & echo bye'], cwd: dir, env, input: '', timeoutMs: 20000 });
    assert.equal(out.exitCode, 0);
    assert.equal(out.stopReason, undefined);
    await waitUntil('no process left in the run directory', () => processesIn(dir).length === 0, 2000);
  });

  it('given an already aborted signal, then nothing is spawned', async () => {
    const controller = new AbortController();
    controller.abort();
    const out = await runProcess({ file: 'sh', args: ['-c', 'touch spawned'], cwd: dir, env, input: '', signal: controller.signal });
    assert.equal(out.stopReason, 'abort');
  });
});
