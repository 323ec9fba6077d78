// Writing ralph.db at a checkpoint: the new image atomically, the one it replaces kept as
// ralph.db.prev (the journal keeps every record since that one was written, so prev plus the
// journal is always a complete history, even when ralph.db itself is lost or damaged).
//
// For engineer "speed" (issue 15, checkpoint exports block the extension host's main thread
// for 240–390 ms at 100k events): a checkpoint is three steps, run in this order by
// SqlJsEventStore.runCheckpoint — (1) export the in-memory database (`DbSnapshotter`), (2)
// write it (`CheckpointWriter`, below: pure file system work, no sql.js, safe to run in a
// worker thread as it is), (3) trim the journal, which must wait for (2)'s DbSum. To move
// (1) and (2) off the main thread, give the store another DbSnapshotter/CheckpointWriter
// pair (e.g. a worker holding a replica fed by onDidAppend) and keep the order; the
// durability rules (rotation to .prev, what the journal keeps) stay here and in the store.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { fileError, fsyncDir, fsyncDirSync, isAtomicTempOf, onFile, onFileAsync, writeFileAtomic, writeFileAtomicSync } from '../shared/fs';
import { crc32, type DbSum } from './journal';

export const DB_FILE = 'ralph.db';
export const PREV_DB_FILE = 'ralph.db.prev';
/**
 * The sum of the image a checkpoint is about to write over a ralph.db changed outside Ralph
 * (written before that ralph.db is replaced, removed once the journal describes the new
 * one): a writer killed in between left a ralph.db neither the journal's header nor
 * ralph.db.prev names, and the next open knows it by this sum as the checkpoint's own.
 */
export const NEXT_DB_FILE = 'ralph.db.next';
/** Where a ralph.db changed outside Ralph is kept when a checkpoint replaces it (under .ralph/). */
export const CHANGED_DB_DIR = 'backup';

/** A database image and the last event id it holds. */
export interface DbImage {
  readonly data: Uint8Array;
  readonly upTo: string;
  /** CRC-32 of `data` when it was computed where the image was taken (the checkpoint replica's worker). */
  readonly crc?: number;
}

/** Produces the image a checkpoint writes (today: sql.js's export, on the calling thread). */
export interface DbSnapshotter {
  snapshot(): DbImage;
}

/** Writes checkpoint images as ralph.db; see the header comment for what may move to a worker. */
export interface CheckpointWriter {
  /**
   * Writes `image` as ralph.db durably (temp + fsync + rename + directory fsync). With
   * `rotate`, the current ralph.db is first kept as ralph.db.prev (a hard link, so ralph.db
   * never goes missing); without, ralph.db.prev is left alone.
   */
  write(image: DbImage, rotate: boolean): Promise<DbSum>;
  /** The same, synchronously, for the process 'exit' path. */
  writeSync(image: DbImage, rotate: boolean): DbSum;
}

export function sumOf(image: DbImage): DbSum {
  return { size: image.data.length, crc: image.crc ?? crc32(image.data), upTo: image.upTo };
}

export function sameSum(a: DbSum | undefined, b: DbSum | undefined): boolean {
  return a !== undefined && b !== undefined && a.size === b.size && a.crc === b.crc;
}

/** Link errors that mean "this file system has no hard links": copy instead. */
function noHardLinks(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EMLINK' || code === 'ENOSYS' || code === 'EOPNOTSUPP';
}

/**
 * True when ralph.db.prev already is ralph.db (one inode): a checkpoint that rotated and then
 * failed to write the new image leaves them so. Rotating again would be a no-op rename
 * (POSIX leaves both names in place), so there is nothing to keep.
 */
