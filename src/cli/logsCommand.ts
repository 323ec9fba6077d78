// `ralph logs [--agent A] [--task T] [--all] [--follow]`: the agents' transcripts
// (.ralph/logs/transcripts/<start>_<agent>[_<task>].log, written by src/agents/transcript.ts).
// Without --follow: the latest matching transcript (--all: every one, oldest first). With
// --follow: that, then every line as it is written and every new matching transcript as it
// starts, like `tail -f`, until interrupted.
//
// Loaded lazily by the dispatcher: it imports nothing the entry point has (args.ts, lazy.ts),
// which would move those into a chunk `ralph help` then has to load.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { TRANSCRIPTS_DIR } from '../agents/transcript';
import { idProblem, quoteId } from '../domain/ids';
import type { CliIo } from './controlCommands';

export interface TranscriptFilter {
  readonly agent?: string;
  readonly task?: string;
}

interface TranscriptName {
  readonly file: string;
  readonly agent: string;
  readonly task: string | null;
}

/** The agent and task a transcript's file name says; undefined for files that are not one. */
export function parseTranscriptName(file: string): TranscriptName | undefined {
  const m = /^(\d{17})_([A-Za-z0-9.-]+)(?:_([A-Za-z0-9][A-Za-z0-9._-]*))?\.log$/.exec(file);
  if (m === null) return undefined;
  return { file, agent: m[2] as string, task: m[3] ?? null };
}

/** The matching transcripts in `dir`, oldest first (names start with the start time). */
export function listTranscripts(dir: string, filter: TranscriptFilter): TranscriptName[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .sort()
    .map(parseTranscriptName)
    .filter((t): t is TranscriptName => t !== undefined)
    .filter((t) => (filter.agent === undefined || t.agent === filter.agent) && (filter.task === undefined || t.task === filter.task));
}

/**
 * Prints the matching transcripts and follows them until `signal` aborts: the latest one
 * so far from its start, then appended bytes of every matching file and new files as they
 * appear. Watches the folder (inotify and the like) and also looks every `pollMs`, since
 * watchers miss events on some file systems.
 */
export async function followTranscripts(
  ralphDir: string,
  filter: TranscriptFilter,
  out: (text: string) => void,
  signal: AbortSignal,
  pollMs = 250,
): Promise<void> {
  const dir = path.join(ralphDir, TRANSCRIPTS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  const offsets = new Map<string, number>();
  // What exists now: only the latest is shown from its start; older ones are history.
  const existing = listTranscripts(dir, filter);
  for (const t of existing.slice(0, -1)) offsets.set(t.file, fs.statSync(path.join(dir, t.file)).size);
  let current: string | undefined;
  const drain = (): void => {
    for (const t of listTranscripts(dir, filter)) {
      const file = path.join(dir, t.file);
      const from = offsets.get(t.file) ?? 0;
      let size: number;
      try {
        size = fs.statSync(file).size;
      } catch {
        continue;
      }
      if (size <= from) continue;
      const fd = fs.openSync(file, 'r');
      try {
        const buf = Buffer.alloc(size - from);
        const n = fs.readSync(fd, buf, 0, buf.length, from);
        // Only whole lines: a line being written shows once it ends.
        const text = buf.subarray(0, n).toString('utf8');
        const end = text.lastIndexOf('\n') + 1;
        if (end === 0) continue;
        if (current !== t.file && current !== undefined) out(`\n`);
        current = t.file;
        out(text.slice(0, end));
        offsets.set(t.file, from + Buffer.byteLength(text.slice(0, end)));
      } finally {
        fs.closeSync(fd);
      }
    }
  };
  drain();
  await new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const watcher = fs.watch(dir, () => drain());
    const timer = setInterval(drain, pollMs);
    signal.addEventListener(
      'abort',
      () => {
        watcher.close();
        clearInterval(timer);
        drain();
        resolve();
      },
      { once: true },
    );
  });
}

function parseLogsArgs(args: readonly string[]): { agent?: string; task?: string; follow: boolean; all: boolean } {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, task: { type: 'string' }, follow: { type: 'boolean' }, all: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);
  return {
    ...(values.agent === undefined ? {} : { agent: values.agent }),
    ...(values.task === undefined ? {} : { task: values.task }),
    follow: values.follow === true,
    all: values.all === true,
  };
}

/** The command: exit 0, 1 when no transcript matches (without --follow), 2 for a usage error. */
export async function logsCommand(dir: string, args: readonly string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  const usage = 'usage: ralph logs [--agent A] [--task T] [--all] [--follow]';
  let parsed: ReturnType<typeof parseLogsArgs>;
  try {
    parsed = parseLogsArgs(args);
  } catch (e) {
    io.err(`ralph: ${e instanceof Error ? e.message : String(e)}; ${usage}\n`);
    return 2;
  }
  const { agent, task, follow, all } = parsed;
  for (const [kind, value, flag] of [['agent', agent, '--agent'] as const, ['task', task, '--task'] as const]) {
    const problem = value === undefined ? null : idProblem(value, kind);
    if (problem !== null) {
      io.err(`ralph: ${flag}: invalid ${kind} id ${quoteId(value ?? '')}: ${problem}\n`);
      return 2;
    }
  }
  const filter: TranscriptFilter = { ...(agent === undefined ? {} : { agent }), ...(task === undefined ? {} : { task }) };
  const ralphDir = path.join(dir, '.ralph');
  if (!fs.existsSync(ralphDir)) {
    io.err(`ralph: no Ralph project in ${dir} (run \`ralph init\` first)\n`);
    return 4;
  }
  if (follow) {
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    signal?.addEventListener('abort', onSignal, { once: true });
    try {
      await followTranscripts(ralphDir, filter, io.out, stop.signal);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return 0;
  }
  const tdir = path.join(ralphDir, TRANSCRIPTS_DIR);
  const found = listTranscripts(tdir, filter);
  if (found.length === 0) {
    io.err(`ralph: no transcript${agent ? ` of ${agent}` : ''}${task ? ` for ${task}` : ''} in ${path.join('.ralph', TRANSCRIPTS_DIR)}\n`);
    return 1;
  }
  const shown = all ? found : found.slice(-1);
  io.out(shown.map((t) => fs.readFileSync(path.join(tdir, t.file), 'utf8')).join('\n'));
  return 0;
}
