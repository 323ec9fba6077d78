// Which `ralph` calls the warm process runs (warmAddress.ts says why it exists and where
// it listens): decided in the entry point from the arguments and the environment alone, so
// that `ralph help`, a usage error or a host command loads nothing more.

/** The argument that starts dist/cli.js as the warm process (not a command users type). */
export const WARM_SERVE = '__warm-serve';

/**
 * The commands a warm process runs: the store's short control commands. Host commands
 * (init, start, worker, logs, repair, req, mcp, demo, ...) run in their own process: they
 * run long, read the terminal or answer signals.
 */
export const WARM_COMMANDS: ReadonlySet<string> = new Set([
  'emit-event',
  'transition-task',
  'pick-ready-task',
  'claim-ready-task',
  'queue-patch',
  'promote-patch',
  'discard-patch',
  'classify-risk',
  'policy-check',
  'release-claims',
  'drain-inbox',
  'get-deferred-queue',
  'should-review-deferred',
  'resolve-deferred',
  'expire-stale-deferrals',
  'process-proposals',
  'get-deferred-proposals',
  'resolve-proposal',
  'render-state',
  'render-backlog',
  'sync-backlog',
  'status',
  'show',
  'rebuild',
]);

/** The command a call names, past `--dir D` / `--dir=D`. */
export function commandName(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--dir') i++;
    else if (!a.startsWith('--dir=')) return a;
  }
  return undefined;
}

/**
 * Whether this call may go to the warm process: a command it serves, and not RALPH_CLI_SERVER=0,
 * Windows (no Unix sockets), Node started with flags, or git tracing (which writes to this
 * process's stderr).
 */
export function wantsWarm(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform === 'win32' || env['RALPH_CLI_SERVER'] === '0' || env['RALPH_GIT_TRACE']) return false;
  if (process.execArgv.length > 0) return false;
  const name = commandName(argv);
  return name !== undefined && WARM_COMMANDS.has(name);
}
