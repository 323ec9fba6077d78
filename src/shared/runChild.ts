// The one way the engine runs a child process (agents' CLIs, gate commands, git): argv and a
// complete environment, spawned detached in a process group of its own, stdin text, stdout
// delivered line by line, each stream's output kept up to a byte cap, and one stop path
// (abort signal or timeout -> SIGTERM to the group, a grace period, SIGKILL). When the
// leader exits, whatever it left running in its group is killed, so no run leaves a child
// behind and the wait never hangs on a grandchild holding a pipe open. The group is written
// down in the process ledger while it runs, so a killed host's next run can reap it.
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { signalGroup } from './process';
import type { ProcessLedgerPort } from './processLedger';
import { readyRelay } from './spawnRelay';

export interface ChildRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The complete environment of the child (no implicit inheritance; undefined values are left out). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Written to stdin, then stdin is closed; without it stdin is /dev/null. */
  readonly stdin?: string | Buffer;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL; default 5 s. */
  readonly graceMs?: number;
  /** Bytes kept of each stream (the last ones); default 1 MiB. `Infinity` keeps everything. */
  readonly maxBytes?: number;
  /** stderr joins stdout as one stream, in the order it arrives (the lines and the kept output). */
  readonly mergeStderr?: boolean;
  /** Each line of stdout, without its line break (a final line without one too), in order. */
  readonly onLine?: (line: string) => void;
  /** Characters kept of a line that has not ended yet (the last ones); default unbounded. */
  readonly maxLineChars?: number;
  /** Exit codes that are answers rather than failures when `throwOnError` is set (0 always is). */
  readonly allowExitCodes?: readonly number[];
  /** Reject with ChildFailed unless the child exited with 0 or an allowed code; default false. */
  readonly throwOnError?: boolean;
  /**
   * A process group of its own (default). False keeps the child in the caller's group, so
   * that whatever kills the caller's group (a crash test, a terminal's ^C) takes it along;
   * the stop path then signals the child alone, and no ledger should be given (the
   * ledger reaps groups).
   */
  readonly ownGroup?: boolean;
  /** Told when the group starts and ends, with `ledgerLabel` (default: the file) as what runs. */
  readonly ledger?: ProcessLedgerPort;
  readonly ledgerLabel?: string;
}

export interface ChildResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the runner stopped the child. */
  readonly stopReason?: 'abort' | 'timeout';
  /** The kept stdout bytes (with stderr when merged), exactly as written. */
  readonly stdout: Buffer;
  /** The kept stderr bytes (empty when merged). */
  readonly stderr: Buffer;
  readonly durationMs: number;
  /** A spawn failure (binary missing, bad cwd): the child never ran. */
  readonly spawnError?: string;
}

export const DEFAULT_GRACE_MS = 5000;
const DEFAULT_MAX_BYTES = 1024 * 1024;
/** How long output is read after the leader exits and its group is killed. */
const DRAIN_MS = 2000;

/** Keeps the last `max` bytes of `s`, cut at a character boundary. */
export function tailOf(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  return textTail(Buffer.from(s), max);
}

/** The last `max` bytes of `b` as text, without the broken character a byte cut can leave at the start. */
export function textTail(b: Buffer, max = b.length): string {
  return (b.length <= max ? b : b.subarray(b.length - max)).toString('utf8').replace(/^\uFFFD+/, '');
}

/** A child that did not end with an allowed exit code: stopped, killed, failed, or never started. */
export class ChildFailed extends Error {
  override readonly name = 'ChildFailed';
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stopReason: 'abort' | 'timeout' | undefined;
  readonly spawnError: string | undefined;
  constructor(
    readonly file: string,
    readonly args: readonly string[],
    readonly cwd: string,
    readonly result: ChildResult,
  ) {
    const how =
      result.spawnError !== undefined
        ? `could not start: ${result.spawnError}`
        : result.stopReason !== undefined
          ? `was stopped (${result.stopReason})`
          : result.exitCode !== null
            ? `failed with exit code ${result.exitCode}`
            : `was killed by ${result.signal ?? 'a signal'}`;
    const tail = textTail(failureOutput(result), 2000).trim();
    super(`${file} ${args.join(' ')} (in ${cwd}) ${how}${tail === '' ? '' : `: ${tail.split('\n').slice(-5).join(' | ')}`}`);
    this.exitCode = result.exitCode;
    this.signal = result.signal;
    this.stopReason = result.stopReason;
    this.spawnError = result.spawnError;
  }

