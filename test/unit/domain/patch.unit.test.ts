// Patch lifecycle and the files a patch touches (risk comes from the real diff).
import assert from 'node:assert/strict';
import { domainEvent } from '../../../src/domain/events';
import { decideDiscardPatch, decidePromotePatch, decideQueuePatch, newPatchId } from '../../../src/domain/patch';
import { parsePatch, PatchParseError, touchedPaths } from '../../../src/domain/patchText';

const filesTouchedByDiff = (diff: string): string[] => touchedPaths(parsePatch(diff));
import { fold, types } from './given';

const migrated = domainEvent('task.migrated', 'W1-001', 'cp', {
  title: 'T',
  source: 'ES:1',
  effort: 'S',
  deps: '-',
  wave: 1,
  status: 'pending',
});

describe('domain/patch lifecycle', () => {
  it('given a pending task, when a patch is queued, then patch.queued and task.proposed', () => {
    const w = fold([migrated]);
    const evs = decideQueuePatch(w.tasks.get('W1-001'), {
      taskId: 'W1-001',
      patchId: 'p1',
      path: '.ralph/commits/pending/p1.patch',
      createdBy: 'worker-b',
    });
    assert.deepEqual(types(evs), ['patch.queued p1', 'task.proposed W1-001']);
    fold(evs, w);
    assert.equal(w.tasks.get('W1-001')?.status, 'proposed');
    assert.equal(w.tasks.get('W1-001')?.patch_id, 'p1');
    assert.deepEqual([w.patches.get('p1')?.status, w.patches.get('p1')?.created_by], ['queued', 'worker-b']);
  });

  it('when a patch is queued for an unknown or done task, then an error', () => {
    assert.throws(() => decideQueuePatch(undefined, { taskId: 'Z', patchId: 'p', path: 'x', createdBy: 'w' }), {
      name: 'TaskNotFoundError',
    });
  });

  it('given a queued patch, when promoted, then patch.promoted, task.done, task.completed', () => {
    const w = fold([migrated]);
    fold(decideQueuePatch(w.tasks.get('W1-001'), { taskId: 'W1-001', patchId: 'p1', path: 'p', createdBy: 'w' }), w);
    const evs = decidePromotePatch(w.patches.get('p1'), w.tasks.get('W1-001'), { patchId: 'p1', commitHash: 'deadbeefcafe', actor: 'cp' });
    assert.deepEqual(types(evs), ['patch.promoted p1', 'task.done W1-001', 'task.completed W1-001']);
    fold(evs, w);
    assert.deepEqual(
      [w.patches.get('p1')?.status, w.patches.get('p1')?.commit_hash, w.tasks.get('W1-001')?.status],
      ['promoted', 'deadbeefcafe', 'done'],
    );
    assert.throws(() => decidePromotePatch(w.patches.get('p1'), w.tasks.get('W1-001'), { patchId: 'p1', commitHash: 'x', actor: 'cp' }), {
      name: 'InvalidStateError',
    });
  });

  it('given a deferred task, when its patch is promoted around the judge, then InvalidStateError', () => {
    const w = fold([migrated]);
    fold(decideQueuePatch(w.tasks.get('W1-001'), { taskId: 'W1-001', patchId: 'p1', path: 'p', createdBy: 'w' }), w);
    fold([domainEvent('task.deferred', 'W1-001', 'cp', { old_status: 'proposed', new_status: 'deferred', reason: 'tier 2' })], w);
    assert.throws(() => decidePromotePatch(w.patches.get('p1'), w.tasks.get('W1-001'), { patchId: 'p1', commitHash: 'abc', actor: 'cp' }), {
      name: 'InvalidStateError',
    });
  });

  it('given a queued patch, when discarded, then patch.discarded and the task back to pending', () => {
    const w = fold([migrated]);
    fold(decideQueuePatch(w.tasks.get('W1-001'), { taskId: 'W1-001', patchId: 'p1', path: 'p', createdBy: 'w' }), w);
    const evs = decideDiscardPatch(w.patches.get('p1'), w.tasks.get('W1-001'), { patchId: 'p1', reason: 'build failed', actor: 'cp' });
    assert.deepEqual(types(evs), ['patch.discarded p1', 'task.pending W1-001']);
    assert.throws(() => decideDiscardPatch(undefined, undefined, { patchId: 'nope', reason: 'r', actor: 'cp' }), {
      name: 'PatchNotFoundError',
    });
  });

  it('given a task whose newer patch is queued, when the older one is discarded, then only the patch closes and the task stays proposed', () => {
    const w = fold([migrated]);
    fold(decideQueuePatch(w.tasks.get('W1-001'), { taskId: 'W1-001', patchId: 'p1', path: 'p', createdBy: 'w' }), w);
    fold(decideQueuePatch(w.tasks.get('W1-001'), { taskId: 'W1-001', patchId: 'p2', path: 'q', createdBy: 'w' }), w);
    const evs = decideDiscardPatch(w.patches.get('p1'), w.tasks.get('W1-001'), {
      patchId: 'p1',
      reason: 'superseded by a rebase',
      actor: 'cp',
    });
    assert.deepEqual(types(evs), ['patch.discarded p1']);
    fold(evs, w);
    assert.equal(w.tasks.get('W1-001')?.status, 'proposed');
    assert.deepEqual(types(decideDiscardPatch(w.patches.get('p2'), w.tasks.get('W1-001'), { patchId: 'p2', reason: 'r', actor: 'cp' })), [
      'patch.discarded p2',
      'task.pending W1-001',
    ]);
  });

  it('patch ids are unique even within one millisecond', () => {
    const taken = new Set<string>();
    const now = new Date('2026-11-29T10:00:00.123Z');
    for (let i = 0; i < 3; i++) taken.add(newPatchId('W1-001', now, (id) => taken.has(id)));
    assert.deepEqual(
      [...taken],
      ['patch_W1-001_20261129100000123', 'patch_W1-001_20261129100000123_2', 'patch_W1-001_20261129100000123_3'],
    );
  });
});

