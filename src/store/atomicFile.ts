// Crash-safe file replacement: temp file + fsync + rename + fsync of the directory, so a
// reader (or a restart after kill -9) sees either the old bytes or the new, never a mix.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

function tempPathFor(target: string): string {
  return `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

/** True for names writeFileAtomic leaves behind when killed mid-write (cleaned at open). */
export function isAtomicTempOf(target: string, name: string): boolean {
  return name.startsWith(`${path.basename(target)}.tmp-`);
}

/** fsyncs a directory so a rename or create in it survives power loss (no-op where unsupported). */
export function fsyncDirSync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some platforms (Windows) cannot open or fsync a directory; rename is still atomic there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  let h: fsp.FileHandle | undefined;
  try {
    h = await fsp.open(dir, 'r');
    await h.sync();
  } catch {
    // see fsyncDirSync
  } finally {
    await h?.close();
  }
}

export async function writeFileAtomic(target: string, data: Uint8Array): Promise<void> {
  const tmp = tempPathFor(target);
  const h = await fsp.open(tmp, 'w');
  try {
    await h.writeFile(data);
    await h.sync();
  } finally {
    await h.close();
  }
  try {
    await fsp.rename(tmp, target);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(path.dirname(target));
}

export function writeFileAtomicSync(target: string, data: Uint8Array): void {
  const tmp = tempPathFor(target);
  const fd = fs.openSync(tmp, 'w');
  try {
    let off = 0;
    while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, target);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDirSync(path.dirname(target));
}