  /** The last `maxBytes` of stderr (or of stdout when stderr is empty or merged) as text. */
  outputTail(maxBytes = 4096): string {
    return textTail(failureOutput(this.result), maxBytes);
  }
}

/** What a failure quotes: stderr, or stdout when stderr is empty or merged into it. */
function failureOutput(r: ChildResult): Buffer {
  return r.stderr.length > 0 ? r.stderr : r.stdout;
}

/** Bytes kept from the end of a stream: chunks dropped from the front once they exceed the cap. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    if (this.max <= 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    // Compacting only at twice the cap keeps this linear for a chatty child.
    if (this.bytes > this.max * 2 && Number.isFinite(this.max)) this.compact();
  }
  private compact(): void {
    const all = Buffer.concat(this.chunks);
    const kept = all.subarray(Math.max(0, all.length - this.max));
    this.chunks = [kept];
    this.bytes = kept.length;
  }
  take(): Buffer {
    if (this.bytes > this.max) this.compact();
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
  }
}

/** Splits decoded text into lines across chunks; each stream decodes on its own (no split characters). */
class LineSplitter {
  private pending = '';
  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineChars: number,
  ) {}
  write(text: string): void {
    let from = 0;
    let i: number;
    while ((i = text.indexOf('\n', from)) >= 0) {
      const line = this.pending + text.slice(from, i);
      this.pending = '';
      this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
      from = i + 1;
    }
    this.pending += text.slice(from);
    if (this.pending.length > this.maxLineChars) this.pending = this.pending.slice(-this.maxLineChars);
  }
  end(): void {
    if (this.pending.length > 0) this.onLine(this.pending);
    this.pending = '';
  }
}

// Groups still alive, killed when this Node process exits (detached children would
// otherwise outlive the host).
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const g of liveGroups) signalGroup(g, 'SIGKILL');
    });
  }
  liveGroups.add(pid);
}

interface Settled {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly error?: Error;
}

/**
 * Runs a child to its end. Never rejects for a failing or stopped child unless
 * `throwOnError` is set; then it rejects with ChildFailed.
 */
export async function runChild(req: ChildRequest): Promise<ChildResult> {
  const started = Date.now();
  const result = await run(req, started);
  const failed =
    result.spawnError !== undefined ||
    result.stopReason !== undefined ||
    result.exitCode === null ||
    (result.exitCode !== 0 && !(req.allowExitCodes ?? []).includes(result.exitCode));
  if (req.throwOnError === true && failed) throw new ChildFailed(req.file, req.args, req.cwd, result);
  return result;
}

/** What runChild uses of a child process: ChildProcess has it, and so has the relay's RelayedChild. */
interface StartedChild {
  readonly pid?: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal: NodeJS.Signals): boolean;
  once(event: 'error', listener: (error: Error) => void): unknown;
  once(event: 'exit' | 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly stdin: Writable | null;
}

