// git for tests, in one place: a fixed identity (a test machine may have none configured),
// no prompts, and a failure thrown with git's own stderr. Ralph's engine never uses this:
// it has its own runner with its own safety environment (src/git/exec.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Who the tests' own commits are by, unless a repository's config is given on the command line. */
export const TEST_IDENTITY = { name: 'Ralph Test', email: 'test@ralph.invalid' } as const;

export interface TestGitOptions {
  /** Extra environment entries for this git process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Bytes written to git's stdin. */
  readonly input?: string | Buffer;
}

/** A git command of a test failed: its arguments, where, and what git said. */
export class TestGitError extends Error {
  override readonly name = 'TestGitError';
  constructor(
    readonly args: readonly string[],
    readonly cwd: string,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} (in ${cwd}) failed: ${stderr.trim()}`);
  }
}

/** git's stdout exactly as written: for a diff that becomes a patch, whose last newline matters. */
export function gitRaw(cwd: string, args: readonly string[], options: TestGitOptions = {}): string {
  try {
    return execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.input !== undefined ? { input: options.input } : {}),
      env: {
        ...process.env,
        GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: TEST_IDENTITY.name,
        GIT_AUTHOR_EMAIL: TEST_IDENTITY.email,
        GIT_COMMITTER_NAME: TEST_IDENTITY.name,
        GIT_COMMITTER_EMAIL: TEST_IDENTITY.email,
        ...options.env,
      },
    });
  } catch (e) {
    const stderr = (e as { stderr?: unknown }).stderr;
    throw new TestGitError(args, cwd, typeof stderr === 'string' && stderr !== '' ? stderr : String(e));
  }
}

/** Runs `git <args>` in `cwd`; its stdout without trailing whitespace (a status line's leading space kept). */
export function git(cwd: string, ...args: string[]): string {
  return gitRaw(cwd, args).trimEnd();
}

export interface TempGitRepo {
  /** Its real path (a temp folder may be reached through a link, and processes report real cwds). */
  readonly dir: string;
  cleanup(): void;
}

/**
 * A temporary git repository on `main` with `files` in one commit. With `identity`, the
 * repository's own config names a user, so what Ralph commits there is by that user
 * rather than by Ralph's fallback identity.
 */
export function makeTempGitRepo(
  files: Readonly<Record<string, string>> = { 'README.md': '# temp\n' },
  options: { readonly prefix?: string; readonly identity?: boolean } = {},
): TempGitRepo {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), options.prefix ?? 'ralph-test-repo-')));
  git(dir, 'init', '-q', '-b', 'main');
  if (options.identity === true) {
    git(dir, 'config', 'user.email', TEST_IDENTITY.email);
    git(dir, 'config', 'user.name', TEST_IDENTITY.name);
  }
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Puts a `git` first on PATH for this process and its children: a shell script that runs
 * the lines `before(real)` returns (`$@` are git's arguments, `real` the real git's path)
 * and then the real git. Returns the undo.
 */
export function wrapGitOnPath(before: (real: string) => readonly string[]): () => void {
  const bin = mkdtempSync(join(tmpdir(), 'ralph-wrapped-git-'));
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(join(bin, 'git'), `${['#!/bin/sh', ...before(real), `exec ${real} "$@"`].join('\n')}\n`, { mode: 0o755 });
  const path = process.env['PATH'];
  process.env['PATH'] = `${bin}:${path ?? ''}`;
  return () => {
    process.env['PATH'] = path;
    rmSync(bin, { recursive: true, force: true });
  };
}
