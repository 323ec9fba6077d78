// `npm run bench -- startup`: the start-up a user feels first, on the production build:
//   1. the .vsix (packaged as `npm run package` does: its size, and that the CLI ships in it);
//   2. `ralph help`, and `ralph status` paired run by run with the reference's `status`: as
//      a user runs it (dist/cli.js through its shebang, served by the warm process:
//      src/cli/warmAddress.ts), in a process of its own (RALPH_CLI_SERVER=0), with the store
//      opened (without the status image its last writer kept), and as `node dist/cli.js`; in
//      wall time, in CPU time (user+sys, which a loaded machine disturbs much less; a warm
//      call's includes what the warm process spent on it) and in instructions executed
//      (callgrind: which load does not disturb at all; a call in its own process);
//   3. a mixed command sequence (claims, queue/classify/policy/promote, emits, status,
//      picks, deferral checks), paired command by command with the reference, as a user
//      runs it and each call in a process of its own;
//   3b. a write beside a running loop, which goes through the loop's inbox;
//   4. activation as VS Code itself reports it (Running Extensions) in code-server, and how
//      long the Backlog view then takes to show its rows.
// The reference is the public control plane (ahueb/evolving_ralph's .ralph/ralphctl.py),
// read from RALPH_REFERENCE or ~/.cache/ralph-loop/reference/ralphctl.py (never from this
// repository); without it a small python3 + sqlite3 script doing the same reads and writes
// stands in (the floor the reference stands on), and the output says which ran. Python is
// the real interpreter behind `python3` (a version-manager shim's own start-up is reported
// apart, not counted). Environment: RALPH_BENCH_RUNS (pairs, default 20),
// RALPH_BENCH_ACTIVATIONS (code-server sessions, default 3; 0 skips), RALPH_BENCH_NO_PACKAGE=1
// (measure dist/ as it is), RALPH_BENCH_CALLGRIND=0 (skips the instruction counts, which need
// valgrind). Prints numbers; never asserts timings.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as Harness from '../../test/e2e/harness';
import { CONTROL_PROJECTIONS } from '../../src/control/views';
import { openStore } from '../../src/store/sqlJsStore';
import { scriptedLoop } from '../../test/int/loop/sampleProject';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const VSIX = path.join(ROOT, 'dist', 'ralph-loop.vsix');
const RUNS = Number(process.env['RALPH_BENCH_RUNS'] ?? 20);
const ACTIVATIONS = Number(process.env['RALPH_BENCH_ACTIVATIONS'] ?? 3);
const TASKS = 300;
/**
 * The environment Node starts in from the CLI's shebang: NODE_EXTRA_CA_CERTS emptied
 * (src/shared/extraCaCerts.ts). The CLI runs as a user runs it, through that shebang; bare
 * `node` figures that compare with it use this environment too.
 */
const AS_SHEBANG: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: '' };
/** A `ralph` call in a process of its own, as before the warm process (src/cli/warmAddress.ts). */
const OWN_PROCESS: NodeJS.ProcessEnv = { ...process.env, RALPH_CLI_SERVER: '0' };

// ---- small helpers ----------------------------------------------------------------------

interface Timed {
  readonly out: string;
  readonly ms: number;
}

function run(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Timed {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, args, { cwd, encoding: 'utf8', env });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (${String(r.status)}): ${r.stderr}`);
  return { out: r.stdout.trim(), ms };
}

function git(cwd: string, ...args: string[]): string {
  return run('git', args, cwd).out;
}

/**
 * The pid of this build's warm process, once a call has started it and it answers: calls
 * `status` until one reports (RALPH_DEBUG) that the warm process ran it.
 */
function warmPid(repo: string): number {
  for (let i = 0; i < 200; i++) {
    const r = spawnSync(CLI, ['status'], { cwd: repo, encoding: 'utf8', env: { ...process.env, RALPH_DEBUG: '1' } });
    const m = /ran in the warm process \(pid (\d+)\)/.exec(r.stderr);
    if (m) return Number(m[1]);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  throw new Error('no warm ralph process answered');
}

/** CPU time a process has used so far, all its threads (ns, from the scheduler's accounts). */
function processCpuNs(pid: number): number {
  let ns = 0;
  for (const t of fs.readdirSync(`/proc/${pid}/task`))
    ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
  return ns;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 === 1 ? (s[(n - 1) / 2] as number) : ((s[n / 2 - 1] as number) + (s[n / 2] as number)) / 2;
}

const f0 = (x: number): string => x.toFixed(0);
const f2 = (x: number): string => x.toFixed(2);

function backlog(): string {
  const efforts = ['S', 'S', 'M', 'S', 'L', 'S'];
  const out = ['# BACKLOG', ''];
  for (let w = 0; w < TASKS / 50; w++) {
    out.push(`## Wave ${w}`, '', '| ID | Status | Title | Source | Effort | Deps |', '|----|--------|-------|--------|--------|------|');
    for (let i = 1; i <= 50; i++) {
      const id = `W${w}-${String(i).padStart(3, '0')}`;
      out.push(`| ${id} | pending | Task ${id} | ES:${w}.${i} | ${efforts[i % efforts.length]} | - |`);
    }
    out.push('');
  }
  return out.join('\n');
}

