// The one way the engine runs `git`: a typed child-process wrapper with Ralph's git
// environment (gitEnv.ts: no hooks, no fsmonitor, no inherited redirections), byte-exact
// stdout (patches may carry non-UTF-8 content) and an error class carrying output.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
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

// RALPH_GIT_TRACE=1 prints every git command with its duration to stderr (for benchmarks).
const trace = process.env['RALPH_GIT_TRACE'] === '1';

let calls = 0;

/** How many git processes this process has started (for benchmarks). */
export function gitCallCount(): number {
  return calls;
}

/** Runs `git <args>` in `cwd`; throws GitError unless the exit code is 0 or allowed. */
export function runGit(cwd: string, args: readonly string[], options: GitRunOptions = {}): Promise<GitResult> {
  calls++;
  const started = trace ? performance.now() : 0;
  return new Promise<GitResult>((resolve, reject) => {
    const child = spawn('git', args, {
      cwd,
      env: ralphGitEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      signal: options.signal,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      reject(new GitError(args, cwd, null, Buffer.concat(out).toString('utf8'), Buffer.concat(err).toString('utf8'), e));
    });
    child.on('close', (code) => {
      const stdoutBuffer = Buffer.concat(out);
      const stdout = stdoutBuffer.toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      const exitCode = code ?? -1;
      if (exitCode === 0 || (options.allowExitCodes ?? []).includes(exitCode)) {
        resolve({ exitCode, stdout, stdoutBuffer, stderr });
      } else {
        reject(new GitError(args, cwd, exitCode, stdout, stderr));
      }
    });
    // EPIPE when git exits before reading all input is reported through 'close'.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  }).finally(() => {
    if (trace) process.stderr.write(`[git ${(performance.now() - started).toFixed(1)} ms] ${args.join(' ')}\n`);
  });
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
