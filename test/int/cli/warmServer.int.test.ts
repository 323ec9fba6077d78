// The warm process's server (src/cli/warmServer.ts) in this process, over a real Unix
// socket: each call runs in the caller's folder, environment and umask, and the server's
// own come back after it, whatever the call did; output arrives in order before the exit
// code; a second server leaves a live socket alone; a second process's socket under the same
// name, or a removed socket, ends it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CliIo } from '../../../src/cli/commandSpec';
import type { WarmReply, WarmRequest } from '../../../src/cli/warmClient';
import { serveWarm } from '../../../src/cli/warmServer';
import { redactText } from '../../../src/shared/redaction';

/** Sends one request and collects every reply until the server closes the connection. */
function call(socket: string, request: WarmRequest): Promise<WarmReply[]> {
  return new Promise((resolve, reject) => {
    const c = net.createConnection(socket, () => c.write(`${JSON.stringify(request)}\n`));
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => (got += d));
    c.on('end', () =>
      resolve(
        got
          .split('\n')
          .filter((l) => l.length > 0)
          .map((l) => JSON.parse(l) as WarmReply),
      ),
    );
    c.on('error', reject);
  });
}

/** Resolves when `file` exists (fs.watch on its folder). */
function appears(file: string): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (!fs.existsSync(file)) return;
      w.close();
      resolve();
    };
    const w = fs.watch(path.dirname(file), check);
    check();
  });
}

describe('the warm process server (in this process)', function () {
  this.timeout(60_000);
  let dir: string;
  let socket: string;
  const key = 'this build';
  // The server leaves each call in '/': this process (a mocha worker other files share) goes back.
  const ownCwd = process.cwd();

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rws-'));
    socket = path.join(dir, 's.sock');
  });
  afterEach(() => {
    process.chdir(ownCwd);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("runs a call in the caller's folder, environment, umask, run id and secrets, and puts its own back after", async () => {
    const caller = fs.mkdtempSync(path.join(dir, 'caller-'));
    const seen: Record<string, unknown>[] = [];
    const secret = 'correct-horse-battery-42';
    const runCli = (argv: readonly string[], options: { readonly io: CliIo; readonly runId: string }): Promise<number> => {
      seen.push({
        argv,
        cwd: process.cwd(),
        only: process.env['RALPH_WARM_ONLY'],
        umask: process.umask(),
        runId: options.runId,
        redacted: redactText(`key ${secret}`),
      });
      process.env['LEFT_BY_CALL'] = 'x';
      options.io.out('one ');
      options.io.err('two\n');
      options.io.out('three\n');
      return Promise.resolve(3);
    };
    const ownUmask = process.umask();
    const served = serveWarm({ socket, key, idleMs: 60_000, runCli });
    await appears(socket);
    const replies = await call(socket, {
      key,
      pid: 4242,
      argv: ['status', '--json'],
      cwd: caller,
      env: { RALPH_WARM_ONLY: 'yes', PATH: '/bin', MY_API_TOKEN: secret },
      umask: 0o077,
    });
    assert.deepEqual(replies, [{ accepted: process.pid }, { out: 'one ' }, { err: 'two\n' }, { out: 'three\n' }, { exit: 3 }]);
    // A second caller without the secret: its output keeps the text (the first caller's secrets are not its own).
    await call(socket, { key, pid: 4343, argv: ['status'], cwd: caller, env: { PATH: '/bin' }, umask: 0o022 });
    const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
    assert.deepEqual(seen, [
      {
        argv: ['status', '--json'],
        cwd: fs.realpathSync(caller),
        only: 'yes',
        umask: 0o077,
        runId: `run_${day}_4242`,
        redacted: 'key [REDACTED]',
      },
      {
        argv: ['status'],
        cwd: fs.realpathSync(caller),
        only: undefined,
        umask: 0o022,
        runId: `run_${day}_4343`,
        redacted: `key ${secret}`,
      },
    ]);
    // After the call: the server's own environment (the call's variable gone, its own PATH back) and umask; the root folder.
    assert.equal(process.env['RALPH_WARM_ONLY'], undefined);
    assert.equal(process.env['LEFT_BY_CALL'], undefined);
    assert.notEqual(process.env['PATH'], '/bin');
    assert.equal(process.umask(), ownUmask);
    assert.equal(process.cwd(), '/');
    fs.rmSync(socket);
    await served;
  });

  it('given a caller that goes away during its call, abandons the call (in the warm process: ends with its children)', async () => {
    let abandoned = 0;
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    let finish: (code: number) => void = () => undefined;
    const pendingCall = new Promise<number>((resolve) => (finish = resolve));
    const served = serveWarm({
      socket,
      key,
      idleMs: 60_000,
      runCli: () => {
        started();
        return pendingCall;
      },
      abandon: () => abandoned++,
    });
    await appears(socket);
    const c = net.createConnection(socket, () =>
      c.write(`${JSON.stringify({ key, pid: process.pid, argv: ['status'], cwd: dir, env: {}, umask: 0o022 })}\n`),
    );
    await running;
    const closed = new Promise<void>((resolve) => c.on('close', () => resolve()));
    c.destroy();
    await closed;
    // The server sees the close on its side after ours: wait for the count, event by event.
    for (let i = 0; i < 1000 && abandoned === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(abandoned, 1);
    finish(0);
    fs.rmSync(socket);
    await served;
  });

  it('turns away a call for a folder that is gone, which then runs in its own process', async () => {
    let ran = 0;
    const served = serveWarm({ socket, key, idleMs: 60_000, runCli: () => Promise.resolve(++ran) });
    await appears(socket);
    const replies = await call(socket, { key, pid: process.pid, argv: ['status'], cwd: path.join(dir, 'gone'), env: {}, umask: 0o022 });
    assert.deepEqual(replies, [{ busy: true }]);
    assert.equal(ran, 0);
    assert.equal(process.cwd(), ownCwd);
    fs.rmSync(socket);
    await served;
  });

  it('given one already answering on its socket, a second leaves it alone and ends at once', async () => {
    const first = serveWarm({ socket, key, idleMs: 60_000, runCli: () => Promise.resolve(0) });
    await appears(socket);
    const ino = fs.lstatSync(socket).ino;
    await serveWarm({ socket, key, idleMs: 60_000, runCli: () => Promise.resolve(1) });
    assert.equal(fs.lstatSync(socket).ino, ino);
    assert.deepEqual(await call(socket, { key, pid: process.pid, argv: ['status'], cwd: dir, env: {}, umask: 0o022 }), [
      { accepted: process.pid },
      { exit: 0 },
    ]);
    fs.rmSync(socket);
    await first;
  });

  it('ends when another process takes its socket name', async () => {
    const served = serveWarm({ socket, key, idleMs: 60_000, runCli: () => Promise.resolve(0) });
    await appears(socket);
    const other = net.createServer();
    const fresh = `${socket}.other`;
    await new Promise<void>((resolve) => other.listen(fresh, resolve));
    fs.renameSync(fresh, socket);
    await served;
    // The newcomer's socket stays.
    assert.ok(fs.lstatSync(socket).isSocket());
    await new Promise<void>((resolve) => other.close(() => resolve()));
  });
});
