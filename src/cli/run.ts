// Dispatches `ralph <command>`: global options (`--dir D`, default the current
// directory; the ralph dir is D/.ralph), opening the event store the way the command
// needs it, and turning errors into clear messages and exit codes. Nothing here loads the
// store or the engine: the command tables are plain data and each command loads what it
// runs (lazy.ts), so `ralph help` and usage errors stay cheap.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { StoreMode } from '../store/types';
import type { ControlContext } from '../control/context';
import { lazyGitPort, loadControl, loadIds } from './lazy';
import { parseArgs, UsageError } from './args';
import { CONTROL_COMMANDS, relativeToCwd, type CliIo, type CommandSpec } from './controlCommands';
import { HOST_COMMANDS } from './hostCommands';

/** Exit codes: documented in `ralph help`. */
export const EXIT = { ok: 0, failed: 1, usage: 2, locked: 3, notInitialized: 4 } as const;

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
    'Exit codes: 0 ok, 1 command failed, 2 usage error, 3 store locked by another writer, 4 no .ralph store.',
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
  if (spec.name !== 'init' && !fs.existsSync(path.join(ralphDir, 'ralph.db')) && !hasJournal(ralphDir)) {
    io.err(`ralph: no Ralph event store in ${ralphDir} (run \`ralph init\` first)\n`);
    return EXIT.notInitialized;
  }
  const { openControl, submitToInbox } = await loadControl();
  const open = (mode: StoreMode): Promise<ControlContext> =>
    openControl({ projectDir: dir, mode, git: lazyGitPort(dir), ...(options.now ? { now: options.now } : {}) });
  let ctx: ControlContext;
  try {
    ctx = await open(spec.store === 'observer' ? 'observer' : 'writer');
  } catch (e) {
    if (!(e instanceof Error && e.name === 'StoreLockedError')) throw e;
    if (spec.store === 'prefer-writer') ctx = await open('observer');
    else if (spec.toInbox) {
      const file = submitToInbox(ralphDir, await spec.toInbox(parsed));
      io.err(`ralph: ${e.message}\n`);
      io.out(`QUEUED ${relativeToCwd(file)} (the running writer will apply it)\n`);
      return EXIT.ok;
    } else throw e;
  }
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

const DOMAIN_ERRORS = new Set([
  'TaskNotFoundError',
  'PatchNotFoundError',
  'InvalidArgumentError',
  'DoneWithoutPromotedPatchError',
  'TaskAlreadyClaimedError',
  'InvalidStateError',
  'CommitNotFoundError',
  'ReservedEventTypeError',
  'BacklogParseError',
  'ConfigError',
  'PatchFileError',
  'InvalidEventError',
  'ControlError',
  'StoreCorruptError',
  'StoreVersionError',
  'StoreFailedError',
  'ReadOnlyStoreError',
  'InvalidIdError',
]);

function reportError(e: unknown, io: CliIo): number {
  if (e instanceof UsageError) {
    io.err(`ralph: ${e.message}\n`);
    return EXIT.usage;
  }
  if (e instanceof Error && e.name === 'StoreLockedError') {
    io.err(`ralph: ${e.message}\n`);
    return EXIT.locked;
  }
  if (e instanceof Error && DOMAIN_ERRORS.has(e.name)) {
    io.err(`ralph: ${e.message}\n`);
    return EXIT.failed;
  }
  io.err(`ralph: ${e instanceof Error ? (process.env['RALPH_DEBUG'] ? (e.stack ?? e.message) : e.message) : String(e)}\n`);
  return EXIT.failed;
}
