// Small facts about OS processes that several layers need (lock owners, markers).

/** True when a process with this pid exists (signal 0 probes without signalling; EPERM means it exists but is not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
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