function makeRepo(name: string): string {
  const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `ralph-bench-startup-${name}-`)));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'bench@example.invalid');
  git(repo, 'config', 'user.name', 'Bench');
  fs.writeFileSync(path.join(repo, 'README.md'), '# bench\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
  fs.writeFileSync(path.join(repo, '.ralph', 'BACKLOG.md'), backlog());
  return repo;
}

/** Commits a file in `repo` and writes its patch under .ralph/commits/pending; returns [patch path, commit]. */
function commitPatch(repo: string, task: string, i: number): [string, string] {
  const file = `src/mod${i}.ts`;
  fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
  fs.writeFileSync(path.join(repo, file), `// ${task}\n`);
  git(repo, 'add', file);
  git(repo, 'commit', '-q', '-m', task);
  const rel = path.join('.ralph', 'commits', 'pending', `${task}.patch`);
  fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
  fs.writeFileSync(path.join(repo, rel), git(repo, 'format-patch', '-1', '--stdout'));
  return [rel, git(repo, 'rev-parse', 'HEAD')];
}

// ---- the other side: the reference, or the python3 + sqlite3 floor ------------------------

interface Python {
  /** The interpreter itself (sys.executable). */
  readonly exe: string;
  /** `python3` as found on PATH, when that is a different file (a pyenv/asdf shim). */
  readonly shim?: string;
}

function findPython(): Python | undefined {
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const exe = r.stdout.trim();
  const onPath = (process.env['PATH'] ?? '')
    .split(path.delimiter)
    .map((d) => path.join(d, 'python3'))
    .find((p) => fs.existsSync(p));
  const shim = onPath && fs.realpathSync(onPath) !== fs.realpathSync(exe) ? onPath : undefined;
  return { exe, ...(shim ? { shim } : {}) };
}

