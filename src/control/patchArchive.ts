// Closed patches' files leave `commits/pending/`: a promoted patch's file moves to
// `commits/applied/`, a discarded one's to `commits/discarded/`, and a `patch.archived` event
// points patch_view at the new place, so pending/ holds only what the store says waits.
//
// The move follows the store event that closed the patch, in two steps that each survive a
// kill: the rename (atomic, the directory fsynced), then the event. A writer killed before
// the rename leaves a closed patch's file in pending/; one killed after it leaves the file
// moved with patch_view still naming pending/. The sweep at the next start
// (`archiveClosedPatches` without ids) finishes either half; in between, nothing lists the
// file as pending (the monitor and `ralph status` read the store) and nothing is lost.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { domainEvent, toNewEvent } from '../domain/events';
import { atomicTempWriter, fileError, fsyncDir } from '../shared/fs';
import { pidAlive } from '../shared/process';
import type { EventStore, NewEvent, StoredEvent } from '../store/types';

/**
 * Removes the half-written patch files a process killed mid-write left in pending/ (its
 * atomic write's temp, `<id>.patch.tmp-<pid>-<hex>`, never renamed into place): nothing
 * names them, and the task's work is still in its worktree. A temp whose writer is alive
 * is being written and stays. Returns the files removed.
 */
export async function removeKilledPatchWrites(ctx: Pick<ArchiveContext, 'ralphDir'>): Promise<string[]> {
  const pending = path.join(ctx.ralphDir, 'commits', 'pending');
  let names: string[];
  try {
    names = await fsp.readdir(pending);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw fileError('list', pending, e);
  }
  const removed: string[] = [];
  for (const name of names.sort()) {
    const pid = /\.patch\.tmp-/.test(name) ? atomicTempWriter(name) : undefined;
    if (pid === undefined || pidAlive(pid)) continue;
    const file = path.join(pending, name);
    await fsp.rm(file, { force: true }).catch((e: unknown) => {
      throw fileError('remove', file, e);
    });
    removed.push(file);
  }
  return removed;
}

/** Where a closed patch's file is kept, under `.ralph/commits/`. */
export const ARCHIVE_DIRS = { promoted: 'applied', discarded: 'discarded' } as const;

interface ArchiveContext {
  readonly store: EventStore;
  readonly ralphDir: string;
  readonly projectDir: string;
}

interface ClosedPatch {
  readonly patch_id: string;
  readonly task_id: string;
  readonly status: keyof typeof ARCHIVE_DIRS;
  readonly patch_path: string;
}

/** A closed patch's file moved (or, with `error`, left in pending/: the move failed). */
export interface ArchiveMove {
  readonly patchId: string;
  readonly from: string;
  readonly to: string;
  /** Why the move failed, naming the file, the operation and the errno. */
  readonly error?: string;
}

function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The ids of the patches these events closed. */
export function closedPatchIds(events: readonly StoredEvent[]): string[] {
  return events.filter((e) => e.event_type === 'patch.promoted' || e.event_type === 'patch.discarded').map((e) => e.entity_id);
}

/**
 * Moves the files of closed patches (`only`: these ids; otherwise every closed patch whose
 * file patch_view places in pending/) and records where they went. Returns the moves made;
 * a move that fails (EACCES, EROFS…) is recorded as `patch.archive_failed` and returned
 * with its error, the file left where it was for the next start's sweep.
 */
export async function archiveClosedPatches(ctx: ArchiveContext, only?: readonly string[]): Promise<ArchiveMove[]> {
  if (only !== undefined && only.length === 0) return [];
  const pending = path.join(ctx.ralphDir, 'commits', 'pending');
  const rows = ctx.store
    .all<ClosedPatch>(
      `SELECT patch_id, task_id, status, patch_path FROM patch_view
        WHERE status IN ('promoted', 'discarded') AND patch_path IS NOT NULL
        ORDER BY created_at, patch_id`,
    )
    .filter((p) => only === undefined || only.includes(p.patch_id))
    .filter((p) => path.dirname(absolute(ctx, p.patch_path)) === pending);
  const moves: ArchiveMove[] = [];
  const events: NewEvent[] = [];
  const synced = new Set<string>();
  for (const p of rows) {
    const from = absolute(ctx, p.patch_path);
    const dir = path.join(ctx.ralphDir, 'commits', ARCHIVE_DIRS[p.status]);
    let to = path.join(dir, path.basename(from));
    try {
      if (fs.existsSync(from)) {
        await fsp.mkdir(dir, { recursive: true }).catch((e: unknown) => {
          throw fileError('mkdir', dir, e);
        });
        to = await freeName(from, to);
        if (fs.existsSync(to))
          await fsp.rm(from, { force: true }); // the same bytes are there already
        else
          await fsp.rename(from, to).catch((e: unknown) => {
            throw fileError('rename', from, e);
          });
        for (const d of [dir, pending]) {
          if (synced.has(d)) continue;
          await fsyncDir(d);
          synced.add(d);
        }
      } else if (!fs.existsSync(to)) {
        // Removed on purpose (a change to Ralph's control files keeps no copy): nothing to move.
        continue;
      }
    } catch (e) {
      // Left in pending/ (nothing lost; the next start's sweep tries again), and said: the
      // file, the operation and the errno, for the run's log and in the store.
      const error = e instanceof Error ? e.message : String(e);
      events.push(
        toNewEvent(
          domainEvent('patch.archive_failed', p.patch_id, 'harness', {
            task_id: p.task_id,
            patch_path: p.patch_path,
            to: path.isAbsolute(p.patch_path) ? to : path.relative(ctx.projectDir, to),
            error,
            ...(errnoOf(e) ? { code: errnoOf(e) } : {}),
          }),
        ),
      );
      moves.push({ patchId: p.patch_id, from, to, error });
      continue;
    }
    const recorded = path.isAbsolute(p.patch_path) ? to : path.relative(ctx.projectDir, to);
    events.push(
      toNewEvent(domainEvent('patch.archived', p.patch_id, 'harness', { task_id: p.task_id, patch_path: recorded, from: p.patch_path })),
    );
    moves.push({ patchId: p.patch_id, from, to });
  }
  if (events.length > 0) await ctx.store.append(events);
  return moves;
}

