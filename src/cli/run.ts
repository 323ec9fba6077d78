// Dispatches `ralph <command>`: global options (`--dir D`, default the current
// directory; the ralph dir is D/.ralph), opening the event store the way the command
// needs it, and turning errors into clear messages and exit codes. Nothing here loads the
// store or the engine: the command tables are plain data and each command loads what it
// runs (lazy.ts), so `ralph help` and usage errors stay cheap.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoreMode } from '../store/types';
import type { ControlContext } from '../control/context';
import { lazyGitPort, loadStatusPath, loadIds, loadProjectConfig, loadStoreUrl, loadWriterAccess } from './lazy';
import { parseArgs, UsageError } from './args';
import { CONTROL_COMMANDS, type CliIo, type CommandSpec } from './controlCommands';
import { EXIT, EXIT_CODES_HELP, exitCodeOf } from './exitCodes';
import { HOST_COMMANDS } from './hostCommands';
import type { OpenControl } from './writerAccess';

/** Exit codes: documented in `ralph help` (exitCodes.ts). */
export { EXIT } from './exitCodes';
export { warmUp } from './lazy';

const processIo: CliIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

function usage(): string {
  const all = [...HOST_COMMANDS, ...CONTROL_COMMANDS.filter((c) => !HOST_COMMANDS.some((h) => h.name === c.name))];
  const width = Math.max(...all.map((c) => c.name.length));
  const lines = all.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: ralph [--dir D] <command> [args] [--json]',
    '',
    'The Ralph Loop control plane. D defaults to the current directory; state lives in D/.ralph.',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `ralph help <command>` for its arguments.',
    '',
    'Beside other short-lived ralph commands, a command waits its turn for the store (it gives up when the lock has not',
    'changed hands for 10 s); beside a running loop, emit-event,',
    "transition-task, claim-ready-task, discard-patch and resolve-deferred go through the loop's inbox and wait (up to 30 s)",
    'to print what the loop applied; other state-changing commands exit 3 there.',
    '',
    'Store commands after the first run in a warm background ralph process, which exits after a minute without calls',
    '(RALPH_CLI_SERVER=0: every call in its own process; RALPH_DEBUG=1 names the process that ran it).',
    '',
    EXIT_CODES_HELP,
    '',
  ].join('\n');
}

/** Pulls `--dir D` / `--dir=D` out of argv wherever it is. */
function takeDir(argv: readonly string[]): { dir: string; rest: string[] } {
  const rest: string[] = [];
  let dir = process.cwd();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === '--dir') {
      const v = argv[++i];
      if (v === undefined) throw new UsageError('--dir needs a value');
      dir = path.resolve(v);
    } else if (a.startsWith('--dir=')) dir = path.resolve(a.slice(6));
    else rest.push(a);
  }
  return { dir, rest };
}

export interface RunOptions {
  readonly io?: CliIo;
  /** Overrides the wall clock (tests). */
  readonly now?: () => Date;
  /** A writer that finds the store locked throws StoreBusyHandBack instead of waiting its turn (the warm process). */
  readonly handBackWhenLocked?: boolean;
  /** The run its events are stamped with (the warm process: its caller's, not its own). */
  readonly runId?: string;
}

export async function runCli(argv: readonly string[], options: RunOptions = {}): Promise<number> {
  const io = options.io ?? processIo;
  try {
    const { dir, rest } = takeDir(argv);
    const [name, ...args] = rest;
    if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
      const spec = HOST_COMMANDS.find((c) => c.name === args[0]) ?? CONTROL_COMMANDS.find((c) => c.name === args[0]);
      io.out(spec ? `Usage: ralph ${spec.usage}\n  ${spec.summary}\n` : usage());
      return EXIT.ok;
    }
    const host = HOST_COMMANDS.find((c) => c.name === name);
    if (host !== undefined) return await host.run(dir, args, io);
    const spec = CONTROL_COMMANDS.find((c) => c.name === name);
    if (spec === undefined) {
      io.err(`ralph: unknown command '${name}'\n${usage()}`);
      return EXIT.usage;
    }
    if (args.includes('--help')) {
      io.out(`Usage: ralph ${spec.usage}\n  ${spec.summary}\n`);
      return EXIT.ok;
    }
    return await runCommand(spec, dir, args, io, options);
  } catch (e) {
    if (options.handBackWhenLocked && e instanceof Error && e.name === 'StoreBusyHandBack') throw e;
    return reportError(e, io);
  }
}

