import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqlDb, loadSqlJs } from '../../../src/store/sqlDb';
import type { StoredEvent } from '../../../src/store/types';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { diffViewsAgainstRebuild, formatRepairReport, inspectWriterLock, type RepairReport } from '../../../src/project/repair';
import { runRepairCommand } from '../../../src/cli/projectCommands';

function migrated(id: string, seq: number): StoredEvent {
  return {
    event_id: `20261129000000-${String(seq).padStart(6, '0')}`,
    ts: '2026-11-29T00:00:00.000Z',
    run_id: 'run_test',
    entity_type: 'task',
    entity_id: id,
    event_type: 'task.migrated',
    actor: 'test',
    payload: { title: `Task ${id}`, source: 'spec', effort: 'S', deps: '-', wave: 0, status: 'pending' },
  };
}

describe('repair: report text', () => {
  const base: RepairReport = {
    projectDir: '/p',
    fixed: false,
    findings: [
      { check: 'files', status: 'ok', message: 'all there' },
      {
        check: 'tasks.stuck_claim',
        status: 'fail',
        message: 'T-1 claimed by worker-1',
        fix: { kind: 'control-plane', description: 'transition-task back to pending' },
      },
      { check: 'patches.queued', status: 'warn', message: '1 patch queued' },
    ],
    actions: [],
    remaining: [],
    ok: false,
  };

  it('given problems and no --fix, then problems first and a hint to run --fix', () => {
    const text = formatRepairReport({ ...base, remaining: base.findings });
    const lines = text.split('\n');
    assert.equal(lines[0], 'Ralph repair: /p');
    assert.equal(lines[1], 'FAIL tasks.stuck_claim: T-1 claimed by worker-1 (fix: transition-task back to pending)');
    assert.equal(lines[2], 'WARN patches.queued: 1 patch queued');
    assert.match(text, /1 problem\(s\), 1 warning\(s\); `ralph repair --fix` repairs what it can\n$/);
  });

  it('given fixes that left nothing, then each action and "every check passes"', () => {
    const text = formatRepairReport({
      ...base,
      fixed: true,
      actions: [
        { step: 'sync-backlog', detail: 'recorded done: T-2' },
        { step: 'claims', detail: 'T-1: claimed -> pending' },
      ],
      remaining: [{ check: 'files', status: 'ok', message: 'all there' }],
      ok: true,
    });
    assert.match(text, /\nFixes \(2\):\n {2}sync-backlog: recorded done: T-2\n {2}claims: T-1: claimed -> pending\n/);
    assert.match(text, /After fixing: every check passes\n\nNo problems\n$/);
  });

  it('given a problem left after fixing, then listed and counted as remaining', () => {
    const text = formatRepairReport({ ...base, fixed: true, remaining: [base.findings[1] as RepairReport['findings'][number]] });
    assert.match(text, /After fixing:\nFAIL tasks\.stuck_claim/);
    assert.match(text, /1 problem\(s\) remain\n$/);
  });
});

describe('repair: writer lock inspection', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-lock-unit-'));
    fs.mkdirSync(path.join(dir, 'locks'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (o: unknown): void => fs.writeFileSync(path.join(dir, 'locks/writer.lock'), typeof o === 'string' ? o : JSON.stringify(o));

  it('given no lock file, then free', () => {
    assert.deepEqual(inspectWriterLock(dir), { state: 'free' });
  });

  it('given our own live pid with a fresh heartbeat, then live', () => {
    const now = Date.now();
    write({
      pid: process.pid,
      host: os.hostname(),
      started: new Date(now).toISOString(),
      heartbeat: new Date(now).toISOString(),
      runId: 'r',
    });
    assert.equal(inspectWriterLock(dir, now).state, 'live');
  });

  it('given a holder on another host whose heartbeat is older than the limit, then dead (heartbeat_stale)', () => {
    const now = Date.now();
    write({ pid: 1, host: 'elsewhere', started: 'x', heartbeat: new Date(now - 60_000).toISOString(), runId: 'r' });
    const w = inspectWriterLock(dir, now, 30_000);
    assert.equal(w.state, 'dead');
    assert.equal(w.state === 'dead' ? w.reason : '', 'heartbeat_stale');
  });

  it('given an unreadable lock, then live while young and dead once old', () => {
    write('{"pid": 12');
    const mtime = fs.statSync(path.join(dir, 'locks/writer.lock')).mtimeMs;
    assert.equal(inspectWriterLock(dir, mtime + 1000, 30_000).state, 'live');
    assert.equal(inspectWriterLock(dir, mtime + 60_000, 30_000).state, 'dead');
  });
});

describe('repair: views against a scratch rebuild', () => {
  it('given views built from the events, then equal; given a tampered and an extra row, then the table and counts', async () => {
    const SQL = await loadSqlJs();
    const db = new SqlDb(new SQL.Database());
    try {
      for (const p of CONTROL_PROJECTIONS) for (const s of p.ddl) db.exec(s);
      const events = [migrated('T-1', 1), migrated('T-2', 2)];
      for (const e of events) for (const p of CONTROL_PROJECTIONS) p.apply(db, e);
      const source = { all: db.all.bind(db), get: db.get.bind(db), events: () => events };
      assert.deepEqual(await diffViewsAgainstRebuild(source), []);

      db.run("UPDATE task_view SET status = 'done' WHERE task_id = 'T-1'");
      db.run("INSERT INTO patch_view(patch_id, task_id) VALUES ('p1', 'T-9')");
      const diffs = await diffViewsAgainstRebuild(source);
      assert.deepEqual(
        diffs.map((d) => [d.table, d.onlyInView, d.onlyInRebuild]),
        [
          ['task_view', 1, 1],
          ['patch_view', 1, 0],
        ],
      );
      assert.equal(
        db.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-1'")?.status,
        'done',
        'the checked views are not touched',
      );
    } finally {
      db.close();
    }
  });
});

describe('repair: command line', () => {
  const io = (): { out: string[]; err: string[]; stdout(t: string): void; stderr(t: string): void } => {
    const c = {
      out: [] as string[],
      err: [] as string[],
      stdout: (t: string) => void c.out.push(t),
      stderr: (t: string) => void c.err.push(t),
    };
    return c;
  };

  it('given an unknown argument or --dir without a value, then exit 2 with the usage', async () => {
    const a = io();
    assert.equal(await runRepairCommand(['--fox'], a), 2);
    assert.match(a.err.join(''), /unknown argument '--fox'\nUsage: ralph repair \[--fix\] \[--json\] \[--dir D\]/);
    const b = io();
    assert.equal(await runRepairCommand(['--dir'], b), 2);
    assert.match(b.err.join(''), /--dir needs a value/);
  });

  it('given --help, then the usage and exit 0', async () => {
    const a = io();
    assert.equal(await runRepairCommand(['--help'], a), 0);
    assert.equal(a.out.join(''), 'Usage: ralph repair [--fix] [--json] [--dir D]\n');
  });
});
