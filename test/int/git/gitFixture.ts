// Real temporary git repositories for the git layer's integration tests.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { git } from '../../kit/git';

export interface TempRepo {
  readonly dir: string;
  git(...args: string[]): string;
  write(path: string, content: string | Buffer): void;
  read(path: string): string;
  readBytes(path: string): Buffer;
  /** Writes files and commits them on the current branch; returns the commit. */
  commit(files: Record<string, string | Buffer>, message?: string): string;
  cleanup(): void;
}

export function makeRepo(files: Record<string, string | Buffer> = { 'README.md': '# sample\n' }): TempRepo {
  const root = mkdtempSync(join(tmpdir(), 'ralph-git-test-'));
  const dir = join(root, 'repo');
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test User');
  git(dir, 'config', 'user.email', 'test@example.com');
  git(dir, 'config', 'commit.gpgsign', 'false');
  const repo: TempRepo = {
    dir,
    git: (...args) => git(dir, ...args),
    write(path, content) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    },
    read: (path) => readFileSync(join(dir, path), 'utf8'),
    readBytes: (path) => readFileSync(join(dir, path)),
    commit(fs, message = 'commit') {
      for (const [p, c] of Object.entries(fs)) repo.write(p, c);
      git(dir, 'add', '--', ...Object.keys(fs));
      git(dir, 'commit', '-q', '-m', message);
      return git(dir, 'rev-parse', 'HEAD');
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
  repo.commit(files, 'initial');
  return repo;
}

export function writeIn(dir: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), content);
}
