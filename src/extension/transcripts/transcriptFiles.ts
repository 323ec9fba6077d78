// Which transcript file an agent's row means, without vscode: the `transcript` the loop
// recorded on the agent's latest agent.started event (the event indexes the file), else the
// newest file of that agent in .ralph/logs/transcripts (the event may not be stored yet in
// the instant after the agent starts). Paths from the log are data: only a file directly in
// the transcripts folder, with a transcript's name, is ever opened.
import * as path from 'node:path';
import { TRANSCRIPTS_DIR } from '../../agents/transcript';
import { listTranscripts, parseTranscriptName } from '../../cli/logsCommand';
import type { SqlReader } from '../../store/types';

/** The absolute path of a transcript named in the log (relative to `.ralph/`), or undefined when it names anything else. */
export function transcriptFileOf(ralphDir: string, recorded: string): string | undefined {
  const dir = path.resolve(ralphDir, TRANSCRIPTS_DIR);
  const file = path.resolve(ralphDir, recorded);
  if (path.dirname(file) !== dir || parseTranscriptName(path.basename(file)) === undefined) return undefined;
  return file;
}

/** Whether `file` is a transcript inside some project's `.ralph/logs/transcripts/` (the document provider's check). */
export function isTranscriptFile(file: string): boolean {
  const abs = path.resolve(file);
  return (
    path.dirname(abs).endsWith(path.sep + path.join('.ralph', TRANSCRIPTS_DIR)) && parseTranscriptName(path.basename(abs)) !== undefined
  );
}

/** The agent's current (or last) transcript, or undefined when it has none. */
export function latestTranscriptOf(db: Pick<SqlReader, 'get'> | undefined, ralphDir: string, agent: string): string | undefined {
  const row = db?.get<{ t: string | null }>(
    `SELECT json_extract(payload, '$.transcript') AS t FROM events
      WHERE entity_id = ? AND event_type = 'agent.started' ORDER BY event_id DESC LIMIT 1`,
    [agent],
  );
  const fromLog = typeof row?.t === 'string' ? transcriptFileOf(ralphDir, row.t) : undefined;
  const dir = path.join(ralphDir, TRANSCRIPTS_DIR);
  const newest = listTranscripts(dir, { agent }).pop();
  const fromDir = newest ? path.join(dir, newest.file) : undefined;
  // File names start with the start time: the later of the two is the current one.
  if (fromLog === undefined) return fromDir;
  if (fromDir === undefined) return fromLog;
  return path.basename(fromDir) > path.basename(fromLog) ? fromDir : fromLog;
}
