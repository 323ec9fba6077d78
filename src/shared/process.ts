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
