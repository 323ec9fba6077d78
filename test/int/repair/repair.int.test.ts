// `ralph repair` on real projects: each problem it knows is made for real (files, a dead
// process's lock, a view row written behind the store's back with python's sqlite3, a
// torn journal), found, fixed through the control plane's commands, and checked again.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore } from '../../../src/store/sqlJsStore';
import { JOURNAL_FILE, encodeRecord } from '../../../src/store/journal';
import type { EventStore, StoredEvent } from '../../../src/store/types';
import { CONTROL_PROJECTIONS, getTask } from '../../../src/control/views';
import { controlContext, type ControlContext } from '../../../src/control/context';
import { claimReadyTask, transitionTask } from '../../../src/control/tasks';
import { promotePatch, queuePatch } from '../../../src/control/patches';
import { renderBacklogFile, renderState } from '../../../src/control/derived';
import { cliGitPort } from '../../../src/cli/gitPort';
import { runInitCommand, runRepairCommand } from '../../../src/cli/projectCommands';
import { checkProject, runRepair, type RepairReport } from '../../../src/project/repair';
import type { Finding } from '../../../src/project/repair';
import { processStartTicks } from '../../../src/shared/processLedger';

const BACKLOG = `# BACKLOG

## Wave 0: Critical Fixes & Foundation

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| T-001 | pending | First task | spec | S | - |
| T-002 | pending | Second task | spec | S | - |
| T-003 | pending | Third task | spec | M | T-001 |
`;

interface Captured {
  out: string;
  err: string;
  io: { stdout(t: string): void; stderr(t: string): void };
}

function capture(): Captured {
  const c: Captured = {
    out: '',
    err: '',
    io: {
      stdout: (t) => void (c.out += t),
      stderr: (t) => void (c.err += t),
    },
  };
  return c;
}