async function runCommand(spec: CommandSpec, dir: string, args: readonly string[], io: CliIo, options: RunOptions): Promise<number> {
  const parsed = parseArgs(args, {
    ...(spec.values ? { values: spec.values } : {}),
    ...(spec.switches ? { switches: spec.switches } : {}),
  });
  const [min, max] = spec.arity;
  const n = parsed.positionals.length;
  if (n < min || n > max) throw new UsageError(`${n < min ? 'missing' : 'too many'} arguments; usage: ralph ${spec.usage}`);
  const ids = spec.ids?.(parsed) ?? [];
  if (ids.length > 0) {
    const { idProblem, quoteId } = await loadIds();
    for (const [kind, value, label] of ids) {
      const problem = value === undefined ? null : idProblem(value, kind);
      if (problem !== null) throw new UsageError(`${label}: invalid ${kind} id ${quoteId(value ?? '')}: ${problem}`);
    }
  }
  const ralphDir = path.join(dir, '.ralph');
  // ralph.db.prev alone is history too: the store refuses to open (exit 7), it is not "no store".
  const anyStoreFile = ['ralph.db', 'ralph.db.prev'].some((f) => fs.existsSync(path.join(ralphDir, f))) || hasJournal(ralphDir);
  // A project on a shared store (team mode) may have no .ralph store files at all.
  if (spec.name !== 'init' && !anyStoreFile && (await loadStoreUrl()).resolveStoreLocation(dir).kind === 'embedded') {
    io.err(`ralph: no Ralph event store in ${ralphDir} (run \`ralph init\` first)\n`);
    return EXIT.notInitialized;
  }
  if (spec.quick) {
    const code = await spec.quick(dir, parsed, io, options.now ?? (() => new Date()));
    if (code !== undefined) return code;
  }
  const { openControl } = await loadStatusPath();
  // Only the commands that classify risk load the config module (its schema is not for `status`).
  const config = spec.riskPatterns === true ? await loadProjectConfig() : undefined;
  const open = (mode: StoreMode, o: Parameters<OpenControl>[1] = {}): Promise<ControlContext> =>
    openControl({
      projectDir: dir,
      mode,
      git: lazyGitPort(dir),
      ...o,
      ...(options.now ? { now: options.now } : {}),
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(config ? { riskPatterns: () => config.projectRiskPatterns(dir) } : {}),
    });
  if (spec.store !== 'observer') {
    return (await loadWriterAccess()).runWithWriter(spec, ralphDir, parsed, io, open, EXIT, options.handBackWhenLocked === true);
  }
  const ctx = await open('observer');
  try {
    return await spec.run(ctx, parsed, io);
  } finally {
    await ctx.store.close();
  }
}

function hasJournal(ralphDir: string): boolean {
  try {
    return fs.readdirSync(ralphDir).some((f) => f.startsWith('ralph.') && f !== 'ralph.db' && f.includes('journal'));
  } catch {
    return false;
  }
}

function reportError(e: unknown, io: CliIo): number {
  const code = exitCodeOf(e);
  const debug = process.env['RALPH_DEBUG'] && e instanceof Error ? (e.stack ?? e.message) : undefined;
  io.err(`ralph: ${debug ?? (e instanceof Error ? e.message : String(e))}\n`);
  if (code === EXIT.io) io.err('ralph: nothing was recorded; fix the cause and run the command again\n');
  return code;
}
