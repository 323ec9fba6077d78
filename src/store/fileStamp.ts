// Reading a file together with its identity (inode, size, mtime), so an observer can tell
// that ralph.db was replaced by a checkpoint and what it read belongs to which version.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { fileError } from '../shared/fs';

export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export function stampOf(st: fs.Stats): FileStamp {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

export function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  return a?.ino === b?.ino && a?.size === b?.size && a?.mtimeMs === b?.mtimeMs;
}

export function statOrUndefined(file: string): FileStamp | undefined {
  try {
    return stampOf(fs.statSync(file));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('stat', file, e);
  }
}

export interface FileRead {
  readonly data: Uint8Array;
  readonly stamp: FileStamp;
}

/**
 * readWithStamp on the thread pool, with `meanwhile` run on this thread while the pool
 * copies the bytes in (on a big ralph.db most of the read is the kernel faulting in fresh
 * pages). `meanwhile` starts only after the file is open, so what it reads is read after
 * the file as surely as if the read had finished: a file replaced by rename keeps, behind
 * an open handle, the bytes it had when opened.
 */
export async function readWithStampWhile<T>(file: string, meanwhile: () => T): Promise<{ read: FileRead | undefined; result: T }> {
  let h: fsp.FileHandle;
  try {
    h = await fsp.open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { read: undefined, result: meanwhile() };
    throw fileError('open', file, e);
  }
  let st: fs.Stats;
  try {
    st = await h.stat();
  } catch (e) {
    await h.close();
    throw fileError('read', file, e);
  }
  const reading = readOpened(h, file, st);
  let result: T;
  try {
    result = meanwhile();
  } catch (e) {
    await reading.catch(() => undefined);
    throw e;
  }
  return { read: await reading, result };
}

/** Issues the first read before its first await, so the copy runs while the caller works. */
async function readOpened(h: fsp.FileHandle, file: string, st: fs.Stats): Promise<FileRead> {
  try {
    const data = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < st.size) {
      const { bytesRead } = await h.read(data, got, st.size - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { data: data.subarray(0, got), stamp: stampOf(st) };
  } catch (e) {
    throw fileError('read', file, e);
  } finally {
    await h.close();
  }
}

/** Reads a file and its stamp from one open, so the two always describe the same inode. */
export function readWithStamp(file: string): FileRead | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('open', file, e);
  }
  try {
    const st = fs.fstatSync(fd);
    const data = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < st.size) {
      const n = fs.readSync(fd, data, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    return { data: data.subarray(0, got), stamp: stampOf(st) };
  } catch (e) {
    throw fileError('read', file, e);
  } finally {
    fs.closeSync(fd);
  }
}
