// The order in which writers waiting for `.ralph/locks/writer.lock` get it: first come,
// first served. Retrying the lock with backoff let a waiter starve: whoever retried at the
// instant the holder let go won, and a command that had waited for seconds kept losing to
// ones that had just arrived. Now each waiter holds a ticket, a file
// `.ralph/locks/writer.wait-<joined>-<pid>-<nonce>.json` whose name sorts by when it joined;
// only the earliest live ticket may take the lock, and a writer that arrives while others
// wait does not take a free lock ahead of them.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { wallMicros } from '../shared/clock';
import { randomHex } from '../shared/randomHex';
import { pidAlive } from '../shared/process';
import { fileError, onFile } from '../shared/fs';

export const TICKET_PREFIX = 'writer.wait-';
const TICKET_SUFFIX = '.json';
/**
 * A ticket its waiter has not refreshed for this long is abandoned (a waiter on another
 * host that died, or a pid reused after a reboot); live waiters refresh it every second.
 */
export const TICKET_STALE_MS = 15_000;
const REFRESH_EVERY_MS = 1_000;

export function isTicketName(name: string): boolean {
  return name.startsWith(TICKET_PREFIX) && name.endsWith(TICKET_SUFFIX);
}

let lastStampUs = 0;

/**
 * Microseconds of wall time, fixed width so names sort by it, and strictly increasing within
 * this process (two tickets of one process never tie). Wall time, not a counter, because
 * the order is between processes; ties between processes are broken by pid, then nonce.
 */
function stamp(): string {
  const us = Math.max(wallMicros(), lastStampUs + 1);
  lastStampUs = us;
  return String(us).padStart(17, '0');
}

interface TicketOwner {
  readonly pid: number;
  readonly host: string;
}

function readOwner(file: string): TicketOwner | 'gone' | 'unreadable' {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    return 'unreadable';
  }
  try {
    const v = JSON.parse(raw) as { pid?: unknown; host?: unknown };
    if (typeof v.pid === 'number' && typeof v.host === 'string') return { pid: v.pid, host: v.host };
  } catch {
    // being written right now, or junk: its age decides
  }
  return 'unreadable';
}

/** False for a ticket whose waiter is gone (it is removed then); true while it may still wait. */
function ticketLive(file: string, now: number): boolean {
  const owner = readOwner(file);
  if (owner === 'gone') return false;
  let mtime: number;
  try {
    mtime = fs.statSync(file).mtimeMs;
  } catch {
    return false;
  }
  const dead = (owner !== 'unreadable' && owner.host === os.hostname() && !pidAlive(owner.pid)) || now - mtime > TICKET_STALE_MS;
  if (dead) fs.rmSync(file, { force: true });
  return !dead;
}

/** The live tickets in `locksDir`, earliest first (abandoned ones are removed on the way). */
export function liveTickets(locksDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(locksDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw fileError('list', locksDir, e);
  }
  const now = Date.now();
  return names
    .filter(isTicketName)
    .sort()
    .filter((n) => ticketLive(path.join(locksDir, n), now));
}

/** One waiter's place in line. */
export class WriterTicket {
  private refreshed = Date.now();
  private left = false;

  private constructor(
    readonly locksDir: string,
    readonly name: string,
    private readonly content: string,
  ) {}

  /** Joins the end of the line. */
  static join(locksDir: string): WriterTicket {
    onFile('mkdir', locksDir, () => fs.mkdirSync(locksDir, { recursive: true }));
    const content = JSON.stringify({ pid: process.pid, host: os.hostname(), joined: new Date().toISOString() });
    for (;;) {
      const name = `${TICKET_PREFIX}${stamp()}-${String(process.pid).padStart(10, '0')}-${randomHex(3)}${TICKET_SUFFIX}`;
      const ticket = new WriterTicket(locksDir, name, content);
      if (ticket.create()) return ticket;
    }
  }

  get file(): string {
    return path.join(this.locksDir, this.name);
  }

  private create(): boolean {
    const file = this.file;
    let fd: number;
    try {
      fd = fs.openSync(file, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw fileError('create', file, e);
    }
    try {
      fs.writeSync(fd, this.content);
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(file, { force: true });
      throw fileError('write', file, e);
    }
    fs.closeSync(fd);
    return true;
  }

  /**
   * How many live waiters are ahead of this one (0: it is its turn). A ticket removed while
   * this waiter was stalled past TICKET_STALE_MS is put back under its own name, so a slow
   * waiter keeps its place rather than going to the end of the line.
   */
  ahead(): number {
    this.refresh();
    let n = 0;
    for (const other of liveTickets(this.locksDir)) {
      if (other === this.name) return n;
      n++;
    }
    return n; // our own ticket vanished between refresh and listing; the next call restores it
  }

  /** Tells other waiters this one is still there (at most once a second). */
  refresh(): void {
    if (this.left) return;
    const now = Date.now();
    if (!fs.existsSync(this.file)) {
      this.create();
      this.refreshed = now;
      return;
    }
    if (now - this.refreshed < REFRESH_EVERY_MS) return;
    this.refreshed = now;
    try {
      const t = new Date(now);
      fs.utimesSync(this.file, t, t);
    } catch {
      // removed as abandoned in between: the next call puts it back
    }
  }

  /** Leaves the line (having taken the lock, or given up). */
  leave(): void {
    if (this.left) return;
    this.left = true;
    try {
      fs.rmSync(this.file, { force: true });
    } catch {
      // a ticket left behind is dropped by the others once this process has exited
    }
  }
}