/** The reference's commands the sequence uses, as a tiny python3 + sqlite3 program on its schema. */
const FLOOR_PY = String.raw`import json, os, sqlite3, sys, hashlib
from datetime import datetime, timezone
d = os.environ['RALPH_DIR']
db = sqlite3.connect(os.path.join(d, 'ralph.db'))
def now(): return datetime.now(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
def emit(et, eid, ev, actor, p):
    ts = now(); i = 'evt_' + hashlib.md5((et + eid + ev + ts + actor + str(os.getpid()) + str(len(p))).encode()).hexdigest()[:12]
    db.execute('INSERT INTO events VALUES (?,?,?,?,?,?,?,?)', (i, ts, 'run', et, eid, ev, actor, json.dumps(p))); return i
c, a = sys.argv[1], sys.argv[2:]
if c == 'init':
    db.executescript("""CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, ts TEXT NOT NULL, run_id TEXT NOT NULL, entity_type TEXT NOT NULL, entity_id TEXT NOT NULL, event_type TEXT NOT NULL, actor TEXT NOT NULL, payload TEXT NOT NULL DEFAULT '{}');
    CREATE TABLE IF NOT EXISTS task_view (task_id TEXT PRIMARY KEY, status TEXT NOT NULL DEFAULT 'pending', title TEXT, source TEXT, effort TEXT, deps TEXT DEFAULT '-', wave INTEGER DEFAULT 0, risk_tier INTEGER DEFAULT 1, claimed_by TEXT, patch_id TEXT, version INTEGER DEFAULT 1, deferred_reason TEXT, deferred_at TEXT, provenance TEXT DEFAULT 'spec');
    CREATE TABLE IF NOT EXISTS patch_view (patch_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'queued', patch_path TEXT, created_by TEXT, created_at TEXT, applied_at TEXT, commit_hash TEXT);""")
    for line in open(os.path.join(d, 'BACKLOG.md')):
        p = [x.strip() for x in line.split('|')]
        if len(p) > 6 and p[1].startswith('W') and '-' in p[1]:
            db.execute('INSERT OR IGNORE INTO task_view(task_id,status,title,source,effort,deps,wave) VALUES (?,?,?,?,?,?,?)', (p[1], 'pending', p[3], p[4], p[5], p[6], int(p[1][1:p[1].index('-')])))
            emit('task', p[1], 'task.migrated', 'init', {})
elif c == 'status':
    counts = db.execute('SELECT status, COUNT(*) FROM task_view GROUP BY status ORDER BY status').fetchall()
    patches = db.execute('SELECT status, COUNT(*) FROM patch_view GROUP BY status').fetchall()
    total = db.execute('SELECT COUNT(*) FROM events').fetchone()[0]
    hour = db.execute("SELECT COUNT(*) FROM events WHERE ts > strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 hour')").fetchone()[0]
    deferred = db.execute("SELECT COUNT(*) FROM task_view WHERE status='deferred'").fetchone()[0]
    state = json.load(open(os.path.join(d, 'STATE.json'))) if os.path.exists(os.path.join(d, 'STATE.json')) else {}
    print('Tasks (%d): %s' % (sum(n for _, n in counts), ','.join('%s=%d' % r for r in counts)), patches, total, hour, deferred, state.get('phase'))
elif c == 'pick-ready-task':
    r = db.execute("SELECT task_id FROM task_view WHERE status='pending'" + (" AND effort='S'" if a[0] == 'worker' else '') + ' ORDER BY wave, task_id LIMIT 1').fetchone()
    print(r[0] if r else 'NONE')
elif c == 'transition-task':
    p = json.loads(a[3]) if len(a) > 3 else {}
    db.execute('UPDATE task_view SET status=?, claimed_by=?, version=version+1 WHERE task_id=?', (a[1], p.get('claimed_by'), a[0])); emit('task', a[0], 'task.' + a[1], a[2], p)
elif c == 'queue-patch':
    pid = 'patch_%s_%s' % (a[0], datetime.now(timezone.utc).strftime('%Y%m%d%H%M%S'))
    db.execute('INSERT INTO patch_view(patch_id,task_id,patch_path,created_by,created_at) VALUES (?,?,?,?,?)', (pid, a[0], a[1], a[2], now()))
    db.execute("UPDATE task_view SET status='proposed', patch_id=? WHERE task_id=?", (pid, a[0])); emit('patch', pid, 'patch.queued', a[2], {}); print(pid)
elif c == 'classify-risk':
    print(db.execute('SELECT risk_tier FROM task_view WHERE task_id=?', (a[0],)).fetchone()[0])
elif c == 'policy-check':
    t = db.execute('SELECT risk_tier FROM task_view WHERE task_id=?', (a[0],)).fetchone()[0]
    print(json.dumps({'decision': 'promote' if t < 2 else 'defer', 'reason': 'tier %d' % t, 'risk_tier': t}))
elif c == 'promote-patch':
    t = db.execute('SELECT task_id FROM patch_view WHERE patch_id=?', (a[0],)).fetchone()[0]
    db.execute("UPDATE patch_view SET status='promoted', commit_hash=?, applied_at=? WHERE patch_id=?", (a[1], now(), a[0]))
    db.execute("UPDATE task_view SET status='done' WHERE task_id=?", (t,)); emit('patch', a[0], 'patch.promoted', 'control_plane', {}); emit('task', t, 'task.completed', 'control_plane', {})
    print('PROMOTED %s' % a[0])
elif c == 'emit-event':
    print(emit(a[0], a[1], a[2], a[3], json.loads(a[4]) if len(a) > 4 else {}))
elif c == 'should-review-deferred':
    print('true' if db.execute("SELECT COUNT(*) FROM task_view WHERE status='deferred'").fetchone()[0] >= 3 else 'false')
elif c == 'get-deferred-queue':
    print(json.dumps(db.execute("SELECT task_id FROM task_view WHERE status='deferred' ORDER BY deferred_at").fetchall()))
db.commit()
`;

interface Other {
  /** What runs: "reference ralphctl.py (path)" or "python3 + sqlite3 floor". */
  readonly label: string;
  run(repo: string, args: readonly string[]): Timed;
}

function otherSide(py: Python, scratch: string): Other {
  const ref = process.env['RALPH_REFERENCE'] ?? path.join(os.homedir(), '.cache', 'ralph-loop', 'reference', 'ralphctl.py');
  const script = fs.existsSync(ref) ? ref : path.join(scratch, 'floor.py');
  if (script !== ref) fs.writeFileSync(script, FLOOR_PY);
  return {
    label: script === ref ? `reference ralphctl.py (${ref})` : `python3 + sqlite3 floor (no reference at ${ref})`,
    run: (repo, args) => run(py.exe, [script, ...args], repo, { ...process.env, RALPH_DIR: path.join(repo, '.ralph') }),
  };
}

