// kill -9 around the move of a closed patch's file out of commits/pending/: after the store
// recorded the promotion (the loop's patch.promoted), just before the rename, and after the
// rename but before its patch.archived event. After each kill nothing lists the file as
// pending (the monitor's snapshot, the store's live patches) and the file is not lost; the
// restart finishes the move: pending/ ends empty, every closed patch's file is where
// patch_view says, under commits/applied/ or commits/discarded/, and `ralph repair` is clean.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { buildMonitorSnapshot } from '../../../src/monitor/snapshot';
import { checkProject } from '../../../src/project/repair';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { bundleFaultChild, type FaultChildBundle } from '../kit/faultRunner';
import { createKillProject } from '../kit/killProject';
import { count } from '../kit/tally';

interface ClosedRow {
  patch_id: string;
  status: string;
  patch_path: string;
}

async function withObserver<T>(dir: string, fn: (s: EventStore) => T): Promise<T> {
  const store = await openStore({ ralphDir: join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return fn(store);
  } finally {
    await store.close();
  }
}

const abs = (dir: string, p: string): string => (isAbsolute(p) ? p : join(dir, p));
const pendingDir = (dir: string): string => join(dir, '.ralph', 'commits', 'pending');
const archived = (dir: string, r: ClosedRow): string =>
  join(dir, '.ralph', 'commits', r.status === 'promoted' ? 'applied' : 'discarded', basename(r.patch_path));

function closed(store: EventStore): ClosedRow[] {
  return store.all<ClosedRow>(
    "SELECT patch_id, status, patch_path FROM patch_view WHERE status IN ('promoted', 'discarded') AND patch_path IS NOT NULL",
  );
}

describe('faults: kill -9 while a closed patch file leaves commits/pending/', function () {
  this.timeout(600_000);
  let child: FaultChildBundle;
  const dirs: string[] = [];
  before(async () => {
    child = await bundleFaultChild();
  });
  after(() => {
    child?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const point of ['event.patch.promoted', 'patch.archive', 'patch.archived']) {
    it(`killed at ${point}: not listed as pending, not lost, moved by the restart`, async () => {
      const dir = await createKillProject();
      dirs.push(dir);
      const killed = await child.run(dir, point, 1);
      assert.deepEqual(killed.killedAt, { point, n: 1 }, killed.stderr);
      count('faultsInjected');
      await withObserver(dir, (store) => {
        const rows = closed(store);
        assert.ok(rows.length > 0, 'a patch was closed before the kill');
        // Not lost: each closed patch's file is where patch_view says, or already in its archive.
        for (const r of rows) {
          const ok = existsSync(abs(dir, r.patch_path)) || existsSync(archived(dir, r));
          if (!ok) count('eventsLost');
          assert.ok(ok, `${r.patch_id}'s file is gone: ${r.patch_path}`);
        }
        const inPending = rows.filter((r) => dirname(abs(dir, r.patch_path)) === pendingDir(dir));
        if (point === 'patch.archive')
          assert.ok(
            inPending.some((r) => existsSync(abs(dir, r.patch_path))),
            'killed before the rename: a closed patch file is still in pending/',
          );
        if (point === 'patch.archived')
          assert.ok(
            inPending.some((r) => !existsSync(abs(dir, r.patch_path)) && existsSync(archived(dir, r))),
            'killed after the rename: moved, the event not yet written',
          );
        // Nothing lists a closed patch as waiting: the monitor reads the store, not the folder.
        const snapshot = buildMonitorSnapshot(store, join(dir, '.ralph', 'logs'), new Date());
        const listed = snapshot.patches.pendingFiles.filter((f: string) => rows.some((r) => basename(r.patch_path) === f));
        assert.deepEqual(listed, [], 'the monitor lists closed patches as pending');
      });

      const end = await child.run(dir, 'none', 1);
      assert.equal(end.exitCode, 0, end.stderr);
      assert.equal(end.stopReason, 'backlog empty or blocked', end.stderr);
      assert.deepEqual(
        readdirSync(pendingDir(dir)).filter((f) => f.endsWith('.patch')),
        [],
        'pending/ holds no patch file once nothing waits',
      );
      await withObserver(dir, (store) => {
        for (const r of closed(store)) {
          const at = abs(dir, r.patch_path);
          assert.ok(existsSync(at), `${r.patch_id}: ${r.patch_path} is missing`);
          assert.equal(basename(dirname(at)), r.status === 'promoted' ? 'applied' : 'discarded', `${r.patch_id} is in ${at}`);
        }
      });
      const repair = await checkProject({ projectDir: dir });
      const findings = repair.findings.filter((f) => f.status !== 'ok').map((f) => `${f.status} ${f.check}: ${f.message}`);
      assert.deepEqual(findings, [], 'ralph repair on the finished project');
    });
  }

  it('killed at patch.captured.late (the re-verified patch written, not yet queued): the restart moves it to commits/discarded/ with an event', async () => {
    const dir = await createKillProject();
    dirs.push(dir);
    const killed = await child.run(dir, 'patch.captured.late', 1);
    assert.deepEqual(
      killed.killedAt,
      { point: 'patch.captured.late', n: 1 },
      `the judged patch was re-verified on a moved branch\n${killed.stderr}`,
    );
    count('faultsInjected');
    const left = readdirSync(pendingDir(dir)).filter((f) => /_harness_\d{17}_\d+\.patch$/.test(f));
    const named = await withObserver(dir, (store) =>
      store.all<{ patch_path: string }>('SELECT patch_path FROM patch_view').map((r) => basename(r.patch_path)),
    );
    const orphans = left.filter((f) => !named.includes(f));
    assert.equal(orphans.length, 1, `one captured file no patch names: ${left.join(', ')}`);
    const bytes = readFileSync(join(pendingDir(dir), orphans[0] as string), 'utf8');
    const end = await child.run(dir, 'none', 1);
    assert.equal(end.exitCode, 0, end.stderr);
    assert.equal(end.stopReason, 'backlog empty or blocked', end.stderr);
    assert.deepEqual(
      readdirSync(pendingDir(dir)).filter((f) => f.endsWith('.patch')),
      [],
      'pending/ holds no patch file once nothing waits',
    );
    const kept = join(dir, '.ralph', 'commits', 'discarded', orphans[0] as string);
    const ok = existsSync(kept) && readFileSync(kept, 'utf8') === bytes;
    if (!ok) count('eventsLost');
    assert.ok(ok, `the orphan's bytes are kept in ${kept}`);
    await withObserver(dir, (store) => {
      const said = store
        .all<{ entity_id: string }>("SELECT entity_id FROM events WHERE event_type = 'patch_file.orphaned'")
        .map((r) => r.entity_id);
      assert.deepEqual(said, orphans, 'one patch_file.orphaned event names it');
    });
    const repair = await checkProject({ projectDir: dir });
    const findings = repair.findings.filter((f) => f.status !== 'ok').map((f) => `${f.status} ${f.check}: ${f.message}`);
    assert.deepEqual(findings, [], 'ralph repair on the finished project');
  });
});
