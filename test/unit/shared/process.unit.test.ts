// Process facts (src/shared/process.ts): a zombie is not alive, so a lock it held is free
// where nothing reaps it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pidAlive } from '../../../src/shared/process';

function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2);
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
    // sh starts a short child, prints its pid, then becomes `sleep`, which never waits for it.
    // The child outlives the exec: one that ended first could be reaped by sh itself.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
      // Its end is the kernel's to record: read the state it reports until it says so.
      const deadline = Date.now() + 10_000;
      while (state(pid) !== 'Z' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(state(pid), 'Z');
      assert.equal(pidAlive(pid), false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
