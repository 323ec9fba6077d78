// Failures no retry of a task can fix, because they are not about the task: the agent CLI
// is not logged in, the API refuses (429) or is overloaded (529), the CLI is missing or
// crashes before its first turn. When every agent fails with one of these, the loop pauses
// with one shared reason (src/loop/runLifecycle.ts) instead of failing task after task.

export const SHARED_FAILURE_CLASSES = ['not_logged_in', 'rate_limited', 'overloaded', 'cli_missing', 'cli_crashed'] as const;
export type SharedFailureClass = (typeof SHARED_FAILURE_CLASSES)[number];

/** What an `agent.finished` event says about how the invocation ended. */
export interface AgentEnding {
  readonly status: string;
  readonly turns?: number;
  readonly exit_code?: number | null;
  readonly errors?: readonly string[];
  readonly stderr_tail?: string;
}

const PATTERNS: readonly (readonly [SharedFailureClass, RegExp])[] = [
  [
    'not_logged_in',
    /not logged in|please (run )?[`'"]?\/?login|invalid (x-)?api[ _-]?key|authentication[_ ](error|failed)|unauthori[sz]ed|\b401\b|oauth token (has )?expired|missing (an )?api key/i,
  ],
  ['rate_limited', /\b429\b|rate[ _-]?limit|too many requests|usage limit/i],
  ['overloaded', /\b529\b|overloaded/i],
  ['cli_missing', /\bspawn .*ENOENT|command not found|no such file or directory.*(claude|codex)/i],
];

/** The shared class of a failed invocation, or null (a success, or a failure of the task's own). */
export function sharedFailureClass(e: AgentEnding): SharedFailureClass | null {
  if (e.status === 'success' || e.status === 'cancelled') return null;
  const text = [...(e.errors ?? []), e.stderr_tail ?? ''].join('\n');
  for (const [cls, re] of PATTERNS) if (re.test(text)) return cls;
  if (e.exit_code === 127) return 'cli_missing';
  if (e.status === 'crashed' && (e.turns ?? 0) === 0) return 'cli_crashed';
  return null;
}

const WHAT: Record<SharedFailureClass, string> = {
  not_logged_in: 'the agent CLI is not logged in (the API answers 401 or asks for a login)',
  rate_limited: 'the API refuses with 429 (rate or usage limit)',
  overloaded: 'the API is overloaded (529)',
  cli_missing: 'the agent CLI cannot be started (not installed, or not on PATH)',
  cli_crashed: 'the agent CLI crashes before its first turn',
};

const TODO: Record<SharedFailureClass, string> = {
  not_logged_in: 'log the CLI in (or set its API key), then resume',
  rate_limited: 'wait for the limit to reset, then resume',
  overloaded: 'wait a few minutes, then resume',
  cli_missing: 'install it or fix the backend in ralph.config.json (`ralph doctor` checks), then resume',
  cli_crashed: 'run it by hand to see why (`ralph doctor`), then resume',
};

/** The one reason a pause for a shared failure gives. */
export function sharedFailureReason(cls: SharedFailureClass, agents: readonly string[], sample: string): string {
  const who = agents.length === 1 ? `${agents[0] ?? 'the agent'} fails` : `every agent (${agents.join(', ')}) fails`;
  const quote = sample.trim() === '' ? '' : ` (${sample.trim().split('\n')[0]?.slice(0, 160) ?? ''})`;
  return `${who} the same way: ${WHAT[cls]}${quote}; ${TODO[cls]}`;
}