/** The pid of a process that has exited (waited for, not guessed). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid ?? assert.fail('no pid');
  await new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return pid;
}

function sqlite(db: string, sql: string): unknown[][] {
  const py = 'import sqlite3,sys,json;c=sqlite3.connect(sys.argv[1]);r=c.execute(sys.argv[2]).fetchall();c.commit();print(json.dumps(r))';
  return JSON.parse(execFileSync('python3', ['-c', py, db, sql], { encoding: 'utf8' })) as unknown[][];
}

const problems = (fs_: readonly Finding[]): string[] => fs_.filter((f) => f.status === 'fail').map((f) => f.check);

describe('ralph repair (real projects, real stores)', function () {
  this.timeout(120_000);
  let dir: string;
  let ralphDir: string;

  async function withWriter<T>(fn: (ctx: ControlContext, store: EventStore) => Promise<T>): Promise<T> {
    const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      return await fn(controlContext(store, { ralphDir, projectDir: dir, git: cliGitPort(dir) }), store);
    } finally {
      await store.close();
    }
  }

  async function events(filter: { entityId?: string } = {}): Promise<StoredEvent[]> {
    const store = await openStore({ ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      return store.events(filter.entityId ? { entityType: 'task', entityId: filter.entityId } : {});
    } finally {
      await store.close();
    }
  }

  async function taskStatus(id: string): Promise<string | undefined> {
    const store = await openStore({ ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      return getTask(store, id)?.status;
    } finally {
      await store.close();
    }
  }

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-repair-int-'));
    ralphDir = path.join(dir, '.ralph');
    await fs.writeFile(path.join(dir, 'go.mod'), 'module example.com/x\n');
    await fs.mkdir(ralphDir);
    await fs.writeFile(path.join(ralphDir, 'BACKLOG.md'), BACKLOG);
    const c = capture();
    assert.equal(await runInitCommand(['--name', 'demo', '--git-init'], c.io, { cwd: dir }), 0, c.err);
    assert.match(c.out, /^Migrated 3 items from BACKLOG\.md into SQLite$/m);
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it("given init with a BACKLOG.md, then ralph.db opens in python sqlite3 with the rows, Ralph's files are committed (the user's go.mod is not), and repair finds nothing", async () => {
    const db = path.join(ralphDir, 'ralph.db');
    assert.deepEqual(sqlite(db, 'SELECT task_id, status FROM task_view ORDER BY task_id'), [
      ['T-001', 'pending'],
      ['T-002', 'pending'],
      ['T-003', 'pending'],
    ]);
    assert.deepEqual(sqlite(db, "SELECT COUNT(*) FROM events WHERE event_type = 'task.migrated'"), [[3]]);
    assert.deepEqual(sqlite(db, 'PRAGMA integrity_check'), [['ok']]);
    // Ralph committed only its own files; the user's go.mod is theirs to commit. BACKLOG.md is a derived view: ignored.
    assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }), '?? go.mod\n');
    const c = capture();
    assert.equal(await runRepairCommand([], c.io, { cwd: dir }), 0, c.out);
    assert.match(c.out, /No problems/);
    // A second init imports nothing and changes nothing.
    const again = capture();
    assert.equal(await runInitCommand([], again.io, { cwd: dir }), 0, again.err);
    assert.match(again.out, /Migrated 0 items from BACKLOG\.md into SQLite/);
    assert.match(again.out, /Created: nothing \(already initialized\)/);
  });

  it('given a live writer holding the store, then init still completes the files and says the import waits (exit 3)', async () => {
    const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      const c = capture();
      assert.equal(await runInitCommand([], c.io, { cwd: dir }), 3);
      assert.match(c.out, /Created: nothing \(already initialized\)/);
      assert.match(c.err, /BACKLOG\.md not imported: The Ralph event store is locked by another writer: pid \d+/);
    } finally {
      await store.close();
    }
  });

  it('given a folder without git and no terminal to ask, then init exits 1 naming --git-init and writes nothing', async () => {
    const bare = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-init-nogit-'));
    try {
      const c = capture();
      assert.equal(await runInitCommand([], c.io, { cwd: bare, confirm: undefined }), 1);
      assert.match(c.err, /is not a git repository[\s\S]*ralph init --git-init/);
      assert.deepEqual(await fs.readdir(bare), []);
      const asked: string[] = [];
      const no = capture();
      const refuse = async (q: string): Promise<boolean> => (asked.push(q), false);
      assert.equal(await runInitCommand([], no.io, { cwd: bare, confirm: refuse }), 1);
      assert.match(asked[0] ?? '', /Initialize one and commit only Ralph's own files/);
      assert.deepEqual(await fs.readdir(bare), []);
      const yes = capture();
      assert.equal(await runInitCommand([], yes.io, { cwd: bare, confirm: async () => true }), 0, yes.err);
      assert.match(yes.out, /Git: initialized a repository/);
    } finally {
      await fs.rm(bare, { recursive: true, force: true });
    }
  });

  it('given init usage errors, then exit 2 with the usage line', async () => {
    const c = capture();
    assert.equal(await runInitCommand(['--bogus'], c.io, { cwd: dir }), 2);
    assert.match(c.err, /unknown argument '--bogus'[\s\S]*Usage: ralph init/);
    const r = capture();
    assert.equal(await runRepairCommand(['--fxi'], r.io, { cwd: dir }), 2);
    assert.match(r.err, /Usage: ralph repair/);
  });

  it('given a stale writer lock of a dead pid, then reported (exit 1), taken over with an event by --fix (exit 0)', async () => {
    const pid = await deadPid();
    const now = new Date().toISOString();
    await fs.writeFile(
      path.join(ralphDir, 'locks/writer.lock'),
      JSON.stringify({ pid, host: os.hostname(), started: now, heartbeat: now, runId: 'run_dead' }),
    );
    const check = capture();
    assert.equal(await runRepairCommand([], check.io, { cwd: dir }), 1);
    assert.match(check.out, new RegExp(`FAIL locks\\.stale: \\.ralph/locks/writer\\.lock is held by pid ${pid}, which is not running`));
    const fix = capture();
    assert.equal(await runRepairCommand(['--fix'], fix.io, { cwd: dir }), 0, fix.out);
    assert.match(fix.out, new RegExp(`lock: took over the writer lock of pid ${pid} on ${os.hostname()} \\(pid_dead; event `));
    const takeovers = (await events()).filter((e) => e.event_type === 'lock.taken_over');
    assert.equal(takeovers.length, 1);
    assert.equal((takeovers[0]?.payload['previous'] as { runId: string }).runId, 'run_dead');
    await assert.rejects(fs.access(path.join(ralphDir, 'locks/writer.lock')));
  });

  it('given a claim left by a dead run, then reported and released to pending by a transition event with a reason', async () => {
    await withWriter(async (ctx) => {
      const t = await claimReadyTask(ctx, 'worker', 'worker-1');
      assert.equal(t?.task_id, 'T-001');
    });
    const before = await runRepair({ projectDir: dir, fix: false });
    // The claim was not rendered into STATE.json either: its pending count is stale too.
    assert.deepEqual(problems(before.findings).sort(), ['state.counts', 'tasks.stuck_claim']);
    assert.match(
      before.findings.find((f) => f.check === 'tasks.stuck_claim')?.message ?? '',
      /T-001 claimed by worker-1 since .*, and no run is alive/,
    );
    const report = await runRepair({ projectDir: dir, fix: true });
    assert.equal(report.ok, true, JSON.stringify(report.remaining));
    assert.equal(await taskStatus('T-001'), 'pending');
    const last = (await events({ entityId: 'T-001' })).at(-1);
    assert.equal(last?.event_type, 'task.pending');
    assert.equal(last?.actor, 'repair');
    assert.match(String(last?.payload['reason']), /stuck claim by worker-1 .*no run alive/);
    assert.equal(last?.payload['old_status'], 'claimed');
  });

  it('given a live writer holding the store, then a fresh claim is not stuck, an old one is a warning, and --fix leaves the store alone (exit 1 while problems remain)', async () => {
    await withWriter(async (ctx) => void (await claimReadyTask(ctx, 'worker', 'worker-1')));
    const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      const fresh = await checkProject({ projectDir: dir });
      assert.equal(fresh.writer.state, 'live');
      assert.deepEqual(
        fresh.findings.filter((f) => f.check === 'tasks.stuck_claim'),
        [],
      );
      const old = await checkProject({ projectDir: dir, claimStaleMs: -1 });
      assert.deepEqual(
        old.findings.filter((f) => f.check === 'tasks.stuck_claim').map((f) => f.status),
        ['warn'],
      );
      await fs.writeFile(path.join(ralphDir, 'STATE.json'), '{ broken');
      const report = await runRepair({ projectDir: dir, fix: true });
      assert.match(report.actions.map((a) => a.detail).join('\n'), /skipped the store's repairs: a live writer holds it \(pid \d+/);
      assert.equal(report.ok, false);
      assert.deepEqual(problems(report.remaining), ['state.json']);
    } finally {
      await store.close();
    }
    assert.equal(await taskStatus('T-001'), 'claimed');
  });

  it('given a missing phase file, then reported and recreated by init; an edited phase file is kept', async () => {
    await fs.rm(path.join(ralphDir, 'phases/plan.md'));
    await fs.appendFile(path.join(ralphDir, 'phases/verify.md'), '\nmy own rule\n');
    const c = capture();
    assert.equal(await runRepairCommand([], c.io, { cwd: dir }), 1);
    assert.match(c.out, /FAIL files\.phase: \.ralph\/phases\/plan\.md is missing/);
    const fix = capture();
    assert.equal(await runRepairCommand(['--fix'], fix.io, { cwd: dir }), 0, fix.out);
    assert.match(fix.out, /init: created \.ralph\/phases\/plan\.md/);
    await fs.access(path.join(ralphDir, 'phases/plan.md'));
    assert.match(await fs.readFile(path.join(ralphDir, 'phases/verify.md'), 'utf8'), /my own rule/);
  });

  it('given a view row written behind the store (python sqlite3), then views differ from a rebuild and ralph.db fails its checksum; --fix restores it from ralph.db.prev and the journal', async () => {
    const db = path.join(ralphDir, 'ralph.db');
    sqlite(db, "UPDATE task_view SET status = 'blocked', title = 'tampered' WHERE task_id = 'T-002'");
    sqlite(db, "INSERT INTO task_view(task_id, status) VALUES ('GHOST', 'pending')");
    const before = await runRepair({ projectDir: dir, fix: false });
    const views = before.findings.filter((f) => f.check === 'views.rebuild');
    assert.equal(views.length, 1);
    assert.match(
      views[0]?.message ?? '',
      /task_view differs from a rebuild from events: 2 row\(s\) only in the view, 1 only in the rebuild/,
    );
    // The check only read: the tampered row is still there.
    assert.deepEqual(sqlite(db, "SELECT status FROM task_view WHERE task_id = 'T-002'"), [['blocked']]);
    // The writer would refuse the file: it changed outside Ralph since its last checkpoint.
    assert.match(
      before.findings.find((f) => f.check === 'db.checksum')?.message ?? '',
      /does not match the checksum its last checkpoint recorded/,
    );
    const eventsBefore = (await events()).length;
    const report = await runRepair({ projectDir: dir, fix: true });
    assert.equal(report.ok, true, JSON.stringify(report.remaining.filter((f) => f.status !== 'ok')));
    const actions = report.actions.map((a) => `${a.step}: ${a.detail}`).join('\n');
    assert.match(
      actions,
      /store: saved the files as found to \.ralph\/backup\/[^ ]+-store\/ \(ralph\.events\.journal, ralph\.db, ralph\.db\.prev\)/,
    );
    assert.match(actions, /store: restored ralph\.db from ralph\.db\.prev/);
    assert.match(actions, /store: nothing was lost/);
    assert.deepEqual(sqlite(db, 'SELECT task_id, status, title FROM task_view ORDER BY task_id'), [
      ['T-001', 'pending', 'First task'],
      ['T-002', 'pending', 'Second task'],
      ['T-003', 'pending', 'Third task'],
    ]);
    const after = await events();
    assert.equal(after.length, eventsBefore + 1, 'the restore loses no event and records one incident');
    assert.deepEqual(
      after.filter((e) => e.event_type === 'incident').map((e) => [e.payload['kind'], e.payload['base'], e.payload['lost']]),
      [['store_restored', 'ralph.db.prev', false]],
    );
  });

  it('given a torn journal tail and journal events ralph.db lacks, then both reported; --fix replays and cuts the tail', async () => {
    const journal = path.join(ralphDir, JOURNAL_FILE);
    const ev: StoredEvent = {
      event_id: '99999999999999-zzzz-000001',
      ts: new Date().toISOString(),
      run_id: 'run_crashed',
      entity_type: 'note',
      entity_id: 'n1',
      event_type: 'note.added',
      actor: 'test',
      payload: { text: 'acknowledged before the crash' },
    };
    await fs.appendFile(journal, encodeRecord([ev]));
    await fs.appendFile(journal, Buffer.from('0badf00d {"v":1,"events":[{"event_id":"half'));
    const before = await runRepair({ projectDir: dir, fix: false });
    assert.deepEqual(problems(before.findings).sort(), ['journal.replay', 'journal.torn']);
    const report = await runRepair({ projectDir: dir, fix: true });
    assert.equal(report.ok, true, JSON.stringify(report.remaining.filter((f) => f.status !== 'ok')));
    const detail = report.actions.map((a) => a.detail).join('\n');
    assert.match(detail, /replayed 1 journal event\(s\) into ralph\.db/);
    assert.match(detail, /cut a torn journal tail of \d+ byte\(s\)/);
    assert.deepEqual(sqlite(path.join(ralphDir, 'ralph.db'), "SELECT actor FROM events WHERE event_id = '99999999999999-zzzz-000001'"), [
      ['test'],
    ]);
  });

  it('given STATE.json counts out of sync, then reported and re-rendered, keeping the loop position', async () => {
    const file = path.join(ralphDir, 'STATE.json');
    const state = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
    await fs.writeFile(
      file,
      JSON.stringify({ ...state, items_total_count: 99, items_done_count: 7, iteration: 12, phase: 'plan' }, null, 2),
    );
    const c = capture();
    assert.equal(await runRepairCommand(['--json'], c.io, { cwd: dir }), 1);
    const json = JSON.parse(c.out) as RepairReport;
    const f = json.findings.find((x) => x.check === 'state.counts');
    assert.match(f?.message ?? '', /items_done_count 7 \(log: 0\), items_total_count 99 \(log: 3\)/);
    const fix = capture();
    assert.equal(await runRepairCommand(['--fix', '--json'], fix.io, { cwd: dir }), 0);
    const fixed = JSON.parse(fix.out) as RepairReport;
    assert.equal(fixed.ok, true);
    assert.ok(fixed.actions.some((a) => a.step === 'render-state'));
    const after = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
    assert.deepEqual([after['items_total_count'], after['items_done_count'], after['iteration'], after['phase']], [3, 0, 12, 'plan']);
  });

  it('given a done mark in BACKLOG.md without a promoted patch, then reported and never made done', async () => {
    const file = path.join(ralphDir, 'BACKLOG.md');
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace('| T-002 | pending |', '| T-002 | done |'));
    const before = await runRepair({ projectDir: dir, fix: false });
    assert.deepEqual(problems(before.findings), ['backlog.done_without_patch']);
    const report = await runRepair({ projectDir: dir, fix: true });
    assert.match(
      report.actions.map((a) => a.detail).join('\n'),
      /NOT done: T-002 is marked done in BACKLOG\.md but has no promoted patch; left pending/,
    );
    assert.equal(await taskStatus('T-002'), 'pending');
    assert.equal(
      (await events({ entityId: 'T-002' })).some((e) => e.event_type === 'task.done'),
      false,
    );
    assert.match(await fs.readFile(file, 'utf8'), /\| T-002 \| pending \|/);
    assert.equal(report.ok, true);
  });

  it('an unsynced done mark (promoted patch) and a new row are synced BEFORE BACKLOG.md is rendered, not lost', async () => {
    // T-001 has a promoted patch (a real commit) but was reopened; the user marks it done again.
    await fs.writeFile(path.join(dir, 'a.txt'), 'work\n');
    execFileSync('git', ['add', 'a.txt'], { cwd: dir });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '-m', 'work'], { cwd: dir });
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    await fs.writeFile(path.join(ralphDir, 'commits/pending/T-001.patch'), 'diff --git a/a.txt b/a.txt\n');
    await withWriter(async (ctx) => {
      const patchId = await queuePatch(ctx, {
        taskId: 'T-001',
        patchPath: path.join(ralphDir, 'commits/pending/T-001.patch'),
        createdBy: 'worker-1',
      });
      await promotePatch(ctx, { patchId, commitHash: commit });
      await transitionTask(ctx, { taskId: 'T-001', status: 'pending', actor: 'human', payload: { reason: 'reopened' } });
      renderBacklogFile(ctx);
      renderState(ctx);
    });
    const file = path.join(ralphDir, 'BACKLOG.md');
    const edited = (await fs.readFile(file, 'utf8'))
      .replace('| T-001 | pending |', '| T-001 | done |')
      .replace('| T-003 |', '| T-004 | pending | Added by hand | user | S | - |\n| T-003 |');
    await fs.writeFile(file, edited);
    const before = await runRepair({ projectDir: dir, fix: false });
    assert.deepEqual(problems(before.findings).sort(), ['backlog.unsynced', 'backlog.unsynced_done']);
    const report = await runRepair({ projectDir: dir, fix: true });
    assert.equal(report.ok, true, JSON.stringify(report.remaining.filter((f) => f.status !== 'ok')));
    const steps = report.actions.map((a) => a.step);
    assert.ok(steps.indexOf('sync-backlog') >= 0 && steps.indexOf('sync-backlog') < steps.indexOf('render-backlog'), steps.join(','));
    assert.equal(await taskStatus('T-001'), 'done');
    assert.equal(await taskStatus('T-004'), 'pending');
    const done = (await events({ entityId: 'T-001' })).filter((e) => e.event_type === 'task.done').at(-1);
    assert.equal(done?.actor, 'repair');
    const text = await fs.readFile(file, 'utf8');
    assert.match(text, /\| T-001 \| done \|/);
    assert.match(text, /\| T-004 \| pending \| Added by hand \|/);
  });

  it('given a waiting proposal and a live patch whose file is gone, then processed and discarded through events', async () => {
    await withWriter(async (ctx) => {
      await queuePatch(ctx, { taskId: 'T-002', patchPath: path.join(ralphDir, 'commits/pending/gone.patch'), createdBy: 'worker-1' });
    });
    await fs.writeFile(
      path.join(ralphDir, 'proposals/prop_1.json'),
      JSON.stringify({
        proposal_type: 'new_task',
        confidence: 0.9,
        task: { id: 'T-010', title: 'Proposed', source: 'spec', effort: 'S', wave: 1, deps: '-' },
        rationale: 'needed',
      }),
    );
    const before = await runRepair({ projectDir: dir, fix: false });
    assert.ok(problems(before.findings).includes('patches.missing_file'), JSON.stringify(before.findings));
    assert.ok(before.findings.some((f) => f.check === 'proposals.unprocessed' && f.status === 'warn'));
    const report = await runRepair({ projectDir: dir, fix: true });
    assert.equal(report.ok, true, JSON.stringify(report.remaining.filter((f) => f.status !== 'ok')));
    const detail = report.actions.map((a) => `${a.step}: ${a.detail}`).join('\n');
    assert.match(detail, /patches: discarded patch_T-002_\S+ \(file missing\); T-002 back to pending/);
    assert.match(detail, /process-proposals: accepted 1, deferred 0, rejected 0/);
    assert.equal(await taskStatus('T-002'), 'pending');
    assert.equal(await taskStatus('T-010'), 'pending');
    assert.deepEqual(
      (await fs.readdir(path.join(ralphDir, 'proposals/processed'))).map((f) => f.replace(/\.\d{17}-[0-9a-f]{6}\.json$/, '.json')),
      ['prop_1.json'],
    );
  });

  it('given a run killed while its agent ran (the agent still running, its ledger record left), then a warning, and --fix ends the group', async () => {
    const owner = await deadPid();
    const agent = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    const pid = agent.pid ?? assert.fail('no pid');
    const exited = new Promise<void>((resolve) => agent.on('exit', () => resolve()));
    try {
      const ledger = path.join(ralphDir, 'locks/processes');
      await fs.mkdir(ledger, { recursive: true });
      const record = { pid, owner, startTicks: processStartTicks(pid), what: 'claude (worker-1)', cwd: dir };
      await fs.writeFile(path.join(ledger, `${pid}.json`), JSON.stringify(record));
      const before = await runRepair({ projectDir: dir, fix: false });
      const f = before.findings.find((x) => x.check === 'locks.processes');
      assert.equal(f?.status, 'warn', JSON.stringify(before.findings));
      const report = await runRepair({ projectDir: dir, fix: true });
      assert.ok(
        report.actions.some((a) => a.step === 'processes' && a.detail === `ended claude (worker-1) (pid ${pid}) in ${dir}`),
        JSON.stringify(report.actions),
      );
      await exited;
      assert.deepEqual(await fs.readdir(ledger), []);
      assert.equal(report.remaining.filter((x) => x.status !== 'ok').length, 0, JSON.stringify(report.remaining));
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already ended (the expected case)
      }
    }
  });
});
