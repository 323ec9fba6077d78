// Benchmark of the git layer: capture + promote of a 10-file patch in a repository of about
// 2,000 files, with the target branch checked out in the user's checkout (the common case)
// and not checked out (ref only). Prints numbers; never asserts timings.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { capturePatch } from '../../src/git/capture';
import { gitCallCount, runGit } from '../../src/git/exec';
import { promotePatch } from '../../src/git/promote';
import { ensureWorktree } from '../../src/git/worktrees';

const FILES = 2000;
const CHANGED = 10;
const ROUNDS = 8;

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

function write(dir: string, path: string, content: string): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), content);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function run(checkedOut: boolean): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ralph-bench-git-'));
  const repo = join(root, 'repo');
  mkdirSync(repo);
  try {
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.name', 'Bench');
    git(repo, 'config', 'user.email', 'bench@example.com');
    for (let i = 0; i < FILES; i++) {
      write(repo, `src/m${i % 40}/file${i}.ts`, `export const v${i} = ${i};\n`.repeat(20));
    }
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    if (!checkedOut) git(repo, 'switch', '-q', '-c', 'elsewhere');
    const capture: number[] = [];
    const promote: number[] = [];
    let spawnsCapture = 0;
    let spawnsPromote = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const wt = await ensureWorktree(repo, { name: 'bench', branch: 'main' });
      for (let k = 0; k < CHANGED; k++) {
        const i = r * 97 + k * 13;
        if (k < 8) write(wt.path, `src/m${i % 40}/file${i}.ts`, `export const v${i} = ${i + r + 1};\n`.repeat(20));
        else write(wt.path, `src/new/r${r}_${k}.ts`, `export const n = ${k};\n`);
      }
      const c0 = gitCallCount();
      const t0 = performance.now();
      const cap = await capturePatch(wt.path, wt.base, join(root, `p${r}.patch`));
      const t1 = performance.now();
      const c1 = gitCallCount();
      const res = await promotePatch(repo, { branch: 'main', patchFile: cap.path, message: `ralph(B-${r}): bench` });
      const t2 = performance.now();
      spawnsCapture = c1 - c0;
      spawnsPromote = gitCallCount() - c1;
      if (res.status !== 'promoted') throw new Error(`round ${r}: ${JSON.stringify(res)}`);
      capture.push(t1 - t0);
      promote.push(t2 - t1);
    }
    const label = checkedOut ? 'branch checked out in the user checkout' : 'branch not checked out (ref only)';
    console.log(
      `git capture+promote, ${FILES} files, ${CHANGED}-file patch, ${label}: ` +
        `capture median ${median(capture).toFixed(1)} ms, promote median ${median(promote).toFixed(1)} ms, ` +
        `total median ${median(capture.map((c, i) => c + (promote[i] ?? 0))).toFixed(1)} ms (${ROUNDS} rounds); ` +
        `git processes: capture ${spawnsCapture}, promote ${spawnsPromote}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * This process's own CPU per git call (spawn, pipes, the runner's bookkeeping), which the
 * machine's load barely moves, unlike the wall times above.
 */
async function runnerCpu(): Promise<void> {
  const repo = mkdtempSync(join(tmpdir(), 'ralph-bench-git-cpu-'));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, '-c', 'user.name=B', '-c', 'user.email=b@example.com', 'commit', '-q', '--allow-empty', '-m', 'x');
  try {
    const calls = 200;
    for (let i = 0; i < 10; i++) await runGit(repo, ['rev-parse', 'HEAD']);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await runGit(repo, ['rev-parse', 'HEAD']);
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    console.log(
      `git runner: ${calls} calls of rev-parse, this process's CPU ${((cpu.user + cpu.system) / calls / 1000).toFixed(2)} ms per call, ` +
        `wall ${(wall / calls).toFixed(2)} ms per call`,
    );
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  await run(true);
  await run(false);
  await runnerCpu();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
