// Start-up recovery after a run that died: the agents and gates it left running ended,
// half-done promotions repaired, stale claims released (this run holds the writer lock, so
// any claim is from a dead run; on a shared store, any whose lease nobody holds), orphaned worktrees removed, and patches left queued
// re-evaluated. Promotion is idempotent by the patch's trailer, so a run killed between the
// branch update and promote-patch neither loses nor duplicates the commit.
import { readFile, rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { parsePatch } from '../domain/patchText';
import { quoteId } from '../domain/ids';
import { CONTROL_FILES_REASON } from '../domain/risk';
import type { ChangedPath } from '../domain/risk';
import { describeRecovery, recoverInterruptedPromotion } from '../git/promote';
import { judgeRoot, worktreesRoot } from '../git/repoCache';
import { findOrphanedWorktrees, migrateLegacyWorktrees, removeWorktree } from '../git/worktrees';
import { LATE_VERIFY_WORKTREE } from './lateVerify';
import type { LoopRun } from './loopRun';

export async function recover(run: LoopRun): Promise<void> {
  const { ctx, harness } = run;
  const { control, projectDir } = ctx;
  const signal = run.lifecycle.signal;
  // First the agents and gates a killed run left running: they would keep writing into
  // worktrees this run is about to reset and reuse.
  const judges = await judgeRoot(projectDir);
  for (const g of await ctx.ledger.reap()) {
    if (g.killed) ctx.log('harness', 'warn', `ended ${g.what} (process group ${g.pid}) left running by a killed run in ${g.cwd}`);
    // A killed judge's empty review folder is ours to remove.
    if (dirname(g.cwd) === judges && basename(g.cwd).startsWith('review-')) await rm(g.cwd, { recursive: true, force: true });
  }
  // Worktrees of older versions lived inside the repository's git dir: moved out of it.
  const moved = await migrateLegacyWorktrees(projectDir);
  if (moved.length > 0) {
    ctx.log(
      'harness',
      'info',
      `moved ${moved.length} worktree(s) (${moved.join(', ')}) out of the repository into ${await worktreesRoot(projectDir)}`,
    );
  }
  // A run killed while writing a patch file left its temp, never renamed into place.
  for (const f of await control.removeKilledPatchWrites()) {
    ctx.log('harness', 'info', `removed ${basename(f)}: a patch file a killed run was still writing`);
  }
  // A run killed between writing a patch file and queueing it left the file with no patch
  // in the log: nothing will ever promote it, and the task's work is redone from its
  // worktree. The file moves to commits/discarded/ with an event (the bytes are kept).
  for (const m of await control.archiveOrphanedPatches()) {
    if (m.error !== undefined)
      ctx.log('harness', 'warn', `${basename(m.file)}, written by a killed run and never queued, stays in pending/: ${m.error}`);
    else ctx.log('harness', 'info', `moved ${basename(m.file)} to ${basename(dirname(m.to))}/: written by a killed run and never queued`);
  }
  for (const r of await recoverInterruptedPromotion(projectDir)) {
    ctx.log('harness', 'warn', `recovered an interrupted promotion in ${r.worktree}: ${describeRecovery(r)}`);
  }
  // A run killed between closing a patch and moving its file out of commits/pending/.
  for (const m of await control.archiveClosedPatches()) {
    if (m.error !== undefined)
      ctx.log(
        'harness',
        'warn',
        `the closed patch ${quoteId(m.patchId)}'s file stays in pending/ (tried again at the next start): ${m.error}`,
      );
    else ctx.log('harness', 'info', `moved ${basename(m.to)} of the closed patch ${quoteId(m.patchId)} to ${basename(dirname(m.to))}/`);
  }
  for (const t of control.tasks()) {
    // On a shared store another machine's live lease is not stale: only ours from a dead run is.
    if (t.status === 'claimed' && control.claimIsStale(t.task_id)) {
      await control.releaseTask(t.task_id, 'harness', `stale claim by ${t.claimed_by ?? '?'} from a dead run`);
    }
  }
  // The late-verification worktree is kept too: its installed dependencies are a cache.
  const active = ['primary', LATE_VERIFY_WORKTREE, ...Array.from({ length: ctx.settings.workers }, (_, i) => `worker-${i + 1}`)];
  for (const w of await findOrphanedWorktrees(projectDir, active)) {
    await removeWorktree(projectDir, w.name).catch(() => undefined);
    ctx.log('harness', 'info', `removed orphaned worktree ${w.name}`);
  }
  // A run killed between queueing a re-based patch and closing the one it replaces (or
  // between a promotion and that close) left two live patches for one task: only the
  // task's current patch can still be promoted, the other would wait forever.
  for (const t of control.tasks()) {
    for (const p of control.patches(t.task_id)) {
      if (!isLive(p.status)) continue;
      if (t.status !== 'done' && t.status !== 'dropped' && (t.patch_id === null || t.patch_id === p.patch_id)) continue;
      const why =
        t.status === 'done' || t.status === 'dropped'
          ? `its task is ${t.status} (left live by a killed run)`
          : `superseded by ${String(t.patch_id)} (left live by a killed run)`;
      await control.discardPatch(p.patch_id, why, 'harness');
      ctx.log('harness', 'info', `discarded ${p.patch_id} of ${t.task_id}: ${why}`);
    }
  }
  for (const t of control.tasks()) {
    if (t.status !== 'proposed') continue;
    const live = control.patches(t.task_id).filter((p) => isLive(p.status));
    const patch = live.find((p) => p.patch_id === t.patch_id) ?? live[live.length - 1];
    if (!patch?.patch_path) {
      await control.releaseTask(t.task_id, 'harness', 'proposed without a live patch after restart');
      continue;
    }
    // A run killed between queueing a patch and deferring it left a sensitive patch
    // looking ready: it goes to the judge (tier 2) or back to be decomposed (tier 3).
    const risk = harness.promotion.assess(t, await patchChanges(patch.patch_path));
    const tier = risk.tier;
    if (risk.controlFiles.length > 0) {
      const why = `${CONTROL_FILES_REASON} (${risk.controlFiles.join(', ')})`;
      await rm(patch.patch_path, { force: true }); // before the discard, which would keep the file
      await control.discardPatch(patch.patch_id, why, 'harness');
      await control.blockTask(t.task_id, 'harness', why);
      continue;
    }
    if (tier >= 2 && !control.approvedSinceDeferral(t.task_id)) {
      if (tier === 2) {
        const why = `risk tier 2, found unreviewed after a restart: deferred to the judge`;
        await control.deferTask(t.task_id, 'harness', why, tier, patch.patch_id);
      } else {
        const why = `risk tier 3, found undecomposed after a restart: back to pending to be decomposed`;
        await control.discardPatch(patch.patch_id, why, 'harness');
      }
      continue;
    }
    // Onto the commit its gates ran on, or verified again on the moved tip (promoteLate
    // finds a commit a killed run already made, and discards and releases by itself).
    await harness.late
      .promoteLate(t.task_id, patch.patch_id, patch.patch_path, 'harness', 'recovered', signal)
      .catch((e: unknown) => ctx.log('harness', 'warn', `re-evaluating ${patch.patch_id} after restart failed: ${String(e)}`));
  }
}

/** What a patch file changes; nothing when it cannot be read (promoteLate reports that). */
async function patchChanges(patchPath: string): Promise<ChangedPath[]> {
  try {
    return parsePatch(await readFile(patchPath, 'utf8'));
  } catch {
    return [];
  }
}

function isLive(status: string): boolean {
  return status === 'queued' || status === 'applied' || status === 'verified';
}
