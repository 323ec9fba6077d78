// The writer side of a project as a host sees it: which live process (if any) holds the
// writer lock, and a short-lived writer opened for one command when nobody does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS } from '../control';
import { LOCK_FILE, LOCKS_DIR, openStore } from '../store';
import type { EventStore, LockHolder } from '../store';
import { deadReason } from '../store/writerLock';
import { busyErrorOf } from './errors';
import { keepingStatusImage } from '../control/statusImage';

/**
 * The lock holder when a live process is the writer (its heartbeat is fresh and its pid
 * alive); undefined when nobody is, or when the holder is this process's own loop (`ownLoop`).
 */
export function liveWriter(ralphDir: string, ownLoop: boolean): LockHolder | undefined {
  const file = path.join(ralphDir, LOCKS_DIR, LOCK_FILE);
  let holder: LockHolder;
  try {
    holder = JSON.parse(fs.readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
  if (typeof holder.pid !== 'number') return undefined;
  if (holder.pid === process.pid && ownLoop) return undefined;
  if (deadReason(holder, Date.now(), 30_000) !== undefined) return undefined;
  return holder;
}

/** A writer for one command (waits up to 10 s for the lock); throws LoopBusyError when another process keeps it. */
export async function openShortLivedWriter(ralphDir: string): Promise<EventStore> {
  try {
    return await openStore({
      ralphDir,
      mode: 'writer',
      projections: CONTROL_PROJECTIONS,
      runId: `vscode_${process.pid}`,
      lockWaitMs: 10_000,
      ...keepingStatusImage(ralphDir),
    });
  } catch (e) {
    throw busyErrorOf(e);
  }
}
