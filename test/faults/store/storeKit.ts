// Shared by the store's fault tests: seeded randomness (printed, replayable), the built
// `ralph` CLI as a real process and in-process, an initialised project to copy, and the
// store's events read from outside.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { runCli } from '../../../src/cli/run';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { openStore } from '../../../src/store/sqlJsStore';
import type { StoredEvent } from '../../../src/store/types';
import { git } from '../../kit/git';
import { seededRandom } from '../../kit/random';

export const ROOT = path.resolve(__dirname, '../../..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');

/** Seeded randomness whose seed is printed, so a failure can be replayed. */
export interface Seeded {
  readonly seed: number;
  next(): number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
}

export function seeded(name: string): Seeded {
  const fromEnv = process.env['RALPH_FAULT_SEED'];
  const seed = fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  process.stdout.write(`      seed for ${name}: ${seed} (replay: RALPH_FAULT_SEED=${seed})\n`);
  const next = seededRandom(seed);
  return { seed, next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)] as (typeof xs)[number] };
}

export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** `ralph …` in this process (fast; the same code path as the binary from runCli on). */
export async function ralphIn(dir: string, ...argv: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const code = await runCli(['--dir', dir, ...argv], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
  return { code, out, err };
}

/** `node dist/cli.js …` as a real process. */
export function ralph(dir: string, argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, '--dir', dir, ...argv],
      { env: { ...process.env, ...env }, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, out: String(stdout), err: String(stderr) });
      },
    );
  });
}

/** Spawns `node dist/cli.js …` and hands back the process (for a running loop). */
export function spawnRalph(dir: string, argv: readonly string[]): ChildProcess {
  return spawn(process.execPath, [CLI, '--dir', dir, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
}

export function ensureBuilt(): void {
  if (!fs.existsSync(CLI)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
}

export function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `ralph-faults-${prefix}-`));
}

let template: string | undefined;

/** A git repository after `ralph init` (made once, copied for each case). */
export async function initialisedProject(into?: string): Promise<string> {
  if (!template) {
    template = tmpDir('template');
    git(template, 'init', '-q', '-b', 'main');
    git(template, 'config', 'user.email', 't@example.invalid');
    git(template, 'config', 'user.name', 'Test');
    fs.writeFileSync(path.join(template, 'README.md'), '# faults\n');
    git(template, 'add', '.');
    git(template, 'commit', '-q', '-m', 'init');
    const r = await ralphIn(template, 'init');
    if (r.code !== 0) throw new Error(`ralph init failed: ${r.err}`);
  }
  const dir = into ?? tmpDir('project');
  fs.cpSync(template, dir, { recursive: true });
  return dir;
}

/** Every event of the store in `projectDir`, read by an observer. */
export async function storeEvents(projectDir: string): Promise<StoredEvent[]> {
  const store = await openStore({ ralphDir: path.join(projectDir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.events();
  } finally {
    await store.close();
  }
}

/** Copies the .ralph files as they are now (what a kill -9 leaves: no lock, no temps). */
export function copyRalphFiles(fromProject: string, toProject: string): void {
  const from = path.join(fromProject, '.ralph');
  const to = path.join(toProject, '.ralph');
  for (const f of ['ralph.db', 'ralph.db.prev', 'ralph.events.journal']) {
    const p = path.join(from, f);
    if (fs.existsSync(p)) fs.copyFileSync(p, path.join(to, f));
    else fs.rmSync(path.join(to, f), { force: true });
  }
}

/** Pids of live processes whose command line mentions `needle` (to prove none leaked). */
export function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (cmd.includes(needle) && Number(p) !== process.pid) out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
