// The `ralph` exit codes: what a script can decide from them (retry, wait, repair, stop),
// and the one mapping from an error to a code. `ralph help` and the README list them.
// Errors are told apart by name, not instanceof: importing the store's and fs's error
// classes here would load them for `ralph help`, which loads nothing of the engine.

export const EXIT = {
  /** Done. */
  ok: 0,
  /** The command was refused (unknown task, invalid transition, bad input): nothing changed; retrying will not help. */
  failed: 1,
  /** Bad arguments: nothing ran. */
  usage: 2,
  /** Another writer kept the store busy (a running loop, or a command that held it past the wait): nothing changed; retry later. */
  locked: 3,
  /** No `.ralph` store here: run `ralph init`. */
  notInitialized: 4,
  /** A file could not be read or written (disk full, read-only, permission…) before anything was recorded: fix it and retry. */
  io: 5,
  /** The command's events are durable, but a later step failed (or it may have been recorded): do NOT retry it. */
  applied: 6,
  /** ralph.db or the journal is damaged, or less than its history proves: run `ralph repair --fix`. */
  damaged: 7,
  /** Queued to the running loop's inbox, not applied yet: the loop will apply it; do not send it again. */
  queued: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** One line for `ralph help`. */
export const EXIT_CODES_HELP = [
  'Exit codes:',
  '  0 ok',
  '  1 command refused (nothing changed; retrying will not help)',
  '  2 usage error',
  '  3 store busy: locked by a running loop, or by another command for longer than the wait (nothing changed; retry later)',
  '  4 no .ralph store (run `ralph init`)',
  '  5 file error before anything was recorded (disk full, read-only, permission; the message names the file): fix it, then retry',
  '  6 the command was recorded, then a later step failed (or it may have been recorded): do not retry it',
  '  7 the store is damaged or holds less than its history proves: run `ralph repair --fix`',
  "  8 queued to the running loop's inbox, not applied yet: it will be; do not send it again",
].join('\n');

/** The exit code for an error that ended a command before anything of it was durable. */
export function exitCodeOf(e: unknown): ExitCode {
  if (!(e instanceof Error)) return EXIT.failed;
  switch (e.name) {
    case 'UsageError':
    case 'TeamUsageError':
    case 'NoTeamStoreError':
      return EXIT.usage;
    case 'StoreLockedError':
      return EXIT.locked;
    case 'StoreCorruptError':
      return EXIT.damaged;
    case 'StoreFailedError':
      return (e as Error & { recorded?: unknown }).recorded === 'unknown' ? EXIT.applied : EXIT.io;
    case 'FileSystemError':
      return EXIT.io;
    default:
      return EXIT.failed;
  }
}
