// The process groups a loop has started (agents' CLIs, gate commands), written down while
// they run so that the next run can end them if this one was killed with SIGKILL: a
// detached group outlives its parent, and a surviving agent would keep writing into a
// worktree the next run resets and reuses. One small file per group under
// `.ralph/locks/processes/`, removed when the group ends; what a dead owner left there is
// reaped (SIGTERM to the group, a grace period, SIGKILL) on the next start.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupAlive, pidAlive, signalGroup } from './process';

/** What spawning code reports to: a group leader's pid as it starts and as it ends. */
export interface ProcessLedgerPort {
  started(pid: number, what: string, cwd: string): void;
  ended(pid: number): void;
}

interface LedgerEntry {
  readonly pid: number;
  /** The process that started the group (the loop); its death orphans the group. */
  readonly owner: number;
  /** Linux start time of the leader in clock ticks (guards against a reused pid); null elsewhere. */
  readonly startTicks: string | null;
  readonly what: string;
  readonly cwd: string;
}

export interface ReapedGroup {
  readonly pid: number;
  readonly what: string;
  readonly cwd: string;
  /** False when the group had already ended (only its record was left). */
  readonly killed: boolean;
}

/** The start time of a process from /proc (field 22 of stat), or null where there is no /proc. */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

export class ProcessLedger implements ProcessLedgerPort {
  constructor(readonly dir: string) {}

  started(pid: number, what: string, cwd: string): void {
    const entry: LedgerEntry = { pid, owner: process.pid, startTicks: processStartTicks(pid), what, cwd };
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(join(this.dir, `${pid}.json`), JSON.stringify(entry));
    } catch {
      // Best effort: without the record only a crash's leftovers go unreaped.
    }
  }

  ended(pid: number): void {
    rmSync(join(this.dir, `${pid}.json`), { force: true });
  }

  /**
   * Ends the groups whose owner is dead (a run killed with SIGKILL), then forgets them. A
   * record whose leader pid now belongs to another process (a different start time) is
   * dropped without signalling anything, as is one without a recorded start time (no /proc).
   */
  async reap(graceMs = 2000): Promise<ReapedGroup[]> {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => /^\d+\.json$/.test(n));
    } catch {
      return [];
    }
    const orphans: LedgerEntry[] = [];
    for (const name of names) {
      let e: LedgerEntry;
      try {
        e = JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as LedgerEntry;
      } catch {
        rmSync(join(this.dir, name), { force: true });
        continue;
      }
      if (e.owner === process.pid || pidAlive(e.owner)) continue;
      orphans.push(e);
    }
    const out: ReapedGroup[] = [];
    const live = orphans.filter((e) => {
      // Without a recorded start time (no /proc: macOS, Windows) the pid may name someone
      // else's process by now: never signal on a guess.
      const reused = e.startTicks === null || (pidAlive(e.pid) && processStartTicks(e.pid) !== e.startTicks);
      const alive = !reused && groupAlive(e.pid);
      if (!alive) out.push({ pid: e.pid, what: e.what, cwd: e.cwd, killed: false });
      return alive;
    });
    for (const e of live) signalGroup(e.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    // Polling with a short back-off: a foreign process group offers no event to wait on.
    for (let delay = 20; live.some((e) => groupAlive(e.pid)) && Date.now() < deadline; delay = Math.min(delay * 2, 200)) {
      await new Promise((r) => setTimeout(r, delay));
    }
    for (const e of live) {
      if (groupAlive(e.pid)) signalGroup(e.pid, 'SIGKILL');
      out.push({ pid: e.pid, what: e.what, cwd: e.cwd, killed: true });
    }
    for (const e of orphans) rmSync(join(this.dir, `${e.pid}.json`), { force: true });
    return out;
  }
}
