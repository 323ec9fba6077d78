// Process facts (src/shared/process.ts): a zombie is not alive, so a lock it held is free
// where nothing reaps it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pidAlive } from '../../../src/shared/process';
import { waitUntil } from '../../kit/wait';

function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return undefined;
  }
}

function comm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

describe('pidAlive', () => {
  it('given this process, then alive; given a pid nobody has, then not', () => {
    assert.equal(pidAlive(process.pid), true);
    assert.equal(pidAlive(2 ** 22 + 12345), false);
  });

  it('given a zombie (ended, its parent never reaps it), then not alive', async function () {
    if (process.platform !== 'linux') this.skip();
    // sh starts a child, prints its pid, then becomes `sleep`, which never waits for it. The
    // child is ended only once sh has exec'd: a child that ended before could be reaped by sh.
    const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let child: number | undefined;
    try {
      const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
      child = pid;
      // Both waits are on what the kernel reports.
      await waitUntil('sh has become sleep', () => comm(parent.pid ?? 0) === 'sleep', 10_000);
      process.kill(pid, 'SIGKILL');
      await waitUntil('the child is a zombie', () => state(pid) === 'Z', 10_000);
      assert.equal(state(pid), 'Z');
      assert.equal(pidAlive(pid), false);
    } finally {
      const left = child === undefined ? undefined : state(child);
      if (child !== undefined && left !== undefined && left !== 'Z') process.kill(child, 'SIGKILL');
      parent.kill('SIGKILL');
    }
  });
});
