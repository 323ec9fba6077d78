// The session's names a host shows or records: small and dependency-free, so a host's
// activation path can import them without loading the session.

/** The loop's state as the views show it. */
export type LoopStateKey = 'running' | 'paused' | 'stopped';

/** A loop's own state as the views show it: idle and stopped read as stopped. */
export function loopStateOf(state: string): LoopStateKey {
  if (state === 'paused') return 'paused';
  return state === 'stopped' || state === 'idle' ? 'stopped' : 'running';
}

/** Actor recorded on every command a person issues through a host (VS Code's views, chat). */
export const HUMAN_ACTOR = 'human';