/** Read afresh (a narrowed `signal.aborted` from before an await says nothing now). */
function abortedNow(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/**
 * Through the process relay once it is ready (spawnRelay.ts), else a fork of this process.
 * The fork is returned as it is, not in a promise: ChildProcess reports a failed start on
 * the next tick, and its listeners must be on it by then.
 */
function startChild(req: ChildRequest, ownGroup: boolean): StartedChild | Promise<StartedChild> {
  const relay = readyRelay();
  if (relay !== undefined) {
    return relay.spawn({ file: req.file, args: req.args, cwd: req.cwd, env: req.env, detached: ownGroup, stdin: req.stdin !== undefined });
  }
  return spawn(req.file, [...req.args], {
    cwd: req.cwd,
    // spawn leaves out undefined values itself; a copy without them cost a third of a git
    // call's CPU in this process (callgrind).
    env: req.env,
    detached: ownGroup,
    stdio: [req.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
}

async function run(req: ChildRequest, started: number): Promise<ChildResult> {
  if (req.signal?.aborted === true) {
    return { exitCode: null, signal: null, stopReason: 'abort', stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), durationMs: 0 };
  }
  const ownGroup = req.ownGroup ?? true;
  const starting = startChild(req, ownGroup);
  const child = starting instanceof Promise ? await starting : starting;
  const pid = child.pid;
  const signal = (sig: NodeJS.Signals): void => {
    if (pid === undefined) return;
    if (ownGroup) signalGroup(pid, sig);
    else if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };

  // The stop path is armed before anything else happens (no await, no callback into the
  // caller in between), so an abort that fires while the child is being set up, even from
  // the ledger's own callback, still reaches the group.
  let stopReason: 'abort' | 'timeout' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let exited = false;
  const stop = (reason: 'abort' | 'timeout'): void => {
    // After the leader's exit the run has ended; only its output is still being read.
    if (stopReason !== undefined || pid === undefined || exited) return;
    stopReason = reason;
    signal('SIGTERM');
    killTimer = setTimeout(() => signal('SIGKILL'), req.graceMs ?? DEFAULT_GRACE_MS);
  };
  const onAbort = (): void => stop('abort');
  req.signal?.addEventListener('abort', onAbort, { once: true });
  // Through the relay the start is awaited: an abort meanwhile did not reach the listener.
  if (abortedNow(req.signal)) stop('abort');
  const timeoutTimer = req.timeoutMs !== undefined ? setTimeout(() => stop('timeout'), req.timeoutMs) : undefined;

  const ended = new Promise<Settled>((resolve) => {
    child.once('error', (error) => {
      // Without a pid the child never ran: no 'close' follows for certain.
      if (pid === undefined) resolve({ code: null, signal: null, error });
    });
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let drainTimer: NodeJS.Timeout | undefined;
  if (pid !== undefined) {
    if (ownGroup) trackGroup(pid);
    // The leader's exit ends the run: kill what it left in its group so the pipes close.
    child.once('exit', () => {
      exited = true;
      if (ownGroup) signalGroup(pid, 'SIGKILL');
      liveGroups.delete(pid);
      // A process that left the group (setsid) may hold a pipe open for ever: what it has
      // not written by now is not waited for.
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, DRAIN_MS);
    });
    req.ledger?.started(pid, req.ledgerLabel ?? req.file, req.cwd);
  }

  const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
  const out = new TailBuffer(maxBytes);
  const err = req.mergeStderr === true ? out : new TailBuffer(maxBytes);
  const lines = req.onLine !== undefined ? new LineSplitter(req.onLine, req.maxLineChars ?? Infinity) : undefined;
  const listen = (stream: Readable | null, into: TailBuffer, toLines: boolean): void => {
    if (stream === null) return;
    const decoder = toLines ? new StringDecoder('utf8') : undefined;
    stream.on('data', (chunk: Buffer) => {
      into.push(chunk);
      if (decoder !== undefined) lines?.write(decoder.write(chunk));
    });
    if (decoder !== undefined) stream.on('end', () => lines?.write(decoder.end()));
  };
  listen(child.stdout, out, lines !== undefined);
  listen(child.stderr, err, lines !== undefined && req.mergeStderr === true);
  if (child.stdin !== null) {
    // A child that exits without reading its input closes the pipe: not an error of ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(req.stdin);
  }

  const settled = await ended;
  lines?.end();
  if (timeoutTimer !== undefined) clearTimeout(timeoutTimer);
  if (killTimer !== undefined) clearTimeout(killTimer);
  if (drainTimer !== undefined) clearTimeout(drainTimer);
  req.signal?.removeEventListener('abort', onAbort);
  if (pid !== undefined) {
    if (ownGroup) signalGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
    req.ledger?.ended(pid);
  }
  return {
    exitCode: settled.code,
    signal: settled.signal,
    ...(stopReason !== undefined ? { stopReason } : {}),
    stdout: out.take(),
    stderr: req.mergeStderr === true ? Buffer.alloc(0) : err.take(),
    durationMs: Date.now() - started,
    ...(settled.error !== undefined ? { spawnError: settled.error.message } : {}),
  };
}
