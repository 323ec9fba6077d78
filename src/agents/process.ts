// Agent child processes on the shared runner (shared/runChild.ts): the prompt on stdin,
// stdout line by line, a bounded stderr tail, and an outcome instead of an error, because
// a failing agent is an answer the loop reads.
import { groupAlive, signalGroup } from '../shared/process';
import type { ProcessLedgerPort } from '../shared/processLedger';
import { DEFAULT_GRACE_MS, runChild, textTail } from '../shared/runChild';
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

export { DEFAULT_GRACE_MS };

/** Signals a whole process group; a group that is already gone is not an error. */
export const killGroup = signalGroup;
export { groupAlive };

/** Runs a process to its end; never throws for a failing or stopped process. */
export async function runProcess(req: ProcessRequest): Promise<ProcessOutcome> {
  const tailBytes = req.stderrTailBytes ?? 4096;
  const r = await runChild({
    file: req.file,
    args: req.args,
    cwd: req.cwd,
    env: req.env,
    stdin: req.input,
    ...(req.signal !== undefined ? { signal: req.signal } : {}),
    ...(req.timeoutMs !== undefined ? { timeoutMs: req.timeoutMs } : {}),
    graceMs: req.graceMs ?? DEFAULT_GRACE_MS,
    maxBytes: tailBytes,
    ...(req.onStdoutLine !== undefined ? { onLine: req.onStdoutLine } : {}),
    ...(req.ledger !== undefined ? { ledger: req.ledger } : {}),
  });
  const stderrTail = textTail(r.stderr);
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    ...(r.stopReason !== undefined ? { stopReason: r.stopReason } : {}),
    stderrTail: r.spawnError !== undefined && stderrTail.length === 0 ? r.spawnError.slice(-tailBytes) : stderrTail,
    durationMs: r.durationMs,
    ...(r.spawnError !== undefined ? { spawnError: r.spawnError } : {}),
  };
}
