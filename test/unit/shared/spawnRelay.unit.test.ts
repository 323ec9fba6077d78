// The process relay on real processes: children really are the helper's, in the group asked
// for; the helper shrugs off a terminal's signals, a helper that dies ends the runs it carried
// and is replaced, and neither an idle helper nor a dead host leaves a process behind.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from '../../../src/shared/process';
import { runChild } from '../../../src/shared/runChild';
import type { SpawnRelay } from '../../../src/shared/spawnRelay';
import { setSpawnRelay } from '../../../src/shared/spawnRelay';
import { processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';
import { startedRelay } from '../../kit/spawnRelay';

const env = { PATH: process.env.PATH };
const TSX = require.resolve('tsx/cjs');
const RELAY = require.resolve('../../../src/shared/spawnRelay');
const RUN_CHILD = require.resolve('../../../src/shared/runChild');

/** Parent pid and process group of `pid`, from /proc. */
function parentAndGroup(pid: number): { ppid: number; pgid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), pgid: Number(fields[2]) };
}

/** A shell that prints its pid, parent and group, and exits. */
const WHO = 'echo $$ $PPID $(cut -d" " -f5 /proc/$$/stat)';

describe('shared/spawnRelay (real processes)', () => {
  let dir: string;
  let relay: SpawnRelay;
  let replaced: SpawnRelay | undefined;
  beforeEach(async function () {
    this.timeout(15000);
    dir = mkdtempSync(join(tmpdir(), 'ralph-relay-'));
    relay = await startedRelay();
    replaced = setSpawnRelay(relay);
  });
  afterEach(() => {
    setSpawnRelay(replaced);
    relay.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('given a ready relay, then the child is the helper’s, in a group of its own or in ours as asked', async () => {
    const own = await runChild({ file: 'sh', args: ['-c', WHO], cwd: dir, env });
    const [pid, ppid, pgid] = own.stdout.toString().trim().split(' ').map(Number);
    assert.equal(ppid, relay.pid, 'the helper started it');
    assert.notEqual(relay.pid, process.pid);
    assert.equal(pgid, pid, 'its own group');
    const shared = await runChild({ file: 'sh', args: ['-c', WHO], cwd: dir, env, ownGroup: false });
    const [, ppid2, pgid2] = shared.stdout.toString().trim().split(' ').map(Number);
    assert.equal(ppid2, relay.pid);
    assert.equal(pgid2, parentAndGroup(process.pid).pgid, "this process's group");
  });

  it('given a child that has ended before anyone listens, then a late exit or close listener still hears it', async () => {
    const child = await relay.spawn({ file: 'sh', args: ['-c', 'exit 3'], cwd: dir, env, detached: true, stdin: false });
    await waitUntil('the helper has reported the exit', () => child.exitCode !== null);
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code: number | null) => resolve(code)));
    const close = new Promise<number | null>((resolve) => child.once('close', (code: number | null) => resolve(code)));
    child.stdout.resume();
    child.stderr.resume();
    assert.equal(await exit, 3);
    assert.equal(await close, 3);
    const late = await new Promise<number | null>((resolve) => child.once('close', (code: number | null) => resolve(code)));
    assert.equal(late, 3, 'a listener after the close hears it too');
  });

  it('given the signals a terminal sends its group, then the helper stays and carries the next run', async () => {
    const helper = relay.pid ?? 0;
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.kill(helper, s);
    const r = await runChild({ file: 'sh', args: ['-c', 'echo $PPID'], cwd: dir, env });
    assert.equal(Number(r.stdout.toString()), helper);
    assert.ok(relay.ready);
  });

  it('given a helper killed while a child runs, then the run ends killed, its group is gone, and a new helper takes over', async () => {
    const first = relay.pid ?? 0;
    let leader = 0;
    const run = runChild({
      file: 'sh',
      args: ['-c', 'sleep 1000 & echo $$; wait'],
      cwd: dir,
      env,
      onLine: (l) => {
        leader = Number(l);
        process.kill(first, 'SIGKILL');
      },
    });
    const r = await run;
    assert.ok(leader > 0);
    assert.equal(r.exitCode, null);
    assert.equal(r.signal, 'SIGKILL');
    await waitUntil('no process of the group is left', () => processesIn(dir).length === 0);
    // Meanwhile this process forks its children itself.
    const meanwhile = await runChild({ file: 'sh', args: ['-c', 'echo $PPID'], cwd: dir, env });
    assert.equal(Number(meanwhile.stdout.toString()), process.pid);
    await waitUntil('a new helper is ready', () => relay.ready && relay.pid !== first, 10000);
    const after = await runChild({ file: 'sh', args: ['-c', 'echo $PPID'], cwd: dir, env });
    assert.equal(Number(after.stdout.toString()), relay.pid);
  });

  it('given a host that is done, then its idle helper neither keeps it alive nor outlives it', async function () {
    this.timeout(30000);
    const host = `
      const { enableSpawnRelay, readyRelay } = require(${JSON.stringify(RELAY)});
      const { runChild } = require(${JSON.stringify(RUN_CHILD)});
      enableSpawnRelay();
      const t = setInterval(async () => {
        const r = readyRelay();
        if (r === undefined) return;
        clearInterval(t);
        const c = await runChild({ file: 'sh', args: ['-c', 'echo $PPID'], cwd: '/', env: { PATH: process.env.PATH } });
        console.log(r.pid, c.stdout.toString().trim());
      }, 10);`;
    const r = await runChild({ file: process.execPath, args: ['--require', TSX, '-e', host], cwd: dir, env, timeoutMs: 20000 });
    assert.equal(r.stopReason, undefined, 'the host ended by itself');
    assert.equal(r.exitCode, 0, r.stderr.toString());
    const [helper, parent] = r.stdout.toString().trim().split(' ').map(Number);
    assert.equal(parent, helper, 'the child went through the helper');
    await waitUntil('the helper has gone', () => !pidAlive(helper ?? 0));
  });

  it('given a host killed with SIGKILL, then its helper goes too', async function () {
    this.timeout(30000);
    const host = `
      const { enableSpawnRelay, readyRelay } = require(${JSON.stringify(RELAY)});
      enableSpawnRelay();
      const t = setInterval(() => {
        const r = readyRelay();
        if (r !== undefined) { clearInterval(t); console.log(r.pid); setInterval(() => undefined, 1000); }
      }, 10);`;
    let hostPid = 0;
    let helper = 0;
    const r = await runChild({
      file: process.execPath,
      args: ['--require', TSX, '-e', host],
      cwd: dir,
      env,
      timeoutMs: 20000,
      ledger: { started: (p) => (hostPid = p), ended: () => undefined },
      onLine: (l) => {
        helper = Number(l);
        assert.equal(parentAndGroup(helper).ppid, hostPid);
        process.kill(hostPid, 'SIGKILL');
      },
    });
    assert.equal(r.signal, 'SIGKILL');
    assert.ok(helper > 0, r.stderr.toString());
    await waitUntil('the helper has gone', () => !pidAlive(helper));
  });
});
