// Starts child processes from a small helper process instead of this one. Linux's fork in
// libuv copies the page tables of the whole parent and blocks its main thread until the child
// has called exec: 13-16 ms a spawn from a running loop (~150 MB), 5-6 ms from a bare Node
// process, measured on the CI machine. A loop starts some 250 processes a run (git, bubblewrap,
// agents, gates), so its main thread spent about half of a run forking. The helper does the
// forking; this process only sends a message, and gets the pid, the output and the exit back.
//
// The children are the ones runChild would start itself: the same argv, environment and
// working directory, the same process group (their own, or this process's: the helper is in
// this process's group and forwards nothing of its own), and this process signals them by
// pid, as it would children of its own. The helper ignores the signals a terminal sends its
// group (this process decides how to stop) and exits when this process goes (its IPC
// channel closes). Its working directory is `/`, so it never looks like a process left in a
// project.
//
// Only long-lived processes turn it on (a running loop): a short command would wait for a
// Node start-up to save a few milliseconds. Until the helper says it is ready, and after it
// has died, runChild forks the children itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough, Writable, finished } from 'node:stream';

/** The helper: plain JavaScript run with `node -e`, so it needs no file of its own in any layout. */
const HELPER_SOURCE = `
'use strict';
const { spawn } = require('node:child_process');
const kids = new Map();
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']) process.on(s, () => undefined);
process.on('disconnect', () => process.exit(0));
const send = (m) => { if (process.connected) process.send(m); };
process.on('message', (m) => {
  if (m.t === 'spawn') {
    let c;
    try {
      c = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: m.detached, stdio: [m.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    } catch (e) {
      send({ id: m.id, t: 'error', message: String(e && e.message) });
      return;
    }
    if (c.pid === undefined) {
      c.once('error', (e) => send({ id: m.id, t: 'error', message: e.message }));
      return;
    }
    kids.set(m.id, c);
    c.on('error', () => undefined);
    send({ id: m.id, t: 'pid', pid: c.pid });
    c.stdout.on('data', (d) => send({ id: m.id, t: 'out', d }));
    c.stderr.on('data', (d) => send({ id: m.id, t: 'err', d }));
    c.once('exit', (code, signal) => send({ id: m.id, t: 'exit', code, signal }));
    c.once('close', () => { kids.delete(m.id); send({ id: m.id, t: 'close' }); });
    if (c.stdin) c.stdin.on('error', () => undefined);
    return;
  }
  const c = kids.get(m.id);
  if (c === undefined) return;
  if (m.t === 'in') c.stdin && c.stdin.write(m.d);
  else if (m.t === 'inEnd') c.stdin && c.stdin.end();
  else if (m.t === 'kill') { if (c.exitCode === null && c.signalCode === null) c.kill(m.sig); }
  else if (m.t === 'drop') { c.stdout.destroy(); c.stderr.destroy(); }
});
send({ t: 'ready' });
`;

export interface RelaySpawnRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A process group of its own. */
  readonly detached: boolean;
  /** Whether the child gets a stdin pipe (else /dev/null). */
  readonly stdin: boolean;
}

type FromHelper =
  | { readonly t: 'ready' }
  | { readonly t: 'pid'; readonly id: number; readonly pid: number }
  | { readonly t: 'error'; readonly id: number; readonly message: string }
  | { readonly t: 'out' | 'err'; readonly id: number; readonly d: Uint8Array }
  | { readonly t: 'exit'; readonly id: number; readonly code: number | null; readonly signal: NodeJS.Signals | null }
  | { readonly t: 'close'; readonly id: number };

/** An output stream whose destroy() also tells the helper to stop reading the child's pipes. */
class RelayedOutput extends PassThrough {
  constructor(private readonly onDestroy: () => void) {
    super();
  }
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.onDestroy();
    super._destroy(error, callback);
  }
}

/**
 * A child started by the helper, with the part of ChildProcess's shape runChild uses: pid,
 * exitCode and signalCode, kill, the streams, and 'error', 'exit' and 'close' (after both
 * output streams have ended).
 */
export class RelayedChild extends EventEmitter {
  pid: number | undefined = undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdout: RelayedOutput;
  readonly stderr: RelayedOutput;
  readonly stdin: Writable | null;