/**
 * Moves every patch file in pending/ that no patch in the log names to `commits/discarded/`,
 * each with a `patch_file.orphaned` event saying where it went. A run killed between writing
 * a patch file and queueing it leaves such a file (the late re-verification's capture, the
 * REQ engine's, a worker's); nothing will ever promote it, and its task's work is redone,
 * but the bytes are kept. Run at start-up, under the writer lock, before anything captures.
 * A file the store names (a live patch's, or a closed one's the closed sweep moves) stays.
 */
export async function archiveOrphanedPatches(
  ctx: ArchiveContext,
  actor = 'harness',
): Promise<{ file: string; to: string; error?: string }[]> {
  const pending = path.join(ctx.ralphDir, 'commits', 'pending');
  let names: string[];
  try {
    names = (await fsp.readdir(pending)).filter((n) => n.endsWith('.patch')).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw fileError('list', pending, e);
  }
  if (names.length === 0) return [];
  const known = new Set(
    ctx.store
      .all<{ patch_path: string | null }>('SELECT patch_path FROM patch_view WHERE patch_path IS NOT NULL')
      .map((p) => absolute(ctx, p.patch_path as string)),
  );
  const orphans = names.map((n) => path.join(pending, n)).filter((f) => !known.has(f));
  if (orphans.length === 0) return [];
  const dir = path.join(ctx.ralphDir, 'commits', ARCHIVE_DIRS.discarded);
  await fsp.mkdir(dir, { recursive: true }).catch((e: unknown) => {
    throw fileError('mkdir', dir, e);
  });
  const moves: { file: string; to: string; error?: string }[] = [];
  for (const from of orphans) {
    let to = path.join(dir, path.basename(from));
    try {
      to = await freeName(from, to);
      if (fs.existsSync(to))
        await fsp.rm(from, { force: true }); // the same bytes are kept there already
      else
        await fsp.rename(from, to).catch((e: unknown) => {
          throw fileError('rename', from, e);
        });
      moves.push({ file: from, to });
    } catch (e) {
      // Left where it is (nothing lost), said in the run's log; the next start tries again.
      moves.push({ file: from, to, error: e instanceof Error ? e.message : String(e) });
    }
  }
  const moved = moves.filter((m) => m.error === undefined);
  if (moved.length === 0) return moves;
  await fsyncDir(dir);
  await fsyncDir(pending);
  const rel = (f: string): string => path.relative(ctx.projectDir, f);
  await ctx.store.append(
    moved.map((m) =>
      toNewEvent(
        domainEvent('patch_file.orphaned', path.basename(m.file), actor, {
          from: rel(m.file),
          patch_path: rel(m.to),
          reason: 'no patch in the log names it (written by a run that died before queueing it)',
        }),
      ),
    ),
  );
  return moves;
}

function absolute(ctx: ArchiveContext, p: string): string {
  return path.isAbsolute(p) ? p : path.resolve(ctx.projectDir, p);
}

/** `to`, or `to` itself when it holds the same bytes as `from`, or the first free `name-N.ext`. */
async function freeName(from: string, to: string): Promise<string> {
  const ext = path.extname(to);
  const stem = to.slice(0, to.length - ext.length);
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? to : `${stem}-${n}${ext}`;
    if (!fs.existsSync(candidate)) return candidate;
    if (Buffer.compare(await fsp.readFile(candidate), await fsp.readFile(from)) === 0) return candidate;
  }
}

const ARCHIVING = Symbol('archivingStore');

/**
 * The store as the control plane uses it: every command that closes a patch moves its file
 * out of pending/ once its events are durable. The move goes through the store itself, not
 * through a wrapper around it (an inbox command's scoped store allows one transaction).
 * A failed move is left to the sweep at the next start: the command's events are durable
 * and the file is not lost, only still in pending/.
 */
export function archivingStore(store: EventStore, dirs: { ralphDir: string; projectDir: string }): EventStore {
  if ((store as { [ARCHIVING]?: true })[ARCHIVING]) return store;
  const after = async (events: readonly StoredEvent[]): Promise<void> => {
    const ids = closedPatchIds(events);
    if (ids.length > 0) await archiveClosedPatches({ store, ...dirs }, ids).catch(() => undefined);
  };
  const execute: EventStore['execute'] = async (decide, options) => {
    const r = await store.execute(decide, options);
    await after(r.events);
    return r;
  };
  const append: EventStore['append'] = async (events, options) => {
    const r = await store.append(events, options);
    await after(r);
    return r;
  };
  return new Proxy(store, {
    get(target, prop): unknown {
      if (prop === ARCHIVING) return true;
      if (prop === 'execute') return execute;
      if (prop === 'append') return append;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
