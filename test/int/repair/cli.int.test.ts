// `ralph init` and `ralph repair` as a built CLI in child processes. When dist/cli.js
// already dispatches them it is used; until then the test bundles the same dispatch
// (init/repair to src/cli/projectCommands.ts, the rest to runCli) with esbuild, wasm
// beside the bundle as in dist/.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as fsSync from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as Esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '../../..');

const SHIM = `
import { runCli } from ${JSON.stringify(path.join(ROOT, 'src/cli/run'))};
import { runInitCommand, runRepairCommand } from ${JSON.stringify(path.join(ROOT, 'src/cli/projectCommands'))};
const argv = process.argv.slice(2);
let cwd = process.cwd();
const rest: string[] = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i] as string;
  if (a === '--dir') cwd = argv[++i] as string;
  else rest.push(a);
}
const [name, ...args] = rest;
const io = { stdout: (t: string) => void process.stdout.write(t), stderr: (t: string) => void process.stderr.write(t) };
const run = name === 'init' ? runInitCommand(args, io, { cwd }) : name === 'repair' ? runRepairCommand(args, io, { cwd }) : runCli(argv);
run.then((code) => { process.exitCode = code; });
`;

async function cliPath(tmp: string): Promise<string> {
  const dist = path.join(ROOT, 'dist/cli.js');
  if (fsSync.existsSync(dist)) {
    const help = spawnSync(process.execPath, [dist, 'repair', '--help'], { encoding: 'utf8' });
    if (help.status === 0 && /Usage: ralph repair/.test(help.stdout)) return dist;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof Esbuild;
  const entry = path.join(tmp, 'shim.ts');
  await fs.writeFile(entry, SHIM);
  const out = path.join(tmp, 'cli.js');
  await esbuild.build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'silent',
    nodePaths: [path.join(ROOT, 'node_modules')],
  });
  await fs.copyFile(require.resolve('sql.js/dist/sql-wasm.wasm'), path.join(tmp, 'sql-wasm.wasm'));
  return out;
}

function run(cli: string, args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid ?? assert.fail('no pid');
  await new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return pid;
}

describe('ralph init / repair as a built CLI (child processes)', function () {
  this.timeout(180_000);
  let tmp: string;
  let dir: string;
  let cli: string;

  before(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-cli-build-'));
    cli = await cliPath(tmp);
  });
  after(async () => fs.rm(tmp, { recursive: true, force: true }));
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-cli-repair-'));
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('init end to end: ralph.db for python sqlite3, BACKLOG.md imported, then repair finds, fixes and exits by what remains', async () => {
    await fs.writeFile(path.join(dir, 'pyproject.toml'), '[project]\nname = "demo"\n');
    await fs.mkdir(path.join(dir, '.ralph'));
    await fs.writeFile(
      path.join(dir, '.ralph/BACKLOG.md'),
      '# BACKLOG\n\n## Wave 1: Core Infrastructure\n\n| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n| A-1 | planned | One | spec | S | - |\n| A-2 | in_progress | Two | spec | M | A-1 |\n',
    );
    const init = run(cli, ['--dir', dir, 'init', '--git-init']);
    assert.equal(init.code, 0, init.err);
    assert.match(init.out, /Language: python \(detected from pyproject\.toml\)/);
    assert.match(init.out, /^Migrated 2 items from BACKLOG\.md into SQLite$/m);
    const py =
      'import sqlite3,sys,json;c=sqlite3.connect(sys.argv[1]);print(json.dumps(c.execute("SELECT task_id, status, wave FROM task_view ORDER BY task_id").fetchall()))';
    assert.deepEqual(JSON.parse(execFileSync('python3', ['-c', py, path.join(dir, '.ralph/ralph.db')], { encoding: 'utf8' })), [
      ['A-1', 'pending', 1],
      ['A-2', 'pending', 1],
    ]);

    const clean = run(cli, ['--dir', dir, 'repair']);
    assert.equal(clean.code, 0, clean.out + clean.err);

    const pid = await deadPid();
    const now = new Date().toISOString();
    await fs.writeFile(
      path.join(dir, '.ralph/locks/writer.lock'),
      JSON.stringify({ pid, host: os.hostname(), started: now, heartbeat: now, runId: 'run_gone' }),
    );
    await fs.rm(path.join(dir, '.ralph/phases/reflect.md'));
    const check = run(cli, ['--dir', dir, 'repair']);
    assert.equal(check.code, 1);
    assert.match(check.out, /FAIL files\.phase: \.ralph\/phases\/reflect\.md is missing/);
    assert.match(check.out, /FAIL locks\.stale/);
    assert.match(check.out, /2 problem\(s\); `ralph repair --fix` repairs what it can/);

    const fix = run(cli, ['--dir', dir, 'repair', '--fix']);
    assert.equal(fix.code, 0, fix.out + fix.err);
    assert.match(fix.out, /init: created \.ralph\/phases\/reflect\.md/);
    assert.match(fix.out, new RegExp(`lock: took over the writer lock of pid ${pid}`));
    assert.match(fix.out, /After fixing: every check passes/);

    const json = run(cli, ['--dir', dir, 'repair', '--json']);
    assert.equal(json.code, 0);
    const report = JSON.parse(json.out) as { ok: boolean; findings: { check: string; status: string }[]; actions: unknown[] };
    assert.equal(report.ok, true);
    assert.ok(report.findings.some((f) => f.check === 'views.rebuild' && f.status === 'ok'));

    const usage = run(cli, ['--dir', dir, 'repair', '--frobnicate']);
    assert.equal(usage.code, 2);
    assert.match(usage.err, /Usage: ralph repair/);
  });
});
