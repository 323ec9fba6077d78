// `ralph init` and `ralph repair`: the project layer's commands. init creates or completes
// the .ralph tree (src/project/init.ts), the database through the store, and imports
// BACKLOG.md through the control plane; repair checks and, with --fix, repairs.
import * as path from 'node:path';
import { openStore } from '../store/sqlJsStore';
import { StoreLockedError } from '../store/errors';
import type { Projection } from '../store/types';
import { CONTROL_PROJECTIONS } from '../control/views';
import { controlContext } from '../control/context';
import { formatMigrated, importBacklog, type ImportResult } from '../control/derived';
import { initProject, NotAGitRepositoryError, RALPH_DIR } from '../project/init';
import { formatInitReport, InitUsageError, INIT_USAGE, parseInitArgs } from '../project/initReport';
import { formatRepairReport, runRepair } from '../project/repair/repair';
import { cliGitPort } from './gitPort';
import { LOCK_WAIT_MS } from './writerAccess';
import { keepingStatusImage } from '../control/statusImage';

/** Where the commands write. */
export interface ProjectIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export interface ProjectCommandOptions {
  /** The directory the command runs in (the dispatcher's `--dir`); default process.cwd(). */
  readonly cwd?: string;
  readonly projections?: readonly Projection[];
  /**
   * Asks the user a yes/no question (init in a folder without git). Default: on a terminal,
   * a prompt on stderr read from stdin; otherwise there is nobody to ask (undefined).
   */
  readonly confirm?: ((question: string) => Promise<boolean>) | undefined;
}

/** A yes/no question on the terminal; undefined when stdin or stderr is not one. */
function terminalConfirm(): ((question: string) => Promise<boolean>) | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return async (question) => {
    const readline = await import('node:readline/promises');
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
    } finally {
      rl.close();
    }
  };
}

export const REPAIR_USAGE = 'Usage: ralph repair [--fix] [--json] [--dir D]';

/** Exit codes, as `ralph help` documents them. */
const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const EXIT_LOCKED = 3;

async function importInto(ralphDir: string, projections: readonly Projection[]): Promise<ImportResult> {
  const store = await openStore({ ralphDir, mode: 'writer', projections, lockWaitMs: LOCK_WAIT_MS, ...keepingStatusImage(ralphDir) });
  try {
    return await importBacklog(controlContext(store, { ralphDir, projectDir: path.dirname(ralphDir) }));
  } finally {
    await store.close();
  }
}

/**
 * `ralph init [--lang L] [--name N] [--model M] [--dir D] [--force]`. A new database is
 * created and BACKLOG.md imported before init's first commit (so the commit holds the
 * rendered files); an existing one gets the rows it lacks.
 */
export async function runInitCommand(argv: readonly string[], io: ProjectIo, options: ProjectCommandOptions = {}): Promise<number> {
  const projections = options.projections ?? CONTROL_PROJECTIONS;
  let parsed: ReturnType<typeof parseInitArgs>;
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout(`${INIT_USAGE}\n`);
      return EXIT_OK;
    }
    parsed = parseInitArgs(argv, options.cwd ?? process.cwd());
  } catch (e) {
    if (e instanceof InitUsageError) {
      io.stderr(`ralph: ${e.message}\n`);
      return EXIT_USAGE;
    }
    throw e;
  }
  try {
    let imported: ImportResult | undefined;
    const run = (gitInit: boolean): ReturnType<typeof initProject> =>
      initProject({
        ...parsed,
        gitInit,
        createDatabase: async (ralphDir) => {
          imported = await importInto(ralphDir, projections);
        },
      });
    let report: Awaited<ReturnType<typeof initProject>>;
    try {
      report = await run(parsed.gitInit === true);
    } catch (e) {
      // Not a repository: ask on a terminal, otherwise say how to ask for one (nothing was written).
      if (!(e instanceof NotAGitRepositoryError)) throw e;
      const confirm = 'confirm' in options ? options.confirm : terminalConfirm();
      const yes = confirm
        ? await confirm(`${e.dir} is not a git repository. Initialize one and commit only Ralph's own files (your files stay uncommitted)?`)
        : false;
      if (!yes) {
        io.stderr(`ralph init: ${e.message}\n`);
        return EXIT_FAILED;
      }
      report = await run(true);
    }
    io.stdout(formatInitReport(report));
    if (imported === undefined) {
      try {
        imported = await importInto(path.join(report.dir, RALPH_DIR), projections);
      } catch (e) {
        if (!(e instanceof StoreLockedError)) throw e;
        // A running loop owns the store; it reads BACKLOG.md itself (sync-backlog).
        io.stderr(`ralph init: BACKLOG.md not imported: ${e.message}\n`);
        return EXIT_LOCKED;
      }
    }
    for (const n of imported.notes) io.stderr(`${n}\n`);
    io.stdout(`${formatMigrated(imported.migrated)}\n`);
    return EXIT_OK;
  } catch (e) {
    io.stderr(`ralph init: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT_FAILED;
  }
}

/** `ralph repair [--fix] [--json] [--dir D]`: exit 1 when problems remain (after fixing, with --fix). */
export async function runRepairCommand(argv: readonly string[], io: ProjectIo, options: ProjectCommandOptions = {}): Promise<number> {
  let fix = false;
  let json = false;
  let dir = options.cwd ?? process.cwd();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--fix') fix = true;
    else if (a === '--json') json = true;
    else if (a === '--help' || a === '-h') {
      io.stdout(`${REPAIR_USAGE}\n`);
      return EXIT_OK;
    } else if (a === '--dir' || a.startsWith('--dir=')) {
      const v = a === '--dir' ? argv[++i] : a.slice(6);
      if (!v) {
        io.stderr(`ralph: --dir needs a value\n${REPAIR_USAGE}\n`);
        return EXIT_USAGE;
      }
      dir = path.resolve(dir, v);
    } else {
      io.stderr(`ralph: unknown argument '${a}'\n${REPAIR_USAGE}\n`);
      return EXIT_USAGE;
    }
  }
  try {
    const report = await runRepair({
      projectDir: dir,
      fix,
      git: cliGitPort(dir),
      ...(options.projections ? { projections: options.projections } : {}),
    });
    io.stdout(json ? `${JSON.stringify(report, null, 2)}\n` : formatRepairReport(report));
    return report.ok ? EXIT_OK : EXIT_FAILED;
  } catch (e) {
    io.stderr(`ralph repair: ${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT_FAILED;
  }
}