function alreadyKept(dbPath: string, prevPath: string): boolean {
  try {
    const a = fs.statSync(dbPath);
    const b = fs.statSync(prevPath);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

function prevTemp(ralphDir: string): string {
  return path.join(ralphDir, `${PREV_DB_FILE}.tmp-${process.pid}-${Date.now().toString(36)}`);
}

export function fileCheckpointWriter(ralphDir: string): CheckpointWriter {
  const dbPath = path.join(ralphDir, DB_FILE);
  const prevPath = path.join(ralphDir, PREV_DB_FILE);
  return {
    async write(image, rotate) {
      if (rotate && !alreadyKept(dbPath, prevPath)) {
        const tmp = prevTemp(ralphDir);
        try {
          await fsp.link(dbPath, tmp);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') rotate = false;
          else if (noHardLinks(e)) await writeFileAtomic(tmp, await onFileAsync('read', dbPath, () => fsp.readFile(dbPath)));
          else throw fileError('link', prevPath, e);
        }
        if (rotate) {
          await onFileAsync('rename', prevPath, () => fsp.rename(tmp, prevPath));
          await fsyncDir(ralphDir);
        }
      }
      await writeFileAtomic(dbPath, image.data);
      return sumOf(image);
    },
    writeSync(image, rotate) {
      if (rotate && !alreadyKept(dbPath, prevPath)) {
        const tmp = prevTemp(ralphDir);
        try {
          fs.linkSync(dbPath, tmp);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') rotate = false;
          else if (noHardLinks(e))
            writeFileAtomicSync(
              tmp,
              onFile('read', dbPath, () => fs.readFileSync(dbPath)),
            );
          else throw fileError('link', prevPath, e);
        }
        if (rotate) {
          onFile('rename', prevPath, () => fs.renameSync(tmp, prevPath));
          fsyncDirSync(ralphDir);
        }
      }
      writeFileAtomicSync(dbPath, image.data);
      return sumOf(image);
    },
  };
}

/** The sum in ralph.db.next, when there is one that reads as a sum (anything else is ignored). */
export function readNextSum(ralphDir: string): DbSum | undefined {
  const file = path.join(ralphDir, NEXT_DB_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('read', file, e);
  }
  try {
    const v = JSON.parse(text) as { size?: unknown; crc?: unknown };
    if (typeof v.size === 'number' && Number.isInteger(v.size) && typeof v.crc === 'number' && Number.isInteger(v.crc))
      return { size: v.size, crc: v.crc, upTo: '' };
  } catch {
    // not ours: no sum
  }
  return undefined;
}

/** Whether ralph.db is ralph.db.prev (one inode): the rotation's link, the new image not yet written. */
export function dbIsPrev(ralphDir: string): boolean {
  return alreadyKept(path.join(ralphDir, DB_FILE), path.join(ralphDir, PREV_DB_FILE));
}

/**
 * Before a checkpoint replaces a ralph.db whose bytes are not the ones this writer last wrote
 * (changed outside Ralph): that file is kept as `.ralph/backup/ralph.db.changed-<time>` (a
 * hard link, else a copy), and the new image's sum goes to ralph.db.next, so a kill before
 * the journal's trim leaves a ralph.db the next open accepts. Returns the kept file.
 */
export function keepChangedDb(ralphDir: string, next: DbSum, now: Date): string | undefined {
  const dbPath = path.join(ralphDir, DB_FILE);
  const dir = path.join(ralphDir, CHANGED_DB_DIR);
  onFile('mkdir', dir, () => fs.mkdirSync(dir, { recursive: true }));
  const kept = path.join(dir, `${DB_FILE}.changed-${now.toISOString().replace(/[:.]/g, '-')}`);
  try {
    fs.linkSync(dbPath, kept);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EEXIST') return kept; // kept already within this millisecond
    if (!noHardLinks(e)) throw fileError('link', kept, e);
    writeFileAtomicSync(
      kept,
      onFile('read', dbPath, () => fs.readFileSync(dbPath)),
    );
  }
  fsyncDirSync(dir);
  writeFileAtomicSync(path.join(ralphDir, NEXT_DB_FILE), JSON.stringify({ size: next.size, crc: next.crc }));
  return kept;
}

/** Drops ralph.db.next once the journal's header names the ralph.db on disk. */
export function clearNextSum(ralphDir: string): void {
  const file = path.join(ralphDir, NEXT_DB_FILE);
  onFile('remove', file, () => fs.rmSync(file, { force: true }));
}

/** True for the temp files a checkpoint killed mid-write leaves in .ralph (cleaned by the next writer). */
export function isCheckpointTemp(name: string): boolean {
  return isAtomicTempOf(DB_FILE, name) || isAtomicTempOf(PREV_DB_FILE, name);
}
