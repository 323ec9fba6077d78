// The process ledger: groups a killed run left behind are ended by the next run; live
// owners' groups and records whose pid now names another process are left alone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupAlive } from '../../../src/shared/process';
import { ProcessLedger, processStartTicks } from '../../../src/shared/processLedger';

/** A detached `sleep` (its own process group), as the agents' CLIs and gates are started. */
function sleeper(): number {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  child.unref();
  if (child.pid === undefined) throw new Error('sleep did not start');
  return child.pid;
}

/** The pid of a process that has exited (an owner that is dead). */
function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const c = spawn('true');
    c.on('exit', () => resolve(c.pid as number));
  });
}

describe('shared/processLedger', () => {
  let dir: string;
  const started: number[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-ledger-'));
  });
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('given a group recorded by an owner that died, when reaped, then the group ends and its record is gone', async () => {
    const pid = sleeper();
    started.push(pid);
    const owner = await deadPid();
    writeFileSync(
      join(dir, `${pid}.json`),
      JSON.stringify({ pid, owner, startTicks: processStartTicks(pid), what: 'claude', cwd: '/tmp/ralph-judge-x' }),
    );
    const reaped = await new ProcessLedger(dir).reap(2000);
    assert.deepEqual(
      reaped.map((r) => [r.pid, r.killed, r.cwd]),
      [[pid, true, '/tmp/ralph-judge-x']],
    );
    assert.equal(groupAlive(pid), false);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('given groups this process started, then reaping leaves them running; ended() forgets them', async () => {
    const ledger = new ProcessLedger(dir);
    const pid = sleeper();
    started.push(pid);
    ledger.started(pid, 'sh -c npm test', '/w');
    assert.deepEqual(await ledger.reap(100), []);
    assert.equal(groupAlive(pid), true);
    ledger.ended(pid);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('given a record whose pid now belongs to another process (another start time), then nothing is signalled and the record is dropped', async function () {
    if (processStartTicks(process.pid) === null) this.skip(); // no /proc: start times unknown
    const pid = sleeper();
    started.push(pid);
    const owner = await deadPid();
    writeFileSync(join(dir, `${pid}.json`), JSON.stringify({ pid, owner, startTicks: '1', what: 'claude', cwd: '/w' }));
    const reaped = await new ProcessLedger(dir).reap(100);
    assert.deepEqual(
      reaped.map((r) => [r.pid, r.killed]),
      [[pid, false]],
    );
    assert.equal(groupAlive(pid), true);
    assert.deepEqual(readdirSync(dir), []);
  });

  it('given a record without a start time (a system without /proc), then nothing is signalled on a guess and the record is dropped', async () => {
    const pid = sleeper();
    started.push(pid);
    const owner = await deadPid();
    writeFileSync(join(dir, `${pid}.json`), JSON.stringify({ pid, owner, startTicks: null, what: 'claude', cwd: '/w' }));
    const reaped = await new ProcessLedger(dir).reap(100);
    assert.deepEqual(
      reaped.map((r) => [r.pid, r.killed]),
      [[pid, false]],
    );
    assert.equal(groupAlive(pid), true);
    assert.deepEqual(readdirSync(dir), []);
  });
});