describe('domain/patchText: the files a patch touches, as the CLI reads them', () => {
  it('reads git diff headers, both sides of renames, new and deleted files', () => {
    const diff = [
      'diff --git a/src/app.ts b/src/app.ts',
      'index 1..2 100644',
      '--- a/src/app.ts',
      '+++ b/src/app.ts',
      '@@ -1,2 +1,2 @@',
      '-old',
      '+new',
      ' same',
      'diff --git a/old/name.ts b/new/name.ts',
      'similarity index 90%',
      'rename from old/name.ts',
      'rename to new/name.ts',
      'diff --git a/db/migrations/1.sql b/db/migrations/1.sql',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/db/migrations/1.sql',
      '@@ -0,0 +1,2 @@',
      '+-- a comment that looks like a header',
      '+--- b/not/a/file.ts',
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '--- removed line that looks like a header',
      '',
    ].join('\n');
    assert.deepEqual(filesTouchedByDiff(diff), ['db/migrations/1.sql', 'gone.txt', 'new/name.ts', 'old/name.ts', 'src/app.ts']);
  });

  it('reads a format-patch mail and quoted paths', () => {
    const mail = [
      'From 1234 Mon Sep 17 00:00:00 2001',
      'From: Worker <w@x>',
      'Subject: [PATCH] add secrets',
      '',
      '---',
      ' "sp ace.txt" | 1 +',
      '',
      'diff --git "a/sp ace.txt" "b/sp ace.txt"',
      'new file mode 100644',
      '--- /dev/null',
      '+++ "b/sp ace.txt"',
      '@@ -0,0 +1 @@',
      '+x',
      'diff --git a/config/.env b/config/.env',
      '--- a/config/.env',
      '+++ b/config/.env',
      '@@ -1 +1 @@',
      '-A=1',
      '+A=2',
      '-- ',
      '2.43.0',
    ].join('\n');
    assert.deepEqual(filesTouchedByDiff(mail), ['config/.env', 'sp ace.txt']);
  });

  it('refuses plain unified diffs (git guesses their path depth), naming the file', () => {
    assert.throws(
      () => filesTouchedByDiff('--- a/x.md\t2026-01-01\n+++ b/x.md\t2026-01-01\n@@ -1 +1 @@\n-a\n+b\n'),
      (e: unknown) => e instanceof PatchParseError && /x\.md/.test(e.message),
    );
  });
});
