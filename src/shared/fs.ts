// File-system facts and writes every layer shares: the one crash-safe file replacement
// (temp + fsync + rename + fsync of the directory) and an error that names the file and the
// operation (Node's own ENOSPC/EIO errors from write and fsync name neither).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { randomHex } from './randomHex';

/** What was being done to the file when it failed. */
export type FileOperation =
  'open' | 'read' | 'write' | 'fsync' | 'rename' | 'create' | 'remove' | 'mkdir' | 'truncate' | 'link' | 'copy' | 'stat' | 'list';

/** An I/O error with the file and the operation, e.g. `could not write /p/.ralph/ralph.db: no space left on device (ENOSPC)`. */
export class FileSystemError extends Error {
  override readonly name = 'FileSystemError';
  /** The errno code (ENOSPC, EISDIR, EACCES, EROFS, …) when the system gave one. */
  readonly code: string | undefined;
  constructor(
    readonly operation: FileOperation,
    readonly file: string,
    override readonly cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`could not ${operation} ${file}: ${describeCause(cause)}`);
    this.code = code;
  }
}

/** `ENOSPC: no space left on device, write` -> `no space left on device (ENOSPC)`. */
function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  if (code === undefined) return cause.message;
  const text = cause.message
    .replace(new RegExp(`^${code}: `), '')
    .replace(/, \w+(?: '.*')?$/, '')
    .trim();
  return `${text || code} (${code})`;
}

/** Wraps an error of `operation` on `file`; an error that already names its file passes through. */
export function fileError(operation: FileOperation, file: string, e: unknown): Error {
  if (e instanceof FileSystemError) return e;
  if (e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string') return new FileSystemError(operation, file, e);
  return e instanceof Error ? e : new Error(String(e));
}

/** Runs a synchronous file operation, rethrowing its failure as a FileSystemError. */
export function onFile<T>(operation: FileOperation, file: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw fileError(operation, file, e);
  }
}

/** Runs an asynchronous file operation, rethrowing its failure as a FileSystemError. */
export async function onFileAsync<T>(operation: FileOperation, file: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fileError(operation, file, e);
  }
}

/** True when the path exists (following links); never throws. */
export async function pathExists(p: string): Promise<boolean> {
  try {
    await fsp.access(p);
    return true;
  } catch {
    return false;
  }
}

const TEMP_MARK = '.tmp-';

function tempPathFor(target: string): string {
  return `${target}${TEMP_MARK}${process.pid}-${randomHex(4)}`;
}

/** True for names writeFileAtomic leaves behind when killed mid-write (cleaned by their owners). */
export function isAtomicTempOf(target: string, name: string): boolean {
  return name.startsWith(`${path.basename(target)}${TEMP_MARK}`);
}

/** The pid of the process writing the atomic-write temp `name` (`<target>.tmp-<pid>-<hex>`), if it is one. */
export function atomicTempWriter(name: string): number | undefined {
  const m = /\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * Directories cannot be opened or fsynced everywhere (Windows; some network and FUSE file
 * systems answer EINVAL or ENOTSUP); the rename is still atomic there, only not yet durable.
 */
function dirSyncUnsupported(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return process.platform === 'win32' || code === 'EINVAL' || code === 'ENOTSUP' || code === 'EPERM' || code === 'EISDIR';
}

/** fsyncs a directory so a rename or create in it survives power loss. */
export function fsyncDirSync(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (e) {
    if (!dirSyncUnsupported(e)) throw fileError('fsync', dir, e);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  let h: fsp.FileHandle | undefined;
  try {
    h = await fsp.open(dir, 'r');
    await h.sync();
  } catch (e) {
    if (!dirSyncUnsupported(e)) throw fileError('fsync', dir, e);
  } finally {
    await h?.close();
  }
}

export interface AtomicWriteOptions {
  /** Create the parent directory first (default false). */
  readonly mkdir?: boolean;
  /** File mode of a new file (default 0o666 before umask). */
  readonly mode?: number;
}

function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // the error being reported matters more than a leftover temp, which its owner cleans
  }
}

function toBytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

/**
 * Replaces `target` so that a reader, or a restart after kill -9 or power loss, sees either
 * the old bytes or the new, never a mix: a temp file in the same directory, written and
 * fsynced, renamed over the target, then the directory fsynced. Failures name the target.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(target);
  if (options.mkdir) await onFileAsync('mkdir', dir, () => fsp.mkdir(dir, { recursive: true }));
  const bytes = toBytes(data);
  const tmp = tempPathFor(target);
  const h = await onFileAsync('create', target, () => fsp.open(tmp, 'wx', options.mode));
  try {
    try {
      let off = 0;
      while (off < bytes.length) off += (await h.write(bytes, off, bytes.length - off)).bytesWritten;
    } catch (e) {
      throw fileError('write', target, e);
    }
    await onFileAsync('fsync', target, () => h.sync());
  } catch (e) {
    await h.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await h.close();
  try {
    await fsp.rename(tmp, target);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw fileError('rename', target, e);
  }
  await fsyncDir(dir);
}

/** writeFileAtomic for synchronous paths (process 'exit' handlers, synchronous renderers). */
export function writeFileAtomicSync(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const dir = path.dirname(target);
  if (options.mkdir) onFile('mkdir', dir, () => fs.mkdirSync(dir, { recursive: true }));
  const bytes = toBytes(data);
  const tmp = tempPathFor(target);
  const fd = onFile('create', target, () => fs.openSync(tmp, 'wx', options.mode));
  try {
    try {
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    } catch (e) {
      throw fileError('write', target, e);
    }
    onFile('fsync', target, () => fs.fsyncSync(fd));
  } catch (e) {
    fs.closeSync(fd);
    removeQuietly(tmp);
    throw e;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, target);
  } catch (e) {
    removeQuietly(tmp);
    throw fileError('rename', target, e);
  }
  fsyncDirSync(dir);
}
