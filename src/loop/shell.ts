// Runs a gate's shell command in its own process group with node:child_process: output
// merged in order, line callback, bounded tail, and one stop path (abort or timeout ->
// SIGTERM to the group, grace, SIGKILL). When the shell exits, anything it left in its group
// is killed, so a gate never leaves a child behind.
import { spawn } from 'node:child_process';
import { signalGroup as killGroup } from '../shared/process';
import type { ProcessLedgerPort } from '../shared/processLedger';

export interface ShellRequest {
  readonly command: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly graceMs: number;
  readonly tailBytes: number;
  readonly onLine?: (line: string) => void;
  /** Told when the group starts and ends, so a killed host's next run can reap it. */
  readonly ledger?: ProcessLedgerPort;
  /** Wraps the shell's command line (a sandbox); default: run `/bin/sh` as is. */
  readonly spawnAs?: (file: string, args: readonly string[]) => { readonly file: string; readonly args: readonly string[] };
}

export interface ShellOutcome {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stopReason?: 'abort' | 'timeout';
  readonly outputTail: string;
  readonly durationMs: number;
  readonly spawnError?: string;
}

const liveGroups = new Set<number>();
let exitHook = false;

/** Keeps the last `max` bytes of `s`, cut at a character boundary. */
export function tailOf(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  const b = Buffer.from(s);
  return b
    .subarray(b.length - max)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
}

export function runShell(req: ShellRequest): Promise<ShellOutcome> {
  const started = Date.now();
  if (req.signal?.aborted) return Promise.resolve({ exitCode: null, signal: null, stopReason: 'abort', outputTail: '', durationMs: 0 });
  return new Promise<ShellOutcome>((resolve) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.env)) if (v !== undefined) env[k] = v;
    const shell = { file: '/bin/sh', args: ['-c', `exec 2>&1\n${req.command}`] };
    const run = req.spawnAs ? req.spawnAs(shell.file, shell.args) : shell;
    const child = spawn(run.file, [...run.args], {
      cwd: req.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buf = '';
    let tail = '';
    let stopReason: 'abort' | 'timeout' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let spawnError: string | undefined;
    const pid = child.pid;
    if (pid !== undefined) {
      if (!exitHook) {
        exitHook = true;
        process.on('exit', () => {
          for (const g of liveGroups) killGroup(g, 'SIGKILL');
        });
      }
      liveGroups.add(pid);
      req.ledger?.started(pid, `sh -c ${req.command}`, req.cwd);
    }
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      tail = tailOf(tail + text, req.tailBytes);
      if (req.onLine) {
        buf += text;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          req.onLine(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
        if (buf.length > 65536) buf = buf.slice(-65536);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const stop = (reason: 'abort' | 'timeout'): void => {
      if (stopReason !== undefined || pid === undefined) return;
      stopReason = reason;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), req.graceMs);
    };
    const onAbort = (): void => stop('abort');
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => stop('timeout'), req.timeoutMs);
    child.on('error', (e) => {
      spawnError = e.message;
    });
    // 'exit' rather than 'close': a grandchild holding the pipe open must not keep us waiting.
    child.on('exit', (code, sig) => {
      if (pid !== undefined) {
        killGroup(pid, 'SIGKILL');
        liveGroups.delete(pid);
        req.ledger?.ended(pid);
      }
      clearTimeout(timer);
      if (killTimer !== undefined) clearTimeout(killTimer);
      req.signal?.removeEventListener('abort', onAbort);
      // Let already-buffered output drain before reporting.
      setImmediate(() => {
        if (req.onLine && buf.length > 0) req.onLine(buf);
        resolve({
          exitCode: code,
          signal: sig,
          ...(stopReason !== undefined ? { stopReason } : {}),
          outputTail: tail,
          durationMs: Date.now() - started,
          ...(spawnError !== undefined ? { spawnError } : {}),
        });
      });
    });
    if (pid === undefined) {
      child.once('error', (e) => {
        clearTimeout(timer);
        resolve({ exitCode: null, signal: null, outputTail: '', durationMs: Date.now() - started, spawnError: e.message });
      });
    }
  });
}