// ---- 1. the .vsix ---------------------------------------------------------------------------

/** Names and sizes of a zip's entries, from its central directory. */
function zipEntries(file: string): { name: string; size: number; compressed: number }[] {
  const buf = fs.readFileSync(file);
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error(`${file}: no zip end-of-central-directory record`);
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out: { name: string; size: number; compressed: number }[] = [];
  for (let i = 0; i < count; i++) {
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    out.push({
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
      compressed: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

function vsixSection(): void {
  if (!process.env['RALPH_BENCH_NO_PACKAGE']) {
    console.log('packaging (npm run package: vsce runs build:prod first) ...');
    const r = spawnSync('npm', ['run', 'package', '--silent'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run package failed: ${r.stdout}${r.stderr}`);
  }
  if (!fs.existsSync(VSIX)) {
    console.log(`.vsix: ${VSIX} missing (RALPH_BENCH_NO_PACKAGE is set)`);
    return;
  }
  const entries = zipEntries(VSIX);
  const js = entries.filter((e) => /^extension\/dist\/[^/]+\.js$/.test(e.name));
  const biggest = [...entries].sort((a, b) => b.compressed - a.compressed).slice(0, 5);
  console.log(
    `\n.vsix: ${fs.statSync(VSIX).size} bytes (goal <= 1000000); ${entries.length} entries; ` +
      `the CLI ${entries.some((e) => e.name === 'extension/dist/cli.js') ? 'ships' : 'is MISSING'} (extension/dist/cli.js)`,
  );
  console.log(
    `  node bundles: ${js.length} files, ${js.reduce((a, e) => a + e.size, 0)} bytes, ${js.reduce((a, e) => a + e.compressed, 0)} compressed`,
  );
  for (const e of biggest) console.log(`  ${e.name.padEnd(44)} ${String(e.size).padStart(8)} -> ${String(e.compressed).padStart(7)}`);
}

// ---- 2. start-up pairs ----------------------------------------------------------------------

interface PairStats {
  readonly ours: number[];
  readonly theirs: number[];
}

function printPairs(label: string, s: PairStats): void {
  const ratios = s.ours.map((o, i) => o / (s.theirs[i] as number));
  console.log(
    `${label.padEnd(34)} ours ${f0(median(s.ours)).padStart(5)} ms   other ${f0(median(s.theirs)).padStart(5)} ms   ` +
      `ratio of medians ${f2(median(s.ours) / median(s.theirs))}   median of pair ratios ${f2(median(ratios))}`,
  );
}

/** Runs `ours` and `theirs` alternately (who goes first alternates too) `n` times. */
function pairs(n: number, ours: () => number, theirs: () => number): PairStats {
  const s: PairStats = { ours: [], theirs: [] };
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      s.ours.push(ours());
      s.theirs.push(theirs());
    } else {
      s.theirs.push(theirs());
      s.ours.push(ours());
    }
  }
  return s;
}

function startupSection(py: Python | undefined, other: Other | undefined, oursRepo: string, theirRepo: string): void {
  console.log(`\nStart-up (${RUNS} runs each, paired; wall ms, medians)`);
  const node0 = pairs(
    RUNS,
    () => run(process.execPath, ['-e', '0'], oursRepo, AS_SHEBANG).ms,
    () => (py ? run(py.exe, ['-c', '0'], oursRepo).ms : NaN),
  );
  console.log(
    `node -e 0 ${f0(median(node0.ours))} ms (as the CLI's shebang starts it); ` +
      `python3 -c 0 ${py ? `${f0(median(node0.theirs))} ms (${py.exe})` : 'not installed'}`,
  );
  if (py?.shim) {
    const shim = median(Array.from({ length: Math.min(RUNS, 10) }, () => run(py.shim as string, ['-c', '0'], oursRepo).ms));
    console.log(`  (python3 on PATH is a shim, ${py.shim}: ${f0(shim)} ms for -c 0; not used below)`);
  }
  const help = Array.from({ length: RUNS }, () => run(CLI, ['help'], oursRepo).ms);
  console.log(`ralph help ${f0(median(help))} ms (goal <= 70 ms), node -e 0 + ${f0(median(help) - median(node0.ours))} ms`);
  if (!other) return;
  warmPid(oursRepo);
  const status = pairs(
    RUNS,
    () => run(CLI, ['status'], oursRepo).ms,
    () => other.run(theirRepo, ['status']).ms,
  );
  printPairs('ralph status vs status', status);
  const own = pairs(
    RUNS,
    () => run(CLI, ['status'], oursRepo, OWN_PROCESS).ms,
    () => other.run(theirRepo, ['status']).ms,
  );
  printPairs('  same, in a process of its own', own);
  // Without the status image its last writer kept, status opens the store (sql.js, the journal).
  const image = path.join(oursRepo, '.ralph', 'ralph.db.status.json');
  const kept = fs.readFileSync(image);
  const opened = pairs(
    Math.ceil(RUNS / 2),
    () => {
      fs.rmSync(image, { force: true });
      return run(CLI, ['status'], oursRepo, OWN_PROCESS).ms;
    },
    () => other.run(theirRepo, ['status']).ms,
  );
  fs.writeFileSync(image, kept);
  printPairs('  same, the store opened (no image; own process)', opened);
  if (process.env['NODE_EXTRA_CA_CERTS']) {
    // `node dist/cli.js` bypasses the shebang that starts Node without NODE_EXTRA_CA_CERTS.
    const viaNode = pairs(
      Math.ceil(RUNS / 2),
      () => run(process.execPath, [CLI, 'status'], oursRepo, OWN_PROCESS).ms,
      () => other.run(theirRepo, ['status']).ms,
    );
    printPairs('  same, as `node dist/cli.js` (own process)', viaNode);
  }
  const noCache = pairs(
    Math.ceil(RUNS / 2),
    () => run(CLI, ['status'], oursRepo, { ...OWN_PROCESS, RALPH_NO_CODE_CACHE: '1' }).ms,
    () => other.run(theirRepo, ['status']).ms,
  );
  printPairs('  same, own process, no code cache', noCache);
}

// ---- 2b. CPU time of start-up pairs ----------------------------------------------------------

/**
 * Runs argv and returns its user+sys CPU time (ms), all its threads, as os.wait4 reports it.
 * Wall time on a shared machine measures the other tenants as much as the command; CPU time
 * moves much less with load (the reference's and ours inflate alike, so the ratio holds).
 */
const CPU_PY = String.raw`import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read()
_, st, ru = os.wait4(p.pid, 0)
code = os.waitstatus_to_exitcode(st)
if code != 0:
    sys.stderr.write(err.decode('utf8', 'replace'))
    sys.exit(code)
print('%.3f' % ((ru.ru_utime + ru.ru_stime) * 1000))`;

function cpuMs(py: Python, argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): number {
  return Number(run(py.exe, ['-c', CPU_PY, ...argv], cwd, env).out);
}

function cpuSection(py: Python, other: Other, oursRepo: string, theirRepo: string): void {
  const runs = RUNS * 2;
  console.log(`\nStart-up CPU (user+sys of the process and its threads; ${runs} runs each, paired; medians)`);
  const theirEnv = { ...process.env, RALPH_DIR: path.join(theirRepo, '.ralph') };
  const script = other.label.startsWith('reference') ? other.label.replace(/^.*\((.*)\)$/, '$1') : undefined;
  const base = pairs(
    runs,
    () => cpuMs(py, [process.execPath, '-e', '0'], oursRepo, AS_SHEBANG),
    () => cpuMs(py, [py.exe, '-c', '0'], oursRepo),
  );
  console.log(`node -e 0 ${f0(median(base.ours))} ms CPU; python3 -c 0 ${f0(median(base.theirs))} ms CPU`);
  const help = Array.from({ length: runs }, () => cpuMs(py, [CLI, 'help'], oursRepo, OWN_PROCESS));
  console.log(`ralph help ${f0(median(help))} ms CPU, node -e 0 + ${f0(median(help) - median(base.ours))} ms`);
  if (script === undefined) {
    console.log('(no reference: the CPU pairs need the reference ralphctl.py, the floor script is not a fair CPU peer)');
    return;
  }
  const status = pairs(
    runs,
    () => cpuMs(py, [CLI, 'status'], oursRepo, OWN_PROCESS),
    () => cpuMs(py, [py.exe, script, 'status'], theirRepo, theirEnv),
  );
  printPairs('ralph status vs status (CPU, own process)', status);
  console.log(
    `  above each runtime's own start: ours ${f0(median(status.ours) - median(base.ours))} ms, ` +
      `the reference's ${f0(median(status.theirs) - median(base.theirs))} ms`,
  );
  // A warm call's CPU: the calling process's, plus what the warm process spent meanwhile.
  const server = warmPid(oursRepo);
  const warm = pairs(
    runs,
    () => {
      const before = processCpuNs(server);
      const client = cpuMs(py, [CLI, 'status'], oursRepo);
      return client + (processCpuNs(server) - before) / 1e6;
    },
    () => cpuMs(py, [py.exe, script, 'status'], theirRepo, theirEnv),
  );
  printPairs('ralph status vs status (CPU, warm)', warm);
}

// ---- 2c. instructions of start-up pairs (valgrind) -------------------------------------------

/**
 * Instructions the process executes (all threads), as callgrind counts them: unlike wall or
 * CPU time this does not move with the machine's load, so it compares two builds measured
 * hours apart on a busy machine. Callgrind slows a process some 50-fold, so one run each.
 * (`perf stat -e instructions` would be cheaper, but the hardware counters are not exposed
 * in the virtual machines this runs on.) undefined when valgrind is not installed.
 */
function instructions(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  // --trace-children: the CLI's shebang runs env, which execs Node in the same process.
  const r = spawnSync('valgrind', ['--tool=callgrind', '--trace-children=yes', '--callgrind-out-file=/dev/null', ...argv], {
    cwd,
    encoding: 'utf8',
    env,
  });
  if (r.error || r.status !== 0) return undefined;
  const m = /Collected : (\d+)/.exec(r.stderr);
  return m ? Number(m[1]) : undefined;
}

function instructionsSection(py: Python, other: Other, oursRepo: string, theirRepo: string): void {
  if (process.env['RALPH_BENCH_CALLGRIND'] === '0') return;
  const mi = (n: number | undefined): string => (n === undefined ? 'n/a' : `${f0(n / 1e6)} M`);
  const node0 = instructions([process.execPath, '-e', '0'], oursRepo, AS_SHEBANG);
  if (node0 === undefined) {
    console.log('\nInstructions: skipped (valgrind not installed)');
    return;
  }
  console.log('\nStart-up instructions (valgrind --tool=callgrind, one run each; independent of load)');
  const py0 = instructions([py.exe, '-c', '0'], oursRepo);
  const help = instructions([CLI, 'help'], oursRepo);
  // A first run fills the code cache; the figure is a later one's. In a process of its own:
  // callgrind does not see what a warm process does for a call.
  run(CLI, ['status'], oursRepo, OWN_PROCESS);
  const status = instructions([CLI, 'status'], oursRepo, OWN_PROCESS);
  const script = other.label.startsWith('reference') ? other.label.replace(/^.*\((.*)\)$/, '$1') : path.join(os.tmpdir(), 'none');
  const theirs = fs.existsSync(script)
    ? instructions([py.exe, script, 'status'], theirRepo, { ...process.env, RALPH_DIR: path.join(theirRepo, '.ralph') })
    : undefined;
  console.log(`node -e 0 ${mi(node0)} (as the shebang starts it); python3 -c 0 ${mi(py0)}; ralph help ${mi(help)}`);
  console.log(
    `ralph status ${mi(status)} vs the reference's status ${mi(theirs)}: ratio ${status && theirs ? f2(status / theirs) : 'n/a'}; ` +
      `above each runtime's own start: ours ${status ? mi(status - node0) : 'n/a'}, the reference's ${theirs && py0 ? mi(theirs - py0) : 'n/a'}`,
  );
  // Node reads and parses every certificate NODE_EXTRA_CA_CERTS names at each start, before
  // any JavaScript runs (python3 does not read it): what `node dist/cli.js`, which skips the
  // shebang, pays for it.
  if (process.env['NODE_EXTRA_CA_CERTS']) {
    const node0Env = instructions([process.execPath, '-e', '0'], oursRepo);
    const statusViaNode = instructions([process.execPath, CLI, 'status'], oursRepo, OWN_PROCESS);
    console.log(
      `  NODE_EXTRA_CA_CERTS is set (${process.env['NODE_EXTRA_CA_CERTS']}): Node loads it at every start it is not emptied for, ` +
        `${node0Env ? mi(node0Env - node0) : 'n/a'}; node -e 0 ${mi(node0Env)}, \`node dist/cli.js status\` ${mi(statusViaNode)}`,
    );
  }
}

// ---- 3. the mixed sequence ------------------------------------------------------------------

/** `warm`: as a user runs it (the warm process serves the calls); `own`: each call in a process of its own. */
function mixedSection(other: Other, oursRepo: string, theirRepo: string, mode: 'warm' | 'own'): void {
  const env = mode === 'warm' ? process.env : OWN_PROCESS;
  if (mode === 'warm') warmPid(oursRepo);
  const kinds = new Map<string, PairStats>();
  let oursProcs = 0;
  let theirProcs = 0;
  const pair = (kind: string, oursArgs: string[], theirs: () => Timed[]): [string, string] => {
    let o: Timed;
    let t: Timed[];
    const first = (kinds.get(kind)?.ours.length ?? 0) % 2 === 0;
    if (first) {
      o = run(CLI, oursArgs, oursRepo, env);
      t = theirs();
    } else {
      t = theirs();
      o = run(CLI, oursArgs, oursRepo, env);
    }
    oursProcs++;
    theirProcs += t.length;
    const k = kinds.get(kind) ?? { ours: [], theirs: [] };
    k.ours.push(o.ms);
    k.theirs.push(t.reduce((a, x) => a + x.ms, 0));
    kinds.set(kind, k);
    return [o.out, t.at(-1)?.out ?? ''];
  };
  const ref = (args: string[]): Timed => other.run(theirRepo, args);
  let commands = 0;
  for (let i = 0; commands < 46; i++) {
    // The reference's pick does not claim: its claim is a pick plus a transition.
    let theirTask = '';
    const [task] = pair('claim', ['claim-ready-task', 'worker', '--owner', 'worker-b'], () => {
      const pick = ref(['pick-ready-task', 'worker']);
      theirTask = pick.out.split('\n').at(-1) ?? '';
      return [pick, ref(['transition-task', theirTask, 'claimed', 'worker-b', '{"claimed_by": "worker-b"}'])];
    });
    const [ourPatchFile, ourCommit] = commitPatch(oursRepo, task, i);
    const [theirPatchFile, theirCommit] = commitPatch(theirRepo, theirTask, i);
    const [patch, theirPatchOut] = pair('queue-patch', ['queue-patch', task, ourPatchFile, 'worker-b'], () => [
      ref(['queue-patch', theirTask, theirPatchFile, 'worker-b']),
    ]);
    const theirPatch = theirPatchOut.split(/\s+/).find((w) => w.startsWith('patch_')) ?? theirPatchOut;
    pair('classify-risk', ['classify-risk', task], () => [ref(['classify-risk', theirTask])]);
    pair('policy-check', ['policy-check', task, patch], () => [ref(['policy-check', theirTask, theirPatch])]);
    pair('promote-patch', ['promote-patch', patch, ourCommit], () => [ref(['promote-patch', theirPatch, theirCommit])]);
    pair('emit-event', ['emit-event', 'run', 'bench', 'run.tick', 'bench', `{"i":${i}}`], () => [
      ref(['emit-event', 'run', 'bench', 'run.tick', 'bench', `{"i": ${i}}`]),
    ]);
    pair('status', ['status'], () => [ref(['status'])]);
    pair('pick-ready-task', ['pick-ready-task', 'primary'], () => [ref(['pick-ready-task', 'primary'])]);
    commands += 8;
    if (i % 2 === 0) {
      pair('should-review-deferred', ['should-review-deferred'], () => [ref(['should-review-deferred'])]);
      pair('get-deferred-queue', ['get-deferred-queue', '--format', 'json'], () => [ref(['get-deferred-queue', '--format', 'json'])]);
      commands += 2;
    }
  }
  const all: PairStats = { ours: [], theirs: [] };
  for (const k of kinds.values()) {
    all.ours.push(...k.ours);
    all.theirs.push(...k.theirs);
  }
  const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
  const how = mode === 'warm' ? 'as a user runs them (the warm process)' : 'each ralph call in a process of its own';
  console.log(`\nMixed sequence, ${how}: ${commands} commands (processes: ours ${oursProcs}, other ${theirProcs}); wall ms`);
  for (const [kind, s] of [...kinds].sort()) printPairs(`  ${kind} (${s.ours.length})`, s);
  console.log(
    `whole sequence: ours ${f0(sum(all.ours))} ms (${f0(sum(all.ours) / commands)} per command), other ${f0(sum(all.theirs))} ms ` +
      `(${f0(sum(all.theirs) / commands)} per command): ratio ${f2(sum(all.ours) / sum(all.theirs))}`,
  );
}

// ---- 3b. beside a running loop ----------------------------------------------------------------

/** Runs the CLI without blocking this process's event loop (the loop it talks to runs here). */
function runAsync(args: readonly string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(CLI, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`ralph ${args.join(' ')} failed (${String(code)}): ${err}`));
      else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
    });
  });
}

/**
 * A write from the command line while a loop holds the store goes through the loop's inbox
 * (src/cli/writerAccess.ts): what a script or a person beside a running loop waits for it,
 * next to the same command with no loop running. The loop runs in this process on an empty
 * backlog, its agents the scripted claude.
 */
async function besideLoopSection(): Promise<void> {
  const repo = makeRepo('loop');
  fs.rmSync(path.join(repo, '.ralph', 'BACKLOG.md'));
  run(CLI, ['init'], repo);
  const emit = (i: number): string[] => ['emit-event', 'run', 'bench', 'run.tick', 'bench', `{"i":${i}}`];
  const n = Math.max(5, Math.ceil(RUNS / 2));
  const alone: number[] = [];
  for (let i = 0; i < n; i++) alone.push(await runAsync(emit(i), repo));
  const ralphDir = path.join(repo, '.ralph');
  const scenario = path.join(ralphDir, 'scenario.json');
  fs.writeFileSync(scenario, JSON.stringify({ scripts: [{ name: 'idle', turns: [{ text: 'nothing to do' }] }] }));
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, drainsInbox: true });
  const { loop } = scriptedLoop({ dir: repo, ralphDir, scenarioFile: scenario }, store, { workers: { count: 0 } });
  const beside: number[] = [];
  try {
    await loop.start();
    for (let i = 0; i < n; i++) beside.push(await runAsync(emit(n + i), repo));
  } finally {
    await loop.stop('bench done').catch(() => undefined);
    await store.close();
    fs.rmSync(repo, { recursive: true, force: true });
  }
  console.log(`\nBeside a running loop (${n} runs each, wall ms, median / max)`);
  console.log(`  ralph emit-event, no loop running:        ${f0(median(alone)).padStart(5)} / ${f0(Math.max(...alone))}`);
  console.log(`  ralph emit-event through the loop's inbox: ${f0(median(beside)).padStart(5)} / ${f0(Math.max(...beside))}`);
}

