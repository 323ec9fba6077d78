// The one typed wrapper around agent child processes: spawned detached in a process group
// of their own, stdout delivered line by line, a bounded stderr tail, and one stop path
// (abort signal or timeout -> SIGTERM to the group, grace period, SIGKILL). When the
// agent exits, whatever it left running in its group is killed too, so no run leaves a
// child process behind, and the wait never hangs on a grandchild holding stdout open.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { groupAlive, signalGroup } from '../shared/process';
import type { ProcessLedgerPort } from '../shared/processLedger';

/** Read through a call: TypeScript would keep the narrowing of the early check across awaits. */
const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

export interface ProcessRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The complete environment of the child (no implicit inheritance). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Written to stdin, then stdin is closed. */
  readonly input: string;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** Time between SIGTERM and SIGKILL; default 5 s. */
  readonly graceMs?: number;
  /** Bytes of stderr kept; default 4096. */
  readonly stderrTailBytes?: number;
  readonly onStdoutLine?: (line: string) => void;
  /** Told when the group starts and ends, so a killed host's next run can reap it. */
  readonly ledger?: ProcessLedgerPort;
}

export interface ProcessOutcome {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Set when the wrapper stopped the process. */
  readonly stopReason?: 'abort' | 'timeout';
  readonly stderrTail: string;
  readonly durationMs: number;
  /** A spawn failure (binary missing, bad cwd): the process never ran. */
  readonly spawnError?: string;
}

export const DEFAULT_GRACE_MS = 5000;

// Groups still alive, killed when this Node process exits (detached children would
// otherwise outlive the host).
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const g of liveGroups) killGroup(g, 'SIGKILL');
    });
  }
  liveGroups.add(pid);
}

/** Signals a whole process group; a group that is already gone is not an error. */
export const killGroup = signalGroup;
export { groupAlive };

/** Runs a process to its end; never throws for a failing or stopped process. */
export async function runProcess(req: ProcessRequest): Promise<ProcessOutcome> {
  const started = Date.now();
  const graceMs = req.graceMs ?? DEFAULT_GRACE_MS;
  const tailBytes = req.stderrTailBytes ?? 4096;
  if (req.signal?.aborted === true) {
    return { exitCode: null, signal: null, stopReason: 'abort', stderrTail: '', durationMs: 0 };
  }

  const child = spawn(req.file, [...req.args], {
    cwd: req.cwd,
    // The complete environment: spawn passes nothing else (undefined values are left out).
    env: req.env as NodeJS.ProcessEnv,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Settles once: on 'close' (the process ended and its pipes closed) or on a spawn failure.
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => {
      if (child.pid === undefined) resolve({ code: null, signal: null, error });
    });
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  // A child that exits without reading its input closes the pipe: not an error of ours.
  child.stdin.on('error', () => undefined);
  child.stdin.end(req.input);

  let stderrTail = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-tailBytes);
  });
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  lines.on('line', (line) => req.onStdoutLine?.(line));
  const linesDone = new Promise<void>((resolve) => lines.on('close', () => resolve()));

  const pid = child.pid;
  let stopReason: 'abort' | 'timeout' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (reason: 'abort' | 'timeout'): void => {
    if (stopReason !== undefined || pid === undefined) return;
    stopReason = reason;
    killGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
  };
  const onAbort = (): void => stop('abort');
  req.signal?.addEventListener('abort', onAbort, { once: true });
  // A stop that arrived while the child was spawning fired no listener.
  if (isAborted(req.signal)) stop('abort');
  const timeoutTimer = req.timeoutMs !== undefined ? setTimeout(() => stop('timeout'), req.timeoutMs) : undefined;

  if (pid !== undefined) {
    trackGroup(pid);
    req.ledger?.started(pid, req.file, req.cwd);
    // The leader's exit ends the run: kill what it left in its group so stdout closes.
    child.once('exit', () => {
      killGroup(pid, 'SIGKILL');
      liveGroups.delete(pid);
    });
  }

  const result = await ended;
  if (result.error === undefined) await linesDone;
  if (timeoutTimer !== undefined) clearTimeout(timeoutTimer);
  if (killTimer !== undefined) clearTimeout(killTimer);
  req.signal?.removeEventListener('abort', onAbort);
  if (pid !== undefined) {
    killGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
    req.ledger?.ended(pid);
  }

  const spawnError = result.error?.message;
  return {
    exitCode: result.code,
    signal: result.signal,
    ...(stopReason !== undefined ? { stopReason } : {}),
    stderrTail: spawnError !== undefined && stderrTail.length === 0 ? spawnError.slice(-tailBytes) : stderrTail,
    durationMs: Date.now() - started,
    ...(spawnError !== undefined ? { spawnError } : {}),
  };
}
