// Runs a gate's shell command on the shared runner (shared/runChild.ts): `/bin/sh -c` in its
// own process group, stdout and stderr merged in order, the line callback, a bounded tail,
// and an outcome instead of an error, because a failing gate is an answer the loop reads.
import type { ProcessLedgerPort } from '../shared/processLedger';
import { runChild, textTail } from '../shared/runChild';

export { tailOf } from '../shared/runChild';

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

/** Runs the command to its end; never throws for a failing or stopped command. */
export async function runShell(req: ShellRequest): Promise<ShellOutcome> {
  const shell = { file: '/bin/sh', args: ['-c', `exec 2>&1\n${req.command}`] };
  const run = req.spawnAs ? req.spawnAs(shell.file, shell.args) : shell;
  const r = await runChild({
    file: run.file,
    args: run.args,
    cwd: req.cwd,
    env: req.env,
    ...(req.signal !== undefined ? { signal: req.signal } : {}),
    timeoutMs: req.timeoutMs,
    graceMs: req.graceMs,
    maxBytes: req.tailBytes,
    mergeStderr: true,
    ...(req.onLine !== undefined ? { onLine: req.onLine, maxLineChars: 65536 } : {}),
    ...(req.ledger !== undefined ? { ledger: req.ledger, ledgerLabel: `sh -c ${req.command}` } : {}),
  });
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    ...(r.stopReason !== undefined ? { stopReason: r.stopReason } : {}),
    outputTail: textTail(r.stdout),
    durationMs: r.durationMs,
    ...(r.spawnError !== undefined ? { spawnError: r.spawnError } : {}),
  };
}
