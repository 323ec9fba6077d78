// The built `ralph` CLI (dist/cli.js) in a temp git repository: a realistic sequence of
// commands, then ralph.db read by a real SQLite client (python3's sqlite3) with the seed
// README's four queries.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { openStore } from '../../../src/store/sqlJsStore';
import { CONTROL_PROJECTIONS, controlContext, drainInbox } from '../../../src/control/index';
import { git } from '../../kit/git';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs a program to its end; a failure to start is a thrown error, a failing exit is not. */
function run(file: string, args: readonly string[], cwd: string): Run {
  const r = spawnSync(file, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** Its standard output, or a thrown error naming the command and its stderr. */
function runOk(file: string, args: readonly string[], cwd: string): string {
  const r = run(file, args, cwd);
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} failed (${r.code}): ${r.err}`);
  return r.out;
}

describe('ralph CLI (built) in a git repository', function () {
  this.timeout(180_000);
  let repo: string;

  function ralph(...args: string[]): Promise<Run> {
    return Promise.resolve(run('node', [CLI, ...args], repo));
  }
  async function ok(...args: string[]): Promise<string> {
    const r = await ralph(...args);
    assert.equal(r.code, 0, `ralph ${args.join(' ')} failed (${r.code}): ${r.err}`);
    return r.out;
  }
  /** Commits a change to `files` and writes its format-patch under .ralph/commits/pending. */
  function commitPatch(name: string, files: string[]): { hash: string; patch: string } {
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
      fs.appendFileSync(path.join(repo, f), `change for ${name}\n`);
    }
    git(repo, 'add', ...files);
    git(repo, 'commit', '-q', '-m', name);
    const patch = path.join('.ralph', 'commits', 'pending', `${name}.patch`);
    fs.mkdirSync(path.join(repo, path.dirname(patch)), { recursive: true });
    fs.writeFileSync(path.join(repo, patch), git(repo, 'format-patch', '-1', '--stdout') + '\n');
    return { hash: git(repo, 'rev-parse', 'HEAD'), patch };
  }
  function sqlite(sql: string): unknown[][] {
    const py = 'import sqlite3,sys,json;c=sqlite3.connect(sys.argv[1]);print(json.dumps(c.execute(sys.argv[2]).fetchall()))';
    return JSON.parse(runOk('python3', ['-c', py, path.join(repo, '.ralph', 'ralph.db'), sql], repo)) as unknown[][];
  }

  before(async () => {
    if (!fs.existsSync(CLI)) runOk('npm', ['run', 'build'], ROOT);
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-cli-'));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 't@example.invalid');
    git(repo, 'config', 'user.name', 'Test');
    fs.writeFileSync(path.join(repo, 'README.md'), '# demo\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
  });
  after(() => {
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('refuses commands before init (exit 4) and bad usage (exit 2)', async () => {
    const r = await ralph('status');
    assert.equal(r.code, 4);
    assert.match(r.err, /ralph init/);
    assert.equal((await ralph('frobnicate')).code, 2);
    assert.equal((await ralph('--dir', repo, 'pick-ready-task')).code, 2);
  });

  it('runs a realistic sequence', async () => {
    fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
    fs.writeFileSync(
      path.join(repo, '.ralph', 'BACKLOG.md'),
      [
        '# BACKLOG',
        '',
        '## Wave 0: Critical Fixes & Foundation',
        '',
        '| ID | Status | Title | Source | Effort | Deps |',
        '|----|--------|-------|--------|--------|------|',
        '| W0-001 | pending | Add greeting helper | ES:1 | S | - |',
        '| W0-002 | pending | Users migration | ES:2 | S | - |',
        '| W0-003 | planned | Docs for helper | ES:3 | S | W0-001 |',
        '',
        '## Wave 1: Core Infrastructure',
        '',
        '| ID | Status | Title | Source | Effort | Deps |',
        '|----|--------|-------|--------|--------|------|',
        '| W1-001 | pending | Secrets loader | ES:4 | M | - |',
        '',
      ].join('\n'),
    );
    // init bootstraps the project (report first) and ends with the reference's import line.
    assert.match(await ok('init'), /\nMigrated 4 items from BACKLOG\.md into SQLite\n$/);
    assert.match(await ok('init'), /\nMigrated 0 items from BACKLOG\.md into SQLite\n$/);

    // Worker claims atomically; pick-ready-task alone does not claim.
    assert.equal(await ok('pick-ready-task', 'worker'), 'W0-001\n');
    assert.equal(await ok('claim-ready-task', 'worker', '--owner', 'worker-b'), 'W0-001\n');
    assert.equal(await ok('pick-ready-task', 'worker'), 'W0-002\n');
    assert.equal(await ok('pick-ready-task', 'worker', '--exclude', 'W0-002'), 'NONE\n');

    // The risk commands read the project's risk_patterns through the config module, on use:
    // a broken one fails classify-risk naming the file, the line and the key; status still runs.
    const configFile = path.join(repo, 'ralph.config.json');
    const config = fs.readFileSync(configFile, 'utf8');
    fs.writeFileSync(configFile, JSON.stringify({ ...JSON.parse(config), risk_patterns: { tier3: 'not-a-list' } }));
    const broken = await ralph('classify-risk', 'W0-001');
    assert.notEqual(broken.code, 0);
    assert.match(broken.err, /ralph\.config\.json:1:\d+: risk_patterns\.tier3: /);
    await ok('status');
    fs.writeFileSync(configFile, config);

    // A normal patch: tier 1, promote.
    const a = commitPatch('greeting', ['src/greeting.ts']);
    const p1 = (await ok('queue-patch', 'W0-001', a.patch, 'worker-b')).trim();
    assert.match(p1, /^patch_W0-001_\d{17}$/);
    assert.equal(await ok('classify-risk', 'W0-001'), '1\n');
    assert.equal(
      await ok('policy-check', 'W0-001'),
      '{"decision": "promote", "reason": "tier 1 (normal): auto-promote after full verification", "risk_tier": 1}\n',
    );
    const bogus = await ralph('promote-patch', p1, '0123456789abcdef0123456789abcdef01234567');
    assert.equal(bogus.code, 1);
    assert.match(bogus.err, /does not exist/);
    // Done means a commit on the branch: one on a side branch is refused.
    git(repo, 'checkout', '-q', '-b', 'side');
    const side = commitPatch('side-change', ['side.txt']);
    git(repo, 'checkout', '-q', '-');
    const offBranch = await ralph('promote-patch', p1, side.hash);
    assert.equal(offBranch.code, 1);
    assert.match(offBranch.err, /not on the target branch (main|master)/);
    assert.equal(await ok('promote-patch', p1, a.hash), `PROMOTED ${p1} → W0-001 done (commit ${a.hash.slice(0, 8)})\n`);

    // done without a promoted patch is an error, from every path.
    const bad = await ralph('transition-task', 'W0-002', 'done', 'primary');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /no promoted patch/);

    // A migration: tier 2 from the files the patch touches -> deferred -> judge approves with the commit.
    await ok('transition-task', 'W0-002', 'claimed', 'primary', '{"claimed_by":"primary"}');
    const m = commitPatch('users-migration', ['db/migrations/001_users.sql']);
    const p2 = (await ok('queue-patch', 'W0-002', m.patch, 'primary')).trim();
    assert.equal(await ok('classify-risk', 'W0-002'), '2\n');
    assert.match(await ok('policy-check', 'W0-002', p2, '--apply'), /"decision": "defer"/);
    assert.equal(await ok('should-review-deferred'), 'false\n');
    assert.match(await ok('get-deferred-queue'), /^## Deferred Items for Review\n\n### W0-002: Users migration\n- Risk Tier: 2\n/);
    const q = JSON.parse(await ok('get-deferred-queue', '--format', 'json')) as { task_id: string; deferred_reason: string }[];
    assert.deepEqual(
      q.map((t) => t.task_id),
      ['W0-002'],
    );
    assert.match(
      await ok('resolve-deferred', 'W0-002', 'approve', 'judge', 'migration', 'is', 'reversible', '--commit', m.hash),
      /^RESOLVED W0-002 approve → done\n$/,
    );

    // A secret: tier 3 -> decompose; the proposal replaces the parent.
    await ok('transition-task', 'W1-001', 'claimed', 'primary');
    const s = commitPatch('secrets', ['config/.env.production']);
    await ok('queue-patch', 'W1-001', s.patch, 'primary');
    assert.match(await ok('policy-check', 'W1-001', '--apply'), /"decision": "decompose", .*"risk_tier": 3/);
    const props = path.join(repo, '.ralph', 'proposals');
    fs.mkdirSync(props, { recursive: true });
    fs.writeFileSync(
      path.join(props, 'prop_001.json'),
      JSON.stringify({
        proposal_type: 'decompose',
        confidence: 0.9,
        parent_task: 'W1-001',
        sub_tasks: [
          { id: 'W1-001a', title: 'Loader interface', effort: 'S' },
          { id: 'W1-001b', title: 'Env parsing', effort: 'S', deps: 'W1-001a' },
        ],
        rationale: 'tier 3',
      }),
    );
    fs.writeFileSync(path.join(props, 'prop_002.json'), '{"proposal_type": "new_task", "confidence": "high"}');
    fs.writeFileSync(
      path.join(props, 'prop_003.json'),
      JSON.stringify({
        proposal_type: 'new_task',
        confidence: 0.5,
        task: { id: 'W2-001', title: 'Maybe', source: 'ES:9', effort: 'S', wave: 2, deps: '-' },
        rationale: 'unsure',
      }),
    );
    const pr = await ralph('process-proposals');
    assert.equal(pr.code, 0);
    assert.equal(pr.out, '{"accepted": 1, "rejected": 1, "deferred": 1}\n');
    assert.match(pr.err, /prop_002\.json: rejected: .*confidence/);
    assert.ok(fs.readdirSync(path.join(props, 'rejected')).some((f) => /^prop_002\.\d{17}-[0-9a-f]{6}\.error\.txt$/.test(f)));

    // Identical events in the same second get distinct ids.
    const e1 = (await ok('emit-event', 'run', 'run_1', 'run.note', 'primary', '{"n":1}')).trim();
    const e2 = (await ok('emit-event', 'run', 'run_1', 'run.note', 'primary', '{"n":1}')).trim();
    assert.notEqual(e1, e2);

    // A done mark in BACKLOG.md without a promoted patch is reported, not applied.
    const backlog = path.join(repo, '.ralph', 'BACKLOG.md');
    await ok('render-backlog');
    fs.writeFileSync(backlog, fs.readFileSync(backlog, 'utf8').replace('| W0-003 | pending |', '| W0-003 | done |'));
    const sync = await ralph('sync-backlog');
    assert.equal(sync.code, 0);
    assert.match(sync.err, /W0-003: marked done in BACKLOG\.md but has no promoted patch/);
    await ok('render-backlog');
    assert.match(fs.readFileSync(backlog, 'utf8'), /\| W0-003 \| pending \| Docs for helper \| ES:3 \| S \| W0-001 \|/);

    await ok('render-state');
    const state = JSON.parse(fs.readFileSync(path.join(repo, '.ralph', 'STATE.json'), 'utf8')) as Record<string, unknown>;
    assert.deepEqual([state['commits_total'], state['items_done_count'], state['items_total_count']], [2, 2, 6]);
    assert.equal(await ok('expire-stale-deferrals'), 'Expired 0 stale deferrals\n');

    const status = await ok('status');
    const lines = status.split('\n');
    assert.equal(lines[0], '=== Ralph Loop v3 Status ===');
    assert.equal(lines[1], 'Phase: assess | Iteration: 0 | Commits: 2');
    assert.equal(lines[2], 'Current: None | Wave: 0');
    assert.equal(lines[3], 'Tasks (6): done=2,dropped=1,pending=3');
    assert.equal(lines[4], 'Patches: promoted=2,queued=1');
    assert.match(lines[5] ?? '', /^Events: (\d+) total, \1 last hour$/);
    assert.equal(lines[6], 'Deferred: 0 | Review needed: no');
    assert.match(await ok('rebuild'), /^Rebuilt task_view and patch_view from \d+ events\n$/);
    assert.equal(await ok('status'), status);
  });

  it('ralph.db answers the README queries in a real SQLite client', async () => {
    // After every command exits, ralph.db alone (no journal) holds every event.
    const facts = JSON.parse(await ok('status', '--json')) as { eventsTotal: number };
    assert.deepEqual(sqlite('SELECT COUNT(*) FROM events'), [[facts.eventsTotal]]);
    const completed = sqlite("SELECT entity_id, ts FROM events WHERE event_type='task.completed' AND ts > date('now')");
    assert.deepEqual(completed.map((r) => r[0]).sort(), ['W0-001', 'W0-002']);
    assert.deepEqual(sqlite('SELECT status, COUNT(*) FROM patch_view GROUP BY status'), [
      ['promoted', 2],
      ['queued', 1],
    ]);
    assert.deepEqual(sqlite("SELECT task_id, deferred_reason, deferred_at FROM task_view WHERE status='deferred'"), []);
    const [[n]] = sqlite("SELECT COUNT(*) FROM events WHERE ts > datetime('now', '-1 hour')") as [[number]];
    const [[total]] = sqlite('SELECT COUNT(*) FROM events') as [[number]];
    assert.ok(n > 0 && n <= total);
    const cols = sqlite('PRAGMA table_info(task_view)').map((r) => r[1]);
    assert.deepEqual(cols, [
      'task_id',
      'status',
      'title',
      'source',
      'effort',
      'deps',
      'wave',
      'risk_tier',
      'claimed_by',
      'patch_id',
      'version',
      'deferred_reason',
      'deferred_at',
      'provenance',
    ]);
    assert.deepEqual(
      sqlite(
        "SELECT name FROM sqlite_master WHERE type='index' AND tbl_name IN ('task_view','patch_view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
      ).map((r) => r[0]),
      ['idx_patch_view_status', 'idx_patch_view_task', 'idx_task_view_status', 'idx_task_view_wave'],
    );
  });

  /** Runs `ralph args…` and resolves once its stderr has a line matching `pattern` (the process keeps running). */
  function ralphUntil(pattern: RegExp, ...args: string[]): { line: Promise<void>; done: Promise<Run> } {
    const child = spawn('node', [CLI, ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const done = new Promise<Run>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve({ code: code ?? -1, out, err }));
    });
    const line = new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString('utf8');
        if (pattern.test(err)) resolve();
      });
      void done.then(() => reject(new Error(`ralph ${args.join(' ')} exited before printing ${String(pattern)}: ${err}`)));
    });
    return { line, done };
  }

  it('beside a running loop (a writer that drains the inbox): reads as an observer; writes go through its inbox and print what it applied', async () => {
    const ralphDir = path.join(repo, '.ralph');
    const writer = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, drainsInbox: true });
    try {
      assert.match(await ok('status'), /^=== Ralph Loop v3 Status ===/);
      const sent = ralphUntil(/sent to its inbox/, 'transition-task', 'W0-003', 'blocked', 'human');
      await sent.line;
      const [drained] = await drainInbox(controlContext(writer, { ralphDir, projectDir: repo }));
      assert.equal(drained?.ok, true, drained?.error);
      const r = await sent.done;
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, 'W0-003: pending -> blocked\n', 'the same line as without a loop');
      const emitted = ralphUntil(/sent to its inbox/, 'emit-event', 'note', 'n1', 'note.added', 'human');
      await emitted.line;
      await drainInbox(controlContext(writer, { ralphDir, projectDir: repo }));
      const e = await emitted.done;
      assert.match(e.out, /^evt_\d{17}_\d{6}\n$/, 'emit-event prints the id the loop gave the event');
      assert.equal(writer.events().filter((x) => x.event_id === e.out.trim()).length, 1);
      const locked = await ralph('queue-patch', 'W0-003', 'x.patch', 'w');
      assert.equal(locked.code, 3);
      assert.match(locked.err, /a running loop holds the store .* cannot go through its inbox; nothing was applied/);
    } finally {
      await writer.close();
    }
    assert.deepEqual(sqlite("SELECT status FROM task_view WHERE task_id='W0-003'"), [['blocked']]);
  });

  it('beside a loop that stops before draining its inbox, the command applies its own queued file, once', async () => {
    const ralphDir = path.join(repo, '.ralph');
    const writer = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, drainsInbox: true });
    const sent = ralphUntil(/sent to its inbox/, 'transition-task', 'W0-003', 'dropped', 'human');
    try {
      await sent.line;
    } finally {
      await writer.close();
    }
    const r = await sent.done;
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'W0-003: blocked -> dropped\n');
    assert.deepEqual(sqlite("SELECT count(*) FROM events WHERE event_type='task.dropped' AND entity_id='W0-003'"), [[1]]);
    assert.match(await ok('drain-inbox'), /^Drained 0 inbox commands/);
  });

  it('beside another short-lived writer, a command waits for the lock instead of queueing, and prints the event id', async () => {
    const ralphDir = path.join(repo, '.ralph');
    const writer = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
    const waiting = ralphUntil(/waiting for the store/, 'emit-event', 'note', 'n2', 'note.added', 'human');
    try {
      await waiting.line;
      assert.ok(
        !fs.existsSync(path.join(ralphDir, 'inbox')) || fs.readdirSync(path.join(ralphDir, 'inbox')).every((f) => !f.endsWith('.json')),
      );
    } finally {
      await writer.close();
    }
    const r = await waiting.done;
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^evt_\d{17}_\d{6}\n$/);
    assert.deepEqual(sqlite(`SELECT entity_id FROM events WHERE event_id='${r.out.trim()}'`), [['n2']]);
  });

  it('--dir works from another directory', async () => {
    const r = run('node', [CLI, '--dir', repo, 'pick-ready-task', 'primary'], os.tmpdir());
    assert.equal(r.code, 0);
    assert.match(r.out.trim(), /^(W\d-\d{3}[a-z]?|NONE)$/);
  });
});
