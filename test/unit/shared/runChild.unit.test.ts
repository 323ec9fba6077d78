// The one process runner, on real child processes, forked here and through the process
// relay alike: the stop path (abort before, while and after the start; the timeout) ends the
// whole group, lines arrive in order, the kept output is capped, and a failure is a typed
// error carrying what the child said.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessLedgerPort } from '../../../src/shared/processLedger';
import { ChildFailed, runChild } from '../../../src/shared/runChild';
import { processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';
import { useRelayInSuite } from '../../kit/spawnRelay';

const env = { PATH: process.env.PATH };

for (const through of ['forked from this process', 'through the process relay'] as const) {
  describe(`shared/runChild (real processes, ${through})`, () => {
    if (through === 'through the process relay') useRelayInSuite();
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'ralph-runchild-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('given an environment with undefined entries, then the child has exactly the defined ones', async () => {
      const r = await runChild({
        file: 'sh',
        args: ['-c', 'env | sort'],
        cwd: dir,
        env: { PATH: process.env.PATH, RALPH_KEPT: 'yes', HOME: undefined, RALPH_GONE: undefined },
      });
      const names = r.stdout
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(0, l.indexOf('=')));
      assert.ok(names.includes('RALPH_KEPT'), names.join(' '));
      assert.ok(!names.includes('RALPH_GONE') && !names.includes('HOME'), names.join(' '));
    });

    describe('the stop path', () => {
      it('given a signal aborted before the start, then nothing is spawned', async () => {
        const c = new AbortController();
        c.abort();
        const r = await runChild({ file: 'sh', args: ['-c', 'touch spawned'], cwd: dir, env, signal: c.signal });
        assert.equal(r.stopReason, 'abort');
        assert.equal(r.exitCode, null);
        assert.equal(existsSync(join(dir, 'spawned')), false);
      });

      it('given an abort while the child is being set up (from the ledger callback), then the child is still killed', async () => {
        const c = new AbortController();
        let pid = 0;
        const ledger: ProcessLedgerPort = {
          started: (p) => {
            pid = p;
            c.abort();
          },
          ended: () => undefined,
        };
        const r = await runChild({ file: 'sleep', args: ['1000'], cwd: dir, env, signal: c.signal, ledger, graceMs: 2000 });
        assert.equal(r.stopReason, 'abort');
        assert.equal(r.signal, 'SIGTERM');
        assert.ok(pid > 0);
        assert.ok(!processesIn(dir).includes(pid));
      });

      it('given an abort in the same tick as the call, then the child is killed, not waited for', async () => {
        const c = new AbortController();
        const run = runChild({ file: 'sleep', args: ['1000'], cwd: dir, env, signal: c.signal, graceMs: 2000 });
        c.abort();
        const r = await run;
        assert.equal(r.stopReason, 'abort');
        assert.equal(r.signal, 'SIGTERM');
      });

      it('given an abort after the start, then the whole group is gone, grandchild included', async () => {
        const c = new AbortController();
        let grandchild = 0;
        let leader = 0;
        let running: number[] = [];
        const run = runChild({
          file: 'sh',
          args: ['-c', 'sleep 1000 & echo $!; wait'],
          cwd: dir,
          env,
          signal: c.signal,
          graceMs: 2000,
          ledger: { started: (p) => (leader = p), ended: () => undefined },
          onLine: (l) => {
            grandchild = Number(l);
            running = processesIn(dir);
            c.abort();
          },
        });
        const r = await run;
        assert.equal(r.stopReason, 'abort');
        assert.ok(grandchild !== leader && running.includes(grandchild) && running.includes(leader), String(running));
        await waitUntil('no process of the group is left', () => processesIn(dir).length === 0);
      });

      it('given a timeout, then SIGTERM to the group, and SIGKILL after the grace for a leader that ignores it', async () => {
        let grandchild = 0;
        const started = Date.now();
        const r = await runChild({
          file: 'sh',
          args: ['-c', "trap '' TERM; sleep 1000 & echo $!; wait; sleep 1000"],
          cwd: dir,
          env,
          timeoutMs: 300,
          graceMs: 300,
          onLine: (l) => (grandchild = Number(l)),
        });
        assert.equal(r.stopReason, 'timeout');
        assert.equal(r.signal, 'SIGKILL');
        assert.ok(Date.now() - started >= 600, 'the grace period was given');
        assert.ok(grandchild > 0, 'the grandchild had started');
        await waitUntil('no process of the group is left', () => processesIn(dir).length === 0);
      });

      it('given a leader that exits leaving a child holding stdout, then the run ends and the child is killed', async () => {
        let grandchild = 0;
        const r = await runChild({
          file: 'sh',
          args: ['-c', '(sleep 1000) & echo $!'],
          cwd: dir,
          env,
          timeoutMs: 20000,
          onLine: (l) => (grandchild = Number(l)),
        });
        assert.equal(r.exitCode, 0);
        assert.equal(r.stopReason, undefined);
        await waitUntil('the left-behind child has ended', () => !processesIn(dir).includes(grandchild));
      });

      it('given a ledger, then the group is recorded as it starts and forgotten as it ends', async () => {
        const seen: string[] = [];
        const r = await runChild({
          file: 'sh',
          args: ['-c', 'echo $$'],
          cwd: dir,
          env,
          ledgerLabel: 'the gate',
          ledger: { started: (p, what, cwd) => seen.push(`started ${p} ${what} ${cwd}`), ended: (p) => seen.push(`ended ${p}`) },
        });
        const pid = r.stdout.toString().trim();
        assert.deepEqual(seen, [`started ${pid} the gate ${dir}`, `ended ${pid}`]);
      });
    });

    describe('output', () => {
      it('given stdin and several lines, then each line arrives once, in order, a last unterminated one too, without CR', async () => {
        const lines: string[] = [];
        const r = await runChild({
          file: 'sh',
          args: ['-c', "cat; for i in $(seq 1 500); do echo line$i; done; printf 'crlf\\r\\nlast'"],
          cwd: dir,
          env,
          stdin: 'from stdin\n',
          onLine: (l) => lines.push(l),
        });
        assert.equal(r.exitCode, 0);
        const expected = ['from stdin', ...Array.from({ length: 500 }, (_, i) => `line${i + 1}`), 'crlf', 'last'];
        assert.deepEqual(lines, expected);
      });

      it('given a character split across writes, then the line holds it whole', async () => {
        const lines: string[] = [];
        // é is 0xC3 0xA9: two writes with a pause between them arrive as two chunks.
        await runChild({
          file: 'sh',
          args: ['-c', "printf '\\303'; sleep 0.05; printf '\\251\\n'"],
          cwd: dir,
          env,
          onLine: (l) => lines.push(l),
        });
        assert.deepEqual(lines, ['é']);
      });

      it('given more output than the cap, then the last bytes are kept; with no cap, every byte exactly', async () => {
        const big = "head -c 300000 /dev/zero | tr '\\0' x; printf 'END\\377'";
        const capped = await runChild({ file: 'sh', args: ['-c', big], cwd: dir, env, maxBytes: 1000 });
        assert.equal(capped.stdout.length, 1000);
        assert.deepEqual(capped.stdout.subarray(-4), Buffer.from([0x45, 0x4e, 0x44, 0xff]));
        const whole = await runChild({ file: 'sh', args: ['-c', big], cwd: dir, env, maxBytes: Infinity });
        assert.equal(whole.stdout.length, 300004);
        assert.equal(whole.stdout[300003], 0xff);
      });

      it('given merged stderr, then both streams are in the kept output and the lines', async () => {
        const lines: string[] = [];
        const r = await runChild({
          file: 'sh',
          args: ['-c', 'echo out; echo err >&2'],
          cwd: dir,
          env,
          mergeStderr: true,
          onLine: (l) => lines.push(l),
        });
        assert.deepEqual([...lines].sort(), ['err', 'out']);
        assert.deepEqual(r.stdout.toString().split('\n').sort(), ['', 'err', 'out']);
        assert.equal(r.stderr.length, 0);
      });
    });

    describe('the typed error', () => {
      it('given a non-zero exit and throwOnError, then ChildFailed carries the exit code and the output tail', async () => {
        const failing = { file: 'sh', args: ['-c', 'echo partial; echo boom >&2; exit 3'], cwd: dir, env, throwOnError: true };
        const err = await runChild(failing).then(
          () => assert.fail('resolved'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof ChildFailed);
        assert.equal(err.name, 'ChildFailed');
        assert.equal(err.exitCode, 3);
        assert.equal(err.signal, null);
        assert.equal(err.outputTail(), 'boom\n');
        assert.equal(err.result.stdout.toString(), 'partial\n');
        assert.match(err.message, /exit code 3: boom$/);
        const allowed = await runChild({ ...failing, allowExitCodes: [3] });
        assert.equal(allowed.exitCode, 3);
      });

      it('given a stop or a missing binary with throwOnError, then ChildFailed says which', async () => {
        const timedOut = await runChild({ file: 'sleep', args: ['1000'], cwd: dir, env, timeoutMs: 50, throwOnError: true }).catch(
          (e: unknown) => e,
        );
        assert.ok(timedOut instanceof ChildFailed);
        assert.equal(timedOut.stopReason, 'timeout');
        assert.equal(timedOut.signal, 'SIGTERM');
        const missing = await runChild({ file: join(dir, 'no-such-binary'), args: [], cwd: dir, env, throwOnError: true }).catch(
          (e: unknown) => e,
        );
        assert.ok(missing instanceof ChildFailed);
        assert.match(missing.spawnError ?? '', /ENOENT/);
        assert.equal(missing.exitCode, null);
      });

      it('given a missing binary started from a timer, not a promise, then a spawn error in the result, nothing uncaught', async () => {
        // Called from a macrotask, Node delivers the failed start before any promise
        // continuation: the runner must be listening by then.
        const r = await new Promise<Awaited<ReturnType<typeof runChild>>>((resolve, reject) =>
          setImmediate(
            () => void runChild({ file: join(dir, 'no-such-binary'), args: [], cwd: dir, env, stdin: '' }).then(resolve, reject),
          ),
        );
        assert.match(r.spawnError ?? '', /ENOENT/);
        assert.equal(r.exitCode, null);
        assert.equal(r.stopReason, undefined);
      });

      it('without throwOnError, a failure resolves with the result', async () => {
        const r = await runChild({ file: 'sh', args: ['-c', 'exit 7'], cwd: dir, env });
        assert.equal(r.exitCode, 7);
      });
    });
  });
}
