// The one way the engine runs `git`: the shared runner (shared/runChild.ts) with Ralph's git
// environment (gitEnv.ts: no hooks, no fsmonitor, no inherited redirections), byte-exact
// stdout (patches may carry non-UTF-8 content) and an error class carrying output.
import { ChildFailed, runChild } from '../shared/runChild';
import { monotonicMs } from '../shared/clock';
import { ralphGitEnv } from './gitEnv';

/** A git command exited with a status the caller did not allow, or could not start. */
export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    readonly args: readonly string[],
    readonly cwd: string,
    readonly exitCode: number | null,
    readonly stdout: string,
    readonly stderr: string,
    cause?: unknown,
  ) {
    super(
      `git ${args.join(' ')} (in ${cwd}) failed` +
        (exitCode === null ? '' : ` with exit code ${exitCode}`) +
        (stderr.trim() === '' ? '' : `: ${stderr.trim().split('\n').slice(0, 5).join(' | ')}`),
      cause === undefined ? undefined : { cause },
    );
  }
}

export interface GitRunOptions {
  /** Extra environment entries (e.g. GIT_INDEX_FILE); `undefined` removes an inherited one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Bytes written to stdin. */
  readonly input?: string | Buffer;
  /** Exit codes that are answers rather than failures (0 is always allowed). */
  readonly allowExitCodes?: readonly number[];
  readonly signal?: AbortSignal;
}

export interface GitResult {
  readonly exitCode: number;
  /** stdout decoded as UTF-8. */
  readonly stdout: string;
  /** stdout exactly as git wrote it. */
  readonly stdoutBuffer: Buffer;
  readonly stderr: string;
}

// RALPH_GIT_TRACE=1 prints every git command with its start (monotonicMs) and duration to
// stderr, for benchmarks: with RALPH_BENCH_TIMELINE=1 (scripts/bench/loop.ts) a timeline.
const trace = process.env['RALPH_GIT_TRACE'] === '1';

let calls = 0;

/** How many git processes this process has started (for benchmarks). */
export function gitCallCount(): number {
  return calls;
}

/** Runs `git <args>` in `cwd`; throws GitError unless the exit code is 0 or allowed. */
export async function runGit(cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<GitResult> {
  calls++;
  const started = trace ? monotonicMs() : 0;
  try {
    const r = await runChild({
      file: 'git',
      args,
      cwd,
      env: ralphGitEnv(options.env),
      stdin: options.input ?? '',
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      // Patches and blobs are read whole.
      maxBytes: Infinity,
      // In the caller's process group, as git always ran: a host killed together with its
      // group mid-promotion takes its git along (test/int/git/crash.int.test.ts relies on it).
      ownGroup: false,
      throwOnError: true,
      ...(options.allowExitCodes !== undefined ? { allowExitCodes: options.allowExitCodes } : {}),
    });
    return { exitCode: r.exitCode ?? -1, stdout: r.stdout.toString('utf8'), stdoutBuffer: r.stdout, stderr: r.stderr.toString('utf8') };
  } catch (e) {
    if (!(e instanceof ChildFailed)) throw e;
    const { result } = e;
    // A git that was stopped or never started has no exit code; one killed by a signal
    // from elsewhere reads as -1.
    const exitCode = result.stopReason !== undefined || result.spawnError !== undefined ? null : (result.exitCode ?? -1);
    throw new GitError(
      args,
      cwd,
      exitCode,
      result.stdout.toString('utf8'),
      result.stderr.toString('utf8'),
      exitCode === null ? e : undefined,
    );
  } finally {
    if (trace) process.stderr.write(`[git @${started.toFixed(0)} ${(monotonicMs() - started).toFixed(1)} ms] ${args.join(' ')}\n`);
  }
}

/** Runs git and returns stdout without the trailing newline. */
export async function gitOut(cwd: string, args: readonly string[], options?: GitRunOptions): Promise<string> {
  return (await runGit(cwd, args, options)).stdout.replace(/\n$/, '');
}

/** Splits NUL-separated git output (`-z`), dropping the empty tail. */
export function splitNul(s: string): string[] {
  const parts = s.split('\0');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}
