// The warm `ralph` process (src/cli/warmAddress.ts), on the built CLI run as a user runs it
// (through its shebang): the first store command runs in its own process and starts one;
// later calls run in it with the output and exit code a process of their own gives, in the
// caller's folder; a call that finds it busy, dead or unreachable runs in its own process,
// and so does a writer that finds the store locked (it waits there, not in the warm
// process); a call it accepted and then lost is exit 6, never run twice; it exits when idle.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { git } from '../../kit/git';

const CLI = path.resolve(__dirname, '../../../dist/cli.js');
const WARM = /^ralph: ran in the warm process \(pid (\d+)\)\n/m;

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  /** The warm process's pid when the call ran in it. */
  readonly warm: number | undefined;
}

describe('the warm ralph process (built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;
  let sockets: string;
  const started = new Set<number>();

  function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return { ...process.env, RALPH_CLI_SERVER: '1', RALPH_CLI_SERVER_DIR: sockets, RALPH_DEBUG: '1', ...extra };
  }

  function result(code: number | null, out: string, err: string): Run {
    const m = WARM.exec(err);
    if (m) started.add(Number(m[1]));
    return { code: code ?? -1, out, err: err.replace(WARM, ''), warm: m ? Number(m[1]) : undefined };
  }

  function ralph(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
    const r = spawnSync(CLI, args, { cwd: options.cwd ?? repo, encoding: 'utf8', env: env(options.env) });
    if (r.error) throw r.error;
    return result(r.status, r.stdout, r.stderr);
  }

  /** Starts a call; `line` resolves when its stderr shows `re`, `done` when it exits. */
  function ralphUntil(re: RegExp, args: readonly string[]): { line: Promise<void>; done: Promise<Run> } {
    const child = spawn(CLI, args, { cwd: repo, env: env() });
    let out = '';
    let err = '';
    let seen: () => void = () => undefined;
    const line = new Promise<void>((resolve) => (seen = resolve));
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (re.test(err)) seen();
    });
    const done = new Promise<Run>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(result(code, out, err)));
    });
    return { line, done };
  }

  /** The same call in a process of its own (no warm process involved). */
  function alone(args: readonly string[], cwd = repo): Run {
    const r = spawnSync(CLI, args, { cwd, encoding: 'utf8', env: { ...process.env, RALPH_CLI_SERVER: '0', RALPH_DEBUG: '1' } });
    return result(r.status, r.stdout, r.stderr);
  }

  /** Resolves when `folder` holds a listening socket other than the inode `not` (fs.watch, no polling). */
  function socketIn(folder: string, not?: number): Promise<void> {
    const ready = (): boolean =>
      fs.readdirSync(folder).some((f) => {
        if (!f.endsWith('.sock')) return false;
        try {
          const st = fs.lstatSync(path.join(folder, f));
          return st.isSocket() && st.ino !== not;
        } catch {
          return false;
        }
      });
    return new Promise((resolve, reject) => {
      const watcher = fs.watch(folder, () => {
        if (ready()) done();
      });
      const timer = setTimeout(() => done(new Error(`no socket appeared in ${folder} within 60 s`)), 60_000);
      const done = (e?: Error): void => {
        clearTimeout(timer);
        watcher.close();
        if (e) reject(e);
        else resolve();
      };
      if (ready()) done();
    });
  }

  /** The warm process's pid: the one listening, or one a call starts now. */
  async function untilWarm(folder = sockets, extra: NodeJS.ProcessEnv = {}): Promise<number> {
    const before = fs.readdirSync(folder).find((f) => f.endsWith('.sock'));
    const beforeIno = before === undefined ? undefined : fs.lstatSync(path.join(folder, before)).ino;
    const first = ralph(['status'], { env: extra });
    assert.equal(first.code, 0, first.err);
    if (first.warm !== undefined) return first.warm;
    // The call ran alone: a socket file there before it is a dead process's; wait for another.
    await socketIn(folder, beforeIno);
    const next = ralph(['status'], { env: extra });
    assert.equal(next.code, 0, next.err);
    assert.ok(next.warm !== undefined, `the call after the socket appeared ran in its own process: ${next.err}`);
    return next.warm;
  }

  /** How many events of `type` the store holds for `entity` (read here, not through the CLI). */
  async function count(type: string, entity: string): Promise<number> {
    const store = await openStore({ ralphDir: path.join(repo, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      return store.events({ entityId: entity }).filter((e) => e.event_type === type).length;
    } finally {
      await store.close();
    }
  }

  /** The store held by this process: as a short-lived writer, or as a running loop (it drains the inbox). */
  function holdStore(asLoop: boolean): Promise<EventStore> {
    return openStore({
      ralphDir: path.join(repo, '.ralph'),
      mode: 'writer',
      projections: CONTROL_PROJECTIONS,
      ...(asLoop ? { drainsInbox: true } : {}),
    });
  }

  /**
   * `emit-event note <note>` while `holder` holds the store (started, then waiting: its stderr
   * shows `line`), a `pick-ready-task` meanwhile, then the holder closed: both calls' results.
   */
  async function emitBeside(holder: EventStore, line: RegExp, note: string): Promise<{ emitted: Run; meanwhile: Run }> {
    const waiting = ralphUntil(line, ['emit-event', 'note', note, 'note.added', 'human']);
    let meanwhile: Run;
    try {
      await waiting.line;
      meanwhile = ralph(['pick-ready-task', 'primary']);
    } finally {
      await holder.close();
    }
    return { emitted: await waiting.done, meanwhile };
  }

  /** Whether `pid` still runs (a zombie nobody reaped yet has ended). */
  function alive(pid: number): boolean {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} missing: npm run build`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-warm-'));
    sockets = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-'));
    repo = path.join(dir, 'repo');
    fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 't@example.invalid');
    git(repo, 'config', 'user.name', 'Test');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'init');
    fs.writeFileSync(
      path.join(repo, '.ralph', 'BACKLOG.md'),
      '# BACKLOG\n\n## Wave 0\n\n| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n' +
        '| W0-001 | pending | One | ES:1 | S | - |\n| W0-002 | pending | Two | ES:2 | S | - |\n',
    );
    const init = alone(['init']);
    assert.equal(init.code, 0, init.err);
  });

  after(() => {
    for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(sockets, { recursive: true, force: true });
  });

  it('given no warm process, a store command runs in its own process and starts one; later calls give what a process of their own gives', async () => {
    const first = ralph(['status']);
    assert.equal(first.code, 0, first.err);
    assert.equal(first.warm, undefined);
    const pid = await untilWarm();
    fs.mkdirSync(path.join(repo, 'sub'), { recursive: true });
    const calls: { args: string[]; cwd?: string }[] = [
      { args: ['status'] },
      { args: ['status', '--json'] },
      { args: ['pick-ready-task', 'worker'] },
      { args: ['get-deferred-queue', '--format', 'json'] },
      { args: ['should-review-deferred'] },
      // refused (1), usage (2), unknown task: the messages and codes travel too
      { args: ['transition-task', 'W9-999', 'done', 'worker-b'] },
      { args: ['status', 'extra-argument'] },
      { args: ['policy-check', 'W0-001', 'patch_nope'] },
      // the caller's folder: a relative --dir from a subfolder
      { args: ['--dir', '..', 'pick-ready-task', 'primary'], cwd: path.join(repo, 'sub') },
    ];
    for (const c of calls) {
      const warm = ralph(c.args, c.cwd ? { cwd: c.cwd } : {});
      const own = alone(c.args, c.cwd);
      assert.equal(warm.warm, pid, `${c.args.join(' ')} did not run in the warm process: ${warm.err}`);
      // RALPH_DEBUG (which names the warm process) prints stacks: their frames below runCli differ.
      const frames = /^ {4}at .*\n/gm;
      assert.deepEqual(
        { code: warm.code, out: warm.out, err: warm.err.replace(frames, '') },
        { code: own.code, out: own.out, err: own.err.replace(frames, '') },
        `ralph ${c.args.join(' ')}`,
      );
    }
  });

  it('given a warm process, a claim and a patch queued by a relative path are recorded for every later reader', async () => {
    const pid = await untilWarm();
    const claim = ralph(['claim-ready-task', 'worker', '--owner', 'worker-b']);
    assert.equal(claim.code, 0, claim.err);
    assert.equal(claim.warm, pid);
    const task = claim.out.trim();
    assert.match(task, /^W0-00[12]$/);
    fs.writeFileSync(path.join(repo, 'f.txt'), 'x\n');
    git(repo, 'add', 'f.txt');
    git(repo, 'commit', '-q', '-m', 'f');
    const pending = path.join(repo, 'sub', 'p.patch');
    fs.writeFileSync(pending, git(repo, 'format-patch', '-1', '--stdout') + '\n');
    const queued = ralph(['--dir', '..', 'queue-patch', task, path.join('..', 'sub', 'p.patch'), 'worker-b'], {
      cwd: path.join(repo, 'sub'),
    });
    assert.equal(queued.code, 0, queued.err);
    assert.equal(queued.warm, pid);
    assert.equal(await count('task.claimed', task), 1);
    assert.equal(
      await count(
        'patch.queued',
        queued.out
          .trim()
          .split(/\s+/)
          .find((w) => w.startsWith('patch_')) ?? '',
      ),
      1,
    );
  });

  it('given the store locked by another short-lived writer, a warm call is handed back and waits in its own process; the warm process stays free', async () => {
    const pid = await untilWarm();
    const { emitted, meanwhile } = await emitBeside(await holdStore(false), /waiting for the store/, 'n0');
    assert.equal(emitted.code, 0, emitted.err);
    assert.equal(emitted.warm, undefined, 'the call waited for the lock in the warm process');
    assert.match(emitted.out, /^evt_\d{17}_\d{6}\n$/);
    assert.equal(await count('note.added', 'n0'), 1);
    assert.equal(meanwhile.code, 0, meanwhile.err);
    assert.equal(meanwhile.warm, pid);
  });

  it('given the warm process busy with a call waiting on a running loop, another call runs in its own process', async () => {
    const pid = await untilWarm();
    // The loop stops without draining: the call applies its own queued file.
    const { emitted, meanwhile } = await emitBeside(await holdStore(true), /sent to its inbox/, 'n1');
    assert.equal(emitted.code, 0, emitted.err);
    assert.equal(emitted.warm, pid);
    assert.match(emitted.out, /^evt_\d{17}_\d{6}\n$/);
    assert.equal(await count('note.added', 'n1'), 1);
    assert.equal(meanwhile.code, 0, meanwhile.err);
    assert.equal(meanwhile.warm, undefined);
  });

  it('given the warm process killed during a call it accepted, the call is exit 6 and not run again (applied once); the next call starts a new one', async () => {
    const pid = await untilWarm();
    const stale = fs.readdirSync(sockets).find((f) => f.endsWith('.sock')) ?? '';
    const staleIno = fs.lstatSync(path.join(sockets, stale)).ino;
    const loop = await holdStore(true);
    const sent = ralphUntil(/sent to its inbox/, ['emit-event', 'note', 'n-lost', 'note.added', 'human']);
    let lost: Run;
    try {
      await sent.line;
      process.kill(pid, 'SIGKILL');
      lost = await sent.done;
    } finally {
      await loop.close();
    }
    assert.equal(lost.code, 6, lost.err);
    assert.match(lost.err, /warm ralph process ended before the command finished; it may have been recorded/);
    // It was queued: draining applies it, once; the caller did not send it again.
    const drained = alone(['drain-inbox']);
    assert.equal(drained.code, 0, drained.err);
    assert.equal(await count('note.added', 'n-lost'), 1);
    // Its socket file is left behind: the next call finds nobody there, runs here and starts another.
    assert.ok(fs.lstatSync(path.join(sockets, stale)).isSocket());
    const after = ralph(['status']);
    assert.equal(after.code, 0, after.err);
    assert.equal(after.warm, undefined);
    await socketIn(sockets, staleIno);
    const next = ralph(['status']);
    assert.ok(next.warm !== undefined && next.warm !== pid, next.err);
  });

  it('a caller of another build is turned away without running anything', async () => {
    await untilWarm();
    const [socket] = fs.readdirSync(sockets).filter((f) => f.endsWith('.sock'));
    assert.ok(socket !== undefined);
    const reply = await new Promise<string>((resolve, reject) => {
      const c = net.createConnection(path.join(sockets, socket), () =>
        c.write(
          `${JSON.stringify({ key: 'another build', pid: process.pid, argv: ['emit-event', 'note', 'x', 'note.added', 'human'], cwd: repo, env: {}, umask: 0o22 })}\n`,
        ),
      );
      let got = '';
      c.setEncoding('utf8');
      c.on('data', (d: string) => (got += d));
      c.on('end', () => resolve(got));
      c.on('error', reject);
    });
    assert.equal(reply, '{"busy":true}\n');
    assert.equal(await count('note.added', 'x'), 0);
  });

  it('given a socket folder others may enter, or one outside the folders sandboxes hide, no warm process is used or started', () => {
    const open = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-open-'));
    fs.chmodSync(open, 0o755);
    // An agent's sandbox shows /var/tmp (read-only, which does not stop connect()).
    const shown = fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'rw-shown-'));
    try {
      for (const folder of [open, shown]) {
        for (let i = 0; i < 2; i++) {
          const r = ralph(['status'], { env: { RALPH_CLI_SERVER_DIR: folder } });
          assert.equal(r.code, 0, r.err);
          assert.equal(r.warm, undefined);
        }
        assert.deepEqual(fs.readdirSync(folder), [], folder);
      }
    } finally {
      fs.rmSync(open, { recursive: true, force: true });
      fs.rmSync(shown, { recursive: true, force: true });
    }
  });

  it('given a caller interrupted during its call, the warm process ends with it, as the process it ran in alone would', async () => {
    const pid = await untilWarm();
    const stale = fs.readdirSync(sockets).find((f) => f.endsWith('.sock')) ?? '';
    const staleIno = fs.lstatSync(path.join(sockets, stale)).ino;
    const loop = await holdStore(true);
    const child = spawn(CLI, ['emit-event', 'note', 'n-int', 'note.added', 'human'], { cwd: repo, env: env() });
    try {
      let err = '';
      await new Promise<void>((resolve) =>
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (/sent to its inbox/.test(err)) resolve();
        }),
      );
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      child.kill('SIGINT');
      assert.equal(await exited, 'SIGINT');
      for (let i = 0; i < 200 && alive(pid); i++) spawnSync('sleep', ['0.05']);
      assert.equal(alive(pid), false, 'the warm process outlived its interrupted caller');
    } finally {
      await loop.close();
    }
    // The next call finds its socket dead (the file is left), runs alone and starts another.
    assert.equal(ralph(['status']).warm, undefined);
    await socketIn(sockets, staleIno);
    const next = ralph(['status']);
    assert.ok(next.warm !== undefined && next.warm !== pid, next.err);
  });

  it('given a call that starts the warm process with another file open, that file is not kept open by it', async () => {
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-fd-'));
    try {
      // As a shell leaves a descriptor open for a program (fd 200, a copy of its stdout, a
      // pipe): this test, its reader, sees the pipe's end only when every writer is gone.
      // (Node's spawn happens not to pass low descriptors such as 9 on; bash's 200 it does.)
      const child = spawn('bash', ['-c', 'exec "$0" status 200>&1 >/dev/null 2>&1', CLI], {
        cwd: repo,
        // Idle for longer than the test may take: a kept descriptor would outlast it.
        env: env({ RALPH_CLI_SERVER_DIR: own, RALPH_CLI_SERVER_IDLE_MS: '600000' }),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.stdout.resume();
      const ended = new Promise<void>((resolve) => child.stdout.on('end', () => resolve()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 0);
      await socketIn(own);
      await ended;
    } finally {
      // Its warm process ends within a second of its socket's removal.
      fs.rmSync(own, { recursive: true, force: true });
    }
  });

  it('given no call for its idle time, the warm process exits and removes its socket', async () => {
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'rw-idle-'));
    try {
      const idle = { RALPH_CLI_SERVER_DIR: own, RALPH_CLI_SERVER_IDLE_MS: '300' };
      const pid = await untilWarm(own, idle);
      const gone = new Promise<void>((resolve) => {
        const check = (): void => {
          if (fs.readdirSync(own).some((f) => f.endsWith('.sock'))) return;
          w.close();
          resolve();
        };
        const w = fs.watch(own, check);
        check();
      });
      await gone;
      // It exits right after removing its socket.
      for (let i = 0; i < 100 && alive(pid); i++) spawnSync('sleep', ['0.05']);
      assert.equal(alive(pid), false, 'the warm process did not exit when idle');
    } finally {
      fs.rmSync(own, { recursive: true, force: true });
    }
  });
});
