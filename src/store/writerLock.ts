// The single-writer lock `.ralph/locks/writer.lock`: created with O_EXCL, kept alive by a
// heartbeat, taken over (under a short-lived mutex file) when its holder is dead.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { StoreLockedError, type LockHolder } from './errors';
import type { Clock } from './eventIds';
import { pidAlive } from '../shared/process';
import { fileError, onFile } from '../shared/fs';

export const LOCK_FILE = 'writer.lock';
const MUTEX_SUFFIX = '.takeover';
/** A takeover mutex older than this was left by a process killed mid-takeover. */
const MUTEX_STALE_MS = 10_000;

const holderSchema = z.object({
  pid: z.number().int(),
  host: z.string(),
  started: z.string(),
  heartbeat: z.string(),
  runId: z.string(),
  drainsInbox: z.boolean().optional(),
});

export type TakeoverReason = 'pid_dead' | 'heartbeat_stale' | 'unreadable';

export interface Takeover {
  readonly previous: LockHolder | undefined;
  readonly reason: TakeoverReason;
}

export interface WriterLockOptions {
  readonly locksDir: string;
  readonly runId: string;
  readonly clock?: Clock;
  /** A heartbeat older than this means the holder is gone (default 30 s). */
  readonly staleMs?: number;
  /** How often the holder refreshes its heartbeat (default 5 s). */
  readonly heartbeatMs?: number;
  /** Called once if another process took the lock from us. */
  readonly onLost?: (holder: LockHolder | undefined) => void;
  /** Says in the lock that this holder drains `.ralph/inbox/` (a running loop). */
  readonly drainsInbox?: boolean;
}

function readHolder(file: string): { raw: string; holder: LockHolder | undefined } | undefined {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('read', file, e);
  }
  try {
    return { raw, holder: holderSchema.parse(JSON.parse(raw)) };
  } catch {
    return { raw, holder: undefined };
  }
}

/** Who `file` says holds the lock: undefined when nobody does or it cannot be parsed yet. */
export function lockHolderOf(file: string): LockHolder | undefined {
  return readHolder(file)?.holder;
}

/** Why the holder is dead, or undefined when it may still be alive. */
export function deadReason(holder: LockHolder, now: number, staleMs: number, host = os.hostname()): TakeoverReason | undefined {
  if (holder.host === host && !pidAlive(holder.pid)) return 'pid_dead';
  const beat = Date.parse(holder.heartbeat);
  if (!Number.isFinite(beat) || now - beat > staleMs) return 'heartbeat_stale';
  return undefined;
}

function mtimeMs(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Creates `file` exclusively; false if it exists. */
function createExclusive(file: string, content: string, durable = true): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw fileError('create', file, e);
  }
  try {
    onFile('write', file, () => {
      fs.writeSync(fd, content);
      if (durable) fs.fsyncSync(fd);
    });
  } catch (e) {
    fs.closeSync(fd);
    try {
      // A half-written lock would read as a holder killed mid-create and block others for staleMs.
      fs.rmSync(file, { force: true });
    } catch {
      // the error being reported matters more
    }
    throw e;
  }
  fs.closeSync(fd);
  return true;
}

/** A mutex whose creator was killed mid-takeover or mid-heartbeat must not block forever. */
function mutexAbandoned(mutex: string, now: number): boolean {
  const m = mtimeMs(mutex);
  if (m === undefined) return true;
  if (now - m > MUTEX_STALE_MS) return true;
  try {
    const owner = JSON.parse(fs.readFileSync(mutex, 'utf8')) as { pid?: unknown; host?: unknown };
    return owner.host === os.hostname() && typeof owner.pid === 'number' && !pidAlive(owner.pid);
  } catch {
    return false; // being written right now
  }
}

/** Holds the takeover mutex while `fn` runs; undefined when another live process holds it. */
function withMutex<T>(mutex: string, now: number, fn: () => T): T | undefined {
  const me = JSON.stringify({ pid: process.pid, host: os.hostname() });
  if (!createExclusive(mutex, me, false)) {
    if (mutexAbandoned(mutex, now)) fs.rmSync(mutex, { force: true });
    if (!createExclusive(mutex, me, false)) return undefined;
  }
  try {
    return fn();
  } finally {
    fs.rmSync(mutex, { force: true });
  }
}

export class WriterLock {
  private timer: NodeJS.Timeout | undefined;
  private seen: { ino: number; mtimeMs: number; size: number } | undefined;
  private lost = false;
  private released = false;

  private constructor(
    readonly file: string,
    readonly holder: LockHolder,
    private readonly clock: Clock,
    private readonly onLost: ((holder: LockHolder | undefined) => void) | undefined,
  ) {}