// ---- 4. activation in code-server ------------------------------------------------------------

async function activationSection(): Promise<void> {
  if (ACTIVATIONS <= 0) return;
  // Loaded only here: playwright-core is heavy and the other sections do not need it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const harness = require('../../test/e2e/harness') as typeof Harness;
  if (!fs.existsSync(harness.codeServerEntry) || !fs.existsSync(VSIX)) {
    console.log(`\nActivation: skipped (needs ${harness.codeServerEntry} and ${VSIX})`);
    return;
  }
  const repo = makeRepo('vscode');
  run(process.execPath, [CLI, 'init'], repo);
  const activation: number[] = [];
  const fill: number[] = [];
  try {
    for (let i = 0; i < ACTIVATIONS; i++) {
      const session = await harness.startSession(repo, { vsix: [VSIX] });
      try {
        const wb = session.workbench;
        // Composed and the store read: the status bar item shows the loop state.
        await wb
          .statusBarItem(/Ralph: /)
          .first()
          .waitFor();
        const t0 = Date.now();
        await wb.openViewContainer('Ralph', 'ralph');
        await wb.treeRows(wb.viewPane('Backlog')).first().waitFor();
        fill.push(Date.now() - t0);
        await wb.runCommand('Developer: Show Running Extensions');
        const row = wb.page.locator('.runtime-extensions-editor .monaco-list-row', { hasText: 'Ralph Loop' }).first();
        const text = await row.locator('.activation-time').innerText();
        const m = /(\d+)\s*ms/.exec(text);
        if (!m) throw new Error(`Running Extensions shows no activation time for Ralph: "${text}"`);
        activation.push(Number(m[1]));
        console.log(`  session ${i + 1}: Running Extensions "${text.trim()}", Backlog rows ${fill.at(-1)} ms after opening the view`);
      } finally {
        await session.dispose();
      }
    }
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
  }
  console.log(
    `Activation as VS Code reports it (code loading + activate call), median of ${activation.length}: ${f0(median(activation))} ms (goal <= 50 ms); ` +
      `Backlog filled ${f0(median(fill))} ms after the view opened`,
  );
}

