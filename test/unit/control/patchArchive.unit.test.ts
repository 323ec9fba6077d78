// Closed patches' files leave commits/pending/ (src/control/patchArchive.ts): moved on the
// command that closes them, through the inbox as well, and a killed writer's half-done move
// (the event without the move, the move without its event) finished by the sweep; a file no
// patch names (written by a run killed before it queued it) moved out with an event.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { archiveClosedPatches, archiveOrphanedPatches, removeKilledPatchWrites } from '../../../src/control/patchArchive';
import { discardPatch, drainInbox, getPatch, importBacklog, promotePatch, queuePatch, submitToInbox } from '../../../src/control/index';
import { diffViewsAgainstRebuild } from '../../../src/project/repair/storeChecks';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { BACKLOG, harness, writePatch, type Harness } from './harness';

describe('closed patches leave commits/pending/', function () {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
    h.writeBacklog(BACKLOG);
    await importBacklog(h.ctx);
  });
  afterEach(async () => {
    await h.close();
  });

  const pendingFiles = (): string[] => fs.readdirSync(path.join(h.ralphDir, 'commits', 'pending')).sort();
  const at = (rel: string): string => path.join(h.dir, rel);

  async function queued(taskId: string, name: string): Promise<{ id: string; rel: string; bytes: string }> {
    const rel = writePatch(h, name, ['src/a.ts']);
    const id = await queuePatch(h.ctx, { taskId, patchPath: rel, createdBy: 'worker-b' });
    return { id, rel, bytes: fs.readFileSync(at(rel), 'utf8') };
  }

  it('a promoted patch moves to commits/applied/, a discarded one to commits/discarded/, and patch_view follows', async () => {
    const a = await queued('W0-001', 'W0-001_a');
    const b = await queued('W1-001', 'W1-001_b');
    h.commits.add('abcdef1234567890');
    await promotePatch(h.ctx, { patchId: a.id, commitHash: 'abcdef1234567890' });
    await discardPatch(h.ctx, { patchId: b.id, reason: 'not wanted' });
    assert.deepEqual(pendingFiles(), []);
    const pa = getPatch(h.store, a.id);
    const pb = getPatch(h.store, b.id);
    assert.equal(pa?.patch_path, path.join('.ralph', 'commits', 'applied', 'W0-001_a.patch'));
    assert.equal(pb?.patch_path, path.join('.ralph', 'commits', 'discarded', 'W1-001_b.patch'));
    assert.equal(fs.readFileSync(at(pa.patch_path), 'utf8'), a.bytes);
    assert.equal(fs.readFileSync(at(pb.patch_path), 'utf8'), b.bytes);
    const archived = h.store.events({}).filter((e) => e.event_type === 'patch.archived');
    assert.deepEqual(
      archived.map((e) => [e.entity_id, e.payload['from']]),
      [
        [a.id, a.rel],
        [b.id, b.rel],
      ],
    );
    assert.deepEqual(await diffViewsAgainstRebuild(h.store, CONTROL_PROJECTIONS), []);
  });

  it('an inbox command that discards a patch moves its file too (its one transaction stays one)', async () => {
    const a = await queued('W0-001', 'W0-001_inbox');
    submitToInbox(h.ralphDir, { command: 'discard-patch', patch_id: a.id, reason: 'from the inbox', actor: 'human' });
    const [r] = await drainInbox(h.ctx);
    assert.equal(r?.ok, true, r?.error);
    assert.deepEqual(pendingFiles(), []);
    assert.ok(fs.existsSync(path.join(h.ralphDir, 'commits', 'discarded', 'W0-001_inbox.patch')));
    assert.equal(getPatch(h.store, a.id)?.status, 'discarded');
  });

  it('a writer killed between the promotion and the move: the sweep moves the file and records it', async () => {
    const a = await queued('W0-001', 'W0-001_killed');
    h.commits.add('abcdef1234567890');
    // The raw store: the promotion is durable, the move never happened.
    await promotePatch({ ...h.ctx, store: h.store }, { patchId: a.id, commitHash: 'abcdef1234567890' });
    assert.deepEqual(pendingFiles(), ['W0-001_killed.patch']);
    assert.equal(
      h.store.all("SELECT patch_id FROM patch_view WHERE status IN ('queued', 'applied', 'verified') AND patch_id = ?", [a.id]).length,
      0,
      'nothing lists it as waiting',
    );
    await h.reopen();
    const moves = await archiveClosedPatches(h.ctx);
    assert.deepEqual(
      moves.map((m) => m.patchId),
      [a.id],
    );
    assert.deepEqual(pendingFiles(), []);
    assert.equal(fs.readFileSync(at(getPatch(h.store, a.id)?.patch_path ?? ''), 'utf8'), a.bytes);
    assert.deepEqual(await archiveClosedPatches(h.ctx), [], 'a second sweep has nothing to do');
  });

  it('a writer killed between the move and its event: the sweep records where the file is', async () => {
    const a = await queued('W0-001', 'W0-001_moved');
    await discardPatch({ ...h.ctx, store: h.store }, { patchId: a.id, reason: 'gone' });
    fs.mkdirSync(path.join(h.ralphDir, 'commits', 'discarded'), { recursive: true });
    fs.renameSync(at(a.rel), path.join(h.ralphDir, 'commits', 'discarded', 'W0-001_moved.patch'));
    await h.reopen();
    assert.equal((await archiveClosedPatches(h.ctx)).length, 1);
    assert.equal(getPatch(h.store, a.id)?.patch_path, path.join('.ralph', 'commits', 'discarded', 'W0-001_moved.patch'));
    assert.equal(fs.readFileSync(at(getPatch(h.store, a.id)?.patch_path ?? ''), 'utf8'), a.bytes);
  });

  it('a name taken in the archive by other bytes is kept: the file gets the next free name', async () => {
    const a = await queued('W0-001', 'W0-001_same');
    fs.mkdirSync(path.join(h.ralphDir, 'commits', 'applied'), { recursive: true });
    fs.writeFileSync(path.join(h.ralphDir, 'commits', 'applied', 'W0-001_same.patch'), 'someone else');
    h.commits.add('abcdef1234567890');
    await promotePatch(h.ctx, { patchId: a.id, commitHash: 'abcdef1234567890' });
    assert.equal(fs.readFileSync(path.join(h.ralphDir, 'commits', 'applied', 'W0-001_same.patch'), 'utf8'), 'someone else');
    assert.equal(getPatch(h.store, a.id)?.patch_path, path.join('.ralph', 'commits', 'applied', 'W0-001_same-2.patch'));
    assert.equal(fs.readFileSync(at(getPatch(h.store, a.id)?.patch_path ?? ''), 'utf8'), a.bytes);
  });

  it('a file no patch names (the late re-verification captured it, the run died before queueing it) moves to commits/discarded/ with an event', async () => {
    const live = await queued('W0-001', 'W0-001_live');
    // Exactly the state a kill left in the fault suite: the harness's capture, no patch.queued.
    const orphan = 'T-3_harness_20261202010516296_2.patch';
    const bytes = 'diff --git a/x b/x\n';
    fs.writeFileSync(path.join(h.ralphDir, 'commits', 'pending', orphan), bytes);
    await h.reopen();
    const before = h.store.events({}).length;
    const moves = await archiveOrphanedPatches(h.ctx);
    const discarded = path.join(h.ralphDir, 'commits', 'discarded', orphan);
    assert.deepEqual(moves, [{ file: path.join(h.ralphDir, 'commits', 'pending', orphan), to: discarded }]);
    assert.deepEqual(pendingFiles(), ['W0-001_live.patch'], "a live patch's file stays");
    assert.equal(fs.readFileSync(discarded, 'utf8'), bytes, 'the bytes are kept, not deleted');
    const events = h.store.events({}).slice(before);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.entity_id, e.payload['from'], e.payload['patch_path']]),
      [
        [
          'patch_file.orphaned',
          orphan,
          path.join('.ralph', 'commits', 'pending', orphan),
          path.join('.ralph', 'commits', 'discarded', orphan),
        ],
      ],
    );
    assert.equal(getPatch(h.store, live.id)?.status, 'queued');
    assert.deepEqual(await archiveOrphanedPatches(h.ctx), [], 'a second sweep has nothing to do');
    assert.deepEqual(await diffViewsAgainstRebuild(h.store, CONTROL_PROJECTIONS), []);
  });

  it('a patch file a killed process was still writing (its temp) is removed; one a live process writes, and other files, stay', async () => {
    const pending = path.join(h.ralphDir, 'commits', 'pending');
    fs.mkdirSync(pending, { recursive: true });
    const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    const killed = `T-1_primary_20261203172452433_2.patch.tmp-${dead}-37fcc84d`;
    const writing = `T-2_worker-1_20261203172452433_3.patch.tmp-${process.pid}-0a1b2c3d`;
    for (const n of [killed, writing, 'T-3_w_1.patch', 'notes.tmp-1-ab']) fs.writeFileSync(path.join(pending, n), 'diff --git a/x b/x\n');
    assert.deepEqual(await removeKilledPatchWrites(h.ctx), [path.join(pending, killed)]);
    assert.deepEqual(pendingFiles(), [
      'T-2_worker-1_20261203172452433_3.patch.tmp-' + String(process.pid) + '-0a1b2c3d',
      'T-3_w_1.patch',
      'notes.tmp-1-ab',
    ]);
    assert.deepEqual(await removeKilledPatchWrites(h.ctx), [], 'a second sweep has nothing to do');
  });

  it('an orphan whose name is taken in discarded/ by other bytes gets the next free name; the same bytes are not kept twice', async () => {
    const dir = path.join(h.ralphDir, 'commits', 'discarded');
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(path.join(h.ralphDir, 'commits', 'pending'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'a.patch'), 'other');
    fs.writeFileSync(path.join(dir, 'b.patch'), 'same');
    fs.writeFileSync(path.join(h.ralphDir, 'commits', 'pending', 'a.patch'), 'mine');
    fs.writeFileSync(path.join(h.ralphDir, 'commits', 'pending', 'b.patch'), 'same');
    const moves = await archiveOrphanedPatches(h.ctx);
    assert.deepEqual(
      moves.map((m) => path.basename(m.to)),
      ['a-2.patch', 'b.patch'],
    );
    assert.deepEqual(pendingFiles(), []);
    assert.equal(fs.readFileSync(path.join(dir, 'a.patch'), 'utf8'), 'other');
    assert.equal(fs.readFileSync(path.join(dir, 'a-2.patch'), 'utf8'), 'mine');
  });

  it('a move that fails (the archive folder cannot be made) is said with the file and the errno, the file kept, and the sweep retries it', async () => {
    const a = await queued('W0-001', 'W0-001_blocked');
    const blocker = path.join(h.ralphDir, 'commits', 'applied');
    fs.writeFileSync(blocker, 'not a folder'); // mkdir fails: a real errno, even for root
    h.commits.add('abcdef1234567890');
    await promotePatch(h.ctx, { patchId: a.id, commitHash: 'abcdef1234567890' });
    assert.deepEqual(pendingFiles(), ['W0-001_blocked.patch'], 'left in pending/, not lost');
    const failed = h.store.events({}).filter((e) => e.event_type === 'patch.archive_failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]?.entity_id, a.id);
    assert.match(
      String(failed[0]?.payload['error']),
      new RegExp(`${blocker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\\((EEXIST|ENOTDIR)\\)`),
    );
    assert.match(String(failed[0]?.payload['code']), /^(EEXIST|ENOTDIR)$/);
    const again = await archiveClosedPatches(h.ctx);
    assert.deepEqual(
      again.map((m) => [m.patchId, m.error !== undefined]),
      [[a.id, true]],
      'the sweep returns the failure for the run to log',
    );
    fs.rmSync(blocker);
    const moved = await archiveClosedPatches(h.ctx);
    assert.deepEqual(
      moved.map((m) => [m.patchId, m.error]),
      [[a.id, undefined]],
    );
    assert.deepEqual(pendingFiles(), []);
    assert.equal(fs.readFileSync(at(getPatch(h.store, a.id)?.patch_path ?? ''), 'utf8'), a.bytes);
  });
});
