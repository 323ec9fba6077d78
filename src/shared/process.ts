// Small facts about OS processes that several layers need (lock owners, markers).
import { readFileSync } from 'node:fs';

/**
 * True when a process with this pid runs (signal 0 probes without signalling; EPERM means
 * it exists but is not ours). A zombie does not run: it has ended and released everything,
 * and only waits for a parent to reap it, which never comes where pid 1 reaps nothing (a
 * container started without an init): its lock must not look held.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return pid <= 0 || !ended(pid);
}

/** Whether /proc says `pid` has ended (zombie or dead); false where there is no /proc. */
function ended(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // "pid (comm) S ...": the state follows the last ')' (comm may hold one).
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state === 'Z' || state === 'X';
}

/** True while any process of the group `pgid` exists. */
export function groupAlive(pgid: number): boolean {
  return pgid > 0 && pidAlive(-pgid);
}

/** Signals a whole process group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