  constructor(
    private readonly relay: SpawnRelay,
    readonly id: number,
    withStdin: boolean,
  ) {
    super();
    const drop = (): void => relay.post({ t: 'drop', id });
    this.stdout = new RelayedOutput(drop);
    this.stderr = new RelayedOutput(drop);
    this.stdin = withStdin
      ? new Writable({
          write: (chunk: Buffer, _enc, done) => {
            relay.post({ t: 'in', id, d: chunk });
            done();
          },
          final: (done) => {
            relay.post({ t: 'inEnd', id });
            done();
          },
        })
      : null;
  }

  private startError: Error | undefined;

  /** The child never started: 'error' now, or for the first 'error' listener (the caller awaits the start first). */
  failed(error: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
    else this.startError = error;
  }

  private closeEmitted = false;

  private get exited(): boolean {
    return this.exitCode !== null || this.signalCode !== null;
  }

  /**
   * 'exit' (known from the codes) and 'close' are remembered: the helper's messages are
   * emitted on next ticks, which all run before the microtask that hands this child to the
   * caller, so a child that ends at once can have exited before the caller's first listener.
   */
  override once(event: string | symbol, listener: (...args: never[]) => void): this {
    if ((event === 'exit' && this.exited) || (event === 'close' && this.closeEmitted)) {
      const call = listener as (code: number | null, signal: NodeJS.Signals | null) => void;
      queueMicrotask(() => call(this.exitCode, this.signalCode));
      return this;
    }
    super.once(event, listener as (...args: unknown[]) => void);
    const error = this.startError;
    if (event === 'error' && error !== undefined) {
      this.startError = undefined;
      queueMicrotask(() => this.emit('error', error));
    }
    return this;
  }

  kill(signal: NodeJS.Signals): boolean {
    if (this.exitCode !== null || this.signalCode !== null) return false;
    this.relay.post({ t: 'kill', id: this.id, sig: signal });
    return true;
  }

  /** The helper's messages about this child. */
  receive(m: FromHelper): void {
    switch (m.t) {
      case 'out':
      case 'err': {
        const s = m.t === 'out' ? this.stdout : this.stderr;
        if (!s.destroyed) s.write(Buffer.from(m.d.buffer, m.d.byteOffset, m.d.byteLength));
        return;
      }
      case 'exit':
        this.exitCode = m.code;
        this.signalCode = m.signal;
        this.emit('exit', m.code, m.signal);
        return;
      case 'close':
        this.closeStreams();
        return;
      default:
        return;
    }
  }

  /** The helper went away: what it had not reported is lost, and the child counts as killed. */
  lost(): void {
    if (!this.exited) {
      this.signalCode = 'SIGKILL';
      this.emit('exit', null, 'SIGKILL');
    }
    this.closeStreams();
  }

  private closed = false;
  private closeStreams(): void {
    if (this.closed) return;
    this.closed = true;
    let open = 2;
    const one = (): void => {
      if (--open > 0) return;
      this.closeEmitted = true;
      this.emit('close', this.exitCode, this.signalCode);
    };
    for (const s of [this.stdout, this.stderr]) {
      finished(s, { writable: false }, one);
      s.end();
    }
  }
}

type ToHelper =
  | ({ readonly t: 'spawn'; readonly id: number } & RelaySpawnRequest)
  | { readonly t: 'in'; readonly id: number; readonly d: Buffer }
  | { readonly t: 'inEnd' | 'drop'; readonly id: number }
  | { readonly t: 'kill'; readonly id: number; readonly sig: NodeJS.Signals };

/** Helpers started after one died; past this the relay stays off and runChild forks itself. */
const MAX_RESTARTS = 3;

export class SpawnRelay {
  private helper: ChildProcess | undefined;
  private isReady = false;
  private starts = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { child: RelayedChild; resolve: (c: RelayedChild) => void }>();
  private readonly live = new Map<number, RelayedChild>();

