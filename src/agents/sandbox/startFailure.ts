// An agent that never started inside its sandbox: bubblewrap could not set it up (`bwrap:
// ...`), or the CLI could not load what it needs there (a module, its binary, a file in a
// folder the sandbox hides). Retrying the same invocation fails the same way, so it is not
// an agent failure to reflect on: the loop stops and says what the sandbox said.
import type { Confinement } from './confinement';

/** The result subtype a backend gives a run that did not start inside its sandbox. */
export const SANDBOX_START_FAILED = 'sandbox_start_failed';

export interface StartFacts {
  /** The process wrote at least one line on stdout (the CLI ran far enough to speak). */
  readonly sawOutput: boolean;
  readonly exitCode: number | null;
  /** Set when the harness stopped the process (abort, timeout, turn limit). */
  readonly stopReason?: string | undefined;
  readonly stderrTail: string;
}

const MAX_STDERR = 1500;

/** The message for a run that ended before its first output line inside bubblewrap, or null. */
export function sandboxStartFailure(confinement: Confinement, facts: StartFacts): string | null {
  if (confinement.kind !== 'bwrap' || facts.sawOutput || facts.stopReason !== undefined || facts.exitCode === 0) return null;
  const stderr = facts.stderrTail.trim();
  const said = stderr.length > MAX_STDERR ? `…${stderr.slice(-MAX_STDERR)}` : stderr;
  const how = facts.exitCode === null ? 'killed by a signal' : `exit ${facts.exitCode}`;
  const who = /^bwrap: /m.test(stderr) ? 'bubblewrap could not start the agent' : 'the agent did not start inside its sandbox';
  return `${who} (${how} before any output): ${said.length > 0 ? said : '(nothing on stderr)'}`;
}