// ---- main -----------------------------------------------------------------------------------

async function main(): Promise<void> {
  vsixSection();
  if (!fs.existsSync(CLI)) throw new Error('build first: npm run build');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-startup-'));
  const py = findPython();
  const other = py ? otherSide(py, scratch) : undefined;
  const load = os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  console.log(`\nmachine: ${os.cpus().length} cores, load average ${load}; node ${process.version}`);
  console.log(`other side: ${other ? `${other.label}, run by ${py?.exe}` : 'none (python3 not installed)'}`);
  const oursRepo = makeRepo('ours');
  const theirRepo = makeRepo('theirs');
  try {
    run(process.execPath, [CLI, 'init'], oursRepo);
    other?.run(theirRepo, ['init']);
    startupSection(py, other, oursRepo, theirRepo);
    if (py && other) cpuSection(py, other, oursRepo, theirRepo);
    if (py && other) instructionsSection(py, other, oursRepo, theirRepo);
    if (other) mixedSection(other, oursRepo, theirRepo, 'warm');
    if (other) mixedSection(other, oursRepo, theirRepo, 'own');
  } finally {
    for (const d of [oursRepo, theirRepo, scratch]) fs.rmSync(d, { recursive: true, force: true });
  }
  await besideLoopSection();
  await activationSection();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