  /** Starts the helper unless it runs (or has died too often); returns at once. */
  start(): void {
    if (this.helper !== undefined || this.starts > MAX_RESTARTS) return;
    this.starts++;
    let h: ChildProcess;
    try {
      h = spawn(process.execPath, ['-e', HELPER_SOURCE], {
        cwd: '/',
        // ELECTRON_RUN_AS_NODE: in VS Code's extension host, execPath is Electron's binary.
        env: { PATH: process.env['PATH'] ?? '', ELECTRON_RUN_AS_NODE: '1' },
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
        serialization: 'advanced',
      });
    } catch {
      return;
    }
    this.helper = h;
    h.on('message', (m: FromHelper) => this.receive(m));
    h.on('error', () => this.lose(h));
    h.on('exit', () => this.lose(h));
    this.idle(h);
  }

  /** True once the helper has said it is ready, until it goes away. */
  get ready(): boolean {
    return this.isReady;
  }

  /** The helper's pid while it runs. */
  get pid(): number | undefined {
    return this.helper?.pid;
  }

  /** Starts a child through the helper; resolves once it has a pid or has failed ('error' follows). */
  spawn(req: RelaySpawnRequest): Promise<RelayedChild> {
    const h = this.helper;
    if (h === undefined || !this.isReady) return Promise.reject(new Error('the process relay is not ready'));
    const id = this.nextId++;
    const child = new RelayedChild(this, id, req.stdin);
    h.ref();
    refChannel(h, true);
    return new Promise((resolve) => {
      this.pending.set(id, { child, resolve });
      this.post({ t: 'spawn', id, ...req });
    });
  }

  post(m: ToHelper): void {
    const h = this.helper;
    if (h?.connected === true) h.send(m);
  }

  /** Stops the helper (tests; a host that shuts down). Children it started keep running. */
  stop(): void {
    const h = this.helper;
    if (h === undefined) return;
    h.kill('SIGKILL');
    this.lose(h);
  }

  private receive(m: FromHelper): void {
    if (m.t === 'ready') {
      this.isReady = true;
      return;
    }
    const waiting = this.pending.get(m.id);
    if (waiting !== undefined) {
      this.pending.delete(m.id);
      if (m.t === 'pid') {
        waiting.child.pid = m.pid;
        this.live.set(m.id, waiting.child);
        waiting.resolve(waiting.child);
      } else if (m.t === 'error') {
        waiting.child.failed(new Error(m.message));
        waiting.resolve(waiting.child);
        this.afterChild();
      }
      return;
    }
    const child = this.live.get(m.id);
    if (child === undefined) return;
    child.receive(m);
    if (m.t === 'close') {
      this.live.delete(m.id);
      this.afterChild();
    }
  }

  /** With nothing running through it, the helper does not keep this process alive. */
  private afterChild(): void {
    const h = this.helper;
    if (h !== undefined && this.pending.size === 0 && this.live.size === 0) this.idle(h);
  }

  private idle(h: ChildProcess): void {
    h.unref();
    refChannel(h, false);
  }

  private lose(h: ChildProcess): void {
    if (this.helper !== h) return;
    this.helper = undefined;
    this.isReady = false;
    for (const { child, resolve } of this.pending.values()) {
      child.failed(new Error('the process relay stopped before the child started'));
      resolve(child);
    }
    this.pending.clear();
    for (const child of this.live.values()) child.lost();
    this.live.clear();
  }
}

/** The IPC channel keeps the event loop alive on its own; ChildProcess has no typed handle for it. */
function refChannel(h: ChildProcess, on: boolean): void {
  const channel = h.channel as { ref?: () => void; unref?: () => void } | null | undefined;
  if (on) channel?.ref?.();
  else channel?.unref?.();
}

let shared: SpawnRelay | undefined;

/**
 * Turns the relay on for this process (idempotent): runChild uses it once the helper is
 * ready. Off on Windows (no fork there) and with RALPH_SPAWN_RELAY=0.
 */
export function enableSpawnRelay(): void {
  if (process.platform === 'win32' || process.env['RALPH_SPAWN_RELAY'] === '0') return;
  shared ??= new SpawnRelay();
  shared.start();
}

/** The relay runChild should use now, if any. */
export function readyRelay(): SpawnRelay | undefined {
  if (shared === undefined) return undefined;
  if (!shared.ready) {
    shared.start();
    return undefined;
  }
  return shared;
}

/** Replaces the process's relay (tests); undefined turns it off. Returns the one it replaced. */
export function setSpawnRelay(relay: SpawnRelay | undefined): SpawnRelay | undefined {
  const before = shared;
  shared = relay;
  return before;
}
