// An invocation's transcript: one readable line per thing the agent did (its text, each tool
// call with its input summarised to a path or a command, each result's size and whether it
// failed), between a header naming the run and a footer with turns, tokens, cost and time.
// Written as the stream arrives, so a follower (`ralph logs --follow`, VS Code's read-only
// document) sees it grow; every line redacted before it is written; bounded in size, the cut
// said in the file. A transcript that cannot be written never fails the invocation.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { redactText } from '../shared/redaction';
import { idFilePath } from '../shared/idFiles';
import type { AgentEvent, AgentResult } from './types';
import { agentFileStem } from '../domain/agentName';

/** The folder under `.ralph/` where transcripts live. */
export const TRANSCRIPTS_DIR = path.join('logs', 'transcripts');
/** Most bytes of lines a transcript holds before it says it was cut (the footer always follows). */
export const MAX_TRANSCRIPT_BYTES = 512 * 1024;
/** Most characters of one assistant text or one command kept on its line. */
const MAX_LINE_CHARS = 2000;

export interface TranscriptRun {
  readonly agent: string;
  readonly role: string;
  readonly phase: string;
  readonly taskId: string | null;
  readonly backend: string;
  readonly startedAt: Date;
  /**
   * The agent's working directory, for paths inside it to read as the repository's own. Codex
   * does not say it in its stream (Claude's init does, which wins).
   */
  readonly cwd?: string;
}

const oneLine = (s: string, max = MAX_LINE_CHARS): string => {
  const l = s.replace(/\r?\n/g, ' ⏎ ').replace(/\s+/g, ' ').trim();
  return l.length > max ? `${l.slice(0, max)}… (${l.length - max} more characters)` : l;
};
const str = (o: Readonly<Record<string, unknown>>, k: string): string | undefined =>
  typeof o[k] === 'string' ? (o[k] as string) : undefined;

/** A tool call's input in a few words: the file it touches, the command it runs, the pattern it seeks. */
export function summarizeToolInput(name: string, input: unknown): string {
  if (input === null || typeof input !== 'object') return '';
  const o = input as Readonly<Record<string, unknown>>;
  const cmd = o['command'];
  if (typeof cmd === 'string') return oneLine(cmd);
  if (Array.isArray(cmd)) return oneLine(cmd.map(String).join(' '));
  // Codex's file_change: the files of its patch, each with what the patch does to it.
  const changes = o['changes'];
  if (Array.isArray(changes)) {
    const files = changes.flatMap((c: unknown) => {
      if (c === null || typeof c !== 'object') return [];
      const change = c as Readonly<Record<string, unknown>>;
      const p = str(change, 'path');
      const kind = str(change, 'kind');
      return p === undefined ? [] : [kind === undefined ? p : `${p} (${kind})`];
    });
    if (files.length > 0) return oneLine(files.join(', '), 500);
  }
  const file = str(o, 'file_path') ?? str(o, 'path') ?? str(o, 'notebook_path');
  if (file !== undefined) return file;
  const pattern = str(o, 'pattern') ?? str(o, 'query') ?? str(o, 'url');
  if (pattern !== undefined) return oneLine(pattern, 200);
  const keys = Object.keys(o);
  return keys.length === 0 ? '' : `{${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', …' : ''}}`;
}

/** The line (without time) for one stream event. */
export function transcriptLine(e: AgentEvent, tools: ReadonlyMap<string, string>): string {
  switch (e.type) {
    case 'init':
      return `init model=${e.model} session=${e.sessionId}${e.cwd ? ` cwd=${e.cwd}` : ''}`;
    case 'text':
      return `assistant: ${oneLine(e.text)}`;
    case 'tool_use': {
      const what = summarizeToolInput(e.name, e.input);
      return `tool ${e.name}${what ? `: ${what}` : ''}`;
    }
    case 'tool_result': {
      const bytes = Buffer.byteLength(e.output);
      return `result ${tools.get(e.toolUseId) ?? 'tool'}: ${e.isError ? 'error' : 'ok'} (${bytes} bytes)`;
    }
  }
}

const clock = (d: Date): string => d.toISOString().slice(11, 23);

/** The file name of a run's transcript: the start time, the agent, the task. */
export function transcriptPath(ralphDir: string, run: TranscriptRun): string {
  const stamp = run.startedAt.toISOString().replace(/[-:.TZ]/g, '');
  return idFilePath(
    path.join(ralphDir, TRANSCRIPTS_DIR),
    [['part', stamp], ['agent', agentFileStem(run.agent)], ...(run.taskId === null ? [] : [['task', run.taskId] as const])],
    '.log',
  );
}

export class TranscriptWriter {
  private fd: number | undefined;
  private bytes = 0;
  private cut = false;
  private readonly tools = new Map<string, string>();
  private cwd: string | undefined;

  /** Opens the file and writes the header; `secrets` are redacted beside the process-wide ones. */
  constructor(
    readonly file: string,
    run: TranscriptRun,
    private readonly secrets: readonly string[],
    private readonly now: () => Date,
    private readonly warn: (message: string) => void,
  ) {
    this.cwd = run.cwd;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      this.fd = fs.openSync(file, 'a', 0o600);
    } catch (e) {
      this.fail(e);
    }
    this.write(
      `# ${run.agent} (${run.role}) ${run.phase}${run.taskId ? ` ${run.taskId}` : ''} via ${run.backend}, started ${run.startedAt.toISOString()}`,
      true,
    );
  }

  /** One stream event; what the listener of a backend run calls. */
  readonly onEvent = (e: AgentEvent): void => {
    if (e.type === 'init' && e.cwd) this.cwd = e.cwd;
    if (e.type === 'tool_use') this.tools.set(e.id, e.name);
    let line = transcriptLine(e, this.tools);
    // Paths inside the worktree read as the repository's own.
    if (this.cwd !== undefined && e.type !== 'init') line = line.split(`${this.cwd}/`).join('');
    this.write(`${clock(this.now())} ${line}`);
  };

  /** The footer, then the file is closed. */
  finish(r: AgentResult): void {
    const t = r.tokens;
    this.write(
      `# ended ${r.status}: ${r.turns} turn(s), ${t.input} tokens in (${t.cacheRead} cached), ${t.output} out, ` +
        `$${r.costUsd.toFixed(4)}, ${(r.durationMs / 1000).toFixed(1)} s${r.errors.length > 0 ? `; ${oneLine(r.errors.join('; '), 500)}` : ''}`,
      true,
    );
    this.close();
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // Closing a descriptor we opened fails only if it is already gone.
    }
    this.fd = undefined;
  }

  private write(line: string, always = false): void {
    if (this.fd === undefined) return;
    let text = `${redactText(line, this.secrets)}\n`;
    const size = Buffer.byteLength(text);
    if (!always && this.bytes + size > MAX_TRANSCRIPT_BYTES) {
      if (this.cut) return;
      this.cut = true;
      text = `${clock(this.now())} … transcript cut at ${MAX_TRANSCRIPT_BYTES} bytes; the rest of this run is not kept\n`;
    }
    try {
      fs.writeSync(this.fd, text);
      this.bytes += Buffer.byteLength(text);
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    this.warn(`transcript ${this.file} not written: ${e instanceof Error ? e.message : String(e)}`);
    this.close();
    this.fd = undefined;
  }
}