  /**
   * Takes the lock or throws StoreLockedError naming the live holder. A dead holder's
   * lock is taken over; the returned `takeover` says whose and why (the store records it).
   */
  static acquire(opts: WriterLockOptions): { lock: WriterLock; takeover?: Takeover } {
    const clock = opts.clock ?? Date.now;
    const staleMs = opts.staleMs ?? 30_000;
    onFile('mkdir', opts.locksDir, () => fs.mkdirSync(opts.locksDir, { recursive: true }));
    const file = path.join(opts.locksDir, LOCK_FILE);
    const mutex = file + MUTEX_SUFFIX;
    for (let attempt = 0; attempt < 5; attempt++) {
      const nowIso = new Date(clock()).toISOString();
      const me: LockHolder = {
        pid: process.pid,
        host: os.hostname(),
        started: nowIso,
        heartbeat: nowIso,
        runId: opts.runId,
        ...(opts.drainsInbox ? { drainsInbox: true } : {}),
      };
      if (createExclusive(file, JSON.stringify(me))) {
        return { lock: WriterLock.start(file, me, clock, opts) };
      }
      const seen = readHolder(file);
      if (!seen) continue; // released between our create and read: try again
      let reason: TakeoverReason | undefined;
      if (seen.holder) reason = deadReason(seen.holder, clock(), staleMs);
      else {
        // Unparseable: a holder killed between create and write, or one writing right now.
        const m = mtimeMs(file);
        reason = m !== undefined && clock() - m > staleMs ? 'unreadable' : undefined;
      }
      if (!reason) throw new StoreLockedError(file, seen.holder);
      const took = withMutex(mutex, clock(), () => {
        const again = readHolder(file);
        if (again && again.raw !== seen.raw) return false; // someone else took it over first
        fs.rmSync(file, { force: true });
        return createExclusive(file, JSON.stringify(me));
      });
      if (took) {
        return { lock: WriterLock.start(file, me, clock, opts), takeover: { previous: seen.holder, reason } };
      }
      if (took === undefined) throw new StoreLockedError(file, seen.holder);
    }
    throw new StoreLockedError(file, readHolder(file)?.holder);
  }

  private static start(file: string, me: LockHolder, clock: Clock, opts: WriterLockOptions): WriterLock {
    const lock = new WriterLock(file, me, clock, opts.onLost);
    lock.remember();
    lock.timer = setInterval(() => lock.beat(), opts.heartbeatMs ?? 5_000);
    lock.timer.unref();
    return lock;
  }

  private isOurs(h: LockHolder | undefined): boolean {
    return h !== undefined && h.pid === this.holder.pid && h.host === this.holder.host && h.started === this.holder.started;
  }

  /** Refreshes the heartbeat (atomically, under the takeover mutex); detects a lost lock. */
  beat(): void {
    if (this.released || this.lost) return;
    try {
      withMutex(this.file + MUTEX_SUFFIX, this.clock(), () => {
        const cur = readHolder(this.file);
        if (!this.isOurs(cur?.holder)) {
          this.markLost(cur?.holder);
          return;
        }
        const tmp = `${this.file}.beat-${process.pid}`;
        fs.writeFileSync(tmp, JSON.stringify({ ...this.holder, heartbeat: new Date(this.clock()).toISOString() }));
        fs.renameSync(tmp, this.file);
        this.remember();
      });
    } catch {
      // A missed heartbeat is harmless unless it lasts staleMs; the next tick retries.
    }
  }

  /**
   * Cheap check, run before every journal write, that the lock is still ours: a stat
   * compared with the file as we last wrote it; only a changed file is re-read.
   */
  verify(): boolean {
    if (this.lost) return false;
    if (this.released) return false;
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      this.markLost(undefined);
      return false;
    }
    if (st.ino === this.seen?.ino && st.mtimeMs === this.seen.mtimeMs && st.size === this.seen.size) return true;
    const cur = readHolder(this.file);
    if (!this.isOurs(cur?.holder)) {
      this.markLost(cur?.holder);
      return false;
    }
    this.remember();
    return true;
  }

  private remember(): void {
    try {
      const st = fs.statSync(this.file);
      this.seen = { ino: st.ino, mtimeMs: st.mtimeMs, size: st.size };
    } catch {
      this.seen = undefined;
    }
  }

  private markLost(holder: LockHolder | undefined): void {
    if (this.lost) return;
    this.lost = true;
    if (this.timer) clearInterval(this.timer);
    this.onLost?.(holder);
  }

  get isLost(): boolean {
    return this.lost;
  }

  /** Removes the lock file if it is still ours. Synchronous so the exit handler can call it. */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.timer) clearInterval(this.timer);
    try {
      if (this.isOurs(readHolder(this.file)?.holder)) fs.rmSync(this.file, { force: true });
    } catch {
      // best effort: a stale lock is taken over by the next writer
    }
  }
}
