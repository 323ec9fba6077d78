// File and shell tools for in-process backends (the VS Code Language Model API has no
// tools of its own): Write, Edit, Read and Bash, confined to the agent's working directory
// (its worktree). Paths that resolve outside it, also through symlinks, are refused; Bash
// commands run under the backend's confinement (bubblewrap where available).
import { lstatSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { runProcess } from './process';
import { confineSpawn, NO_CONFINEMENT } from './sandbox/confinement';
import type { Confinement } from './sandbox/confinement';

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input object. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

export interface ToolOutcome {
  readonly output: string;
  readonly isError: boolean;
}

export interface ToolContext {
  readonly cwd: string;
  readonly signal?: AbortSignal;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Per command; default 120 s. */
  readonly commandTimeoutMs?: number;
  /** How Bash commands are confined (sandbox/confinement.ts); default none. */
  readonly confinement?: Confinement;
  /** The agent's scratch folder (writable under confinement). */
  readonly scratchDir?: string;
}

const MAX_OUTPUT_BYTES = 30_000;

export const LOCAL_TOOLS: readonly ToolSpec[] = [
  {
    name: 'Write',
    description: 'Create or overwrite a file in the working directory.',
    inputSchema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    },
  },
  {
    name: 'Edit',
    description: 'Replace one exact occurrence of old_string with new_string in a file.',
    inputSchema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' } },
      required: ['file_path', 'old_string', 'new_string'],
    },
  },
  {
    name: 'Read',
    description: 'Read a text file from the working directory.',
    inputSchema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
  {
    name: 'Bash',
    description: 'Run a shell command in the working directory; returns stdout, stderr and the exit code.',
    inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

export class PathOutsideWorkspaceError extends Error {
  override readonly name = 'PathOutsideWorkspaceError';
  constructor(
    readonly path: string,
    readonly cwd: string,
  ) {
    super(`path ${path} is outside the working directory ${cwd}`);
  }
}

/** The absolute path for a tool's file_path, refusing anything outside cwd (symlinks included). */
export function confinedPath(cwd: string, filePath: string): string {
  const root = realpathSync(cwd);
  const given = resolve(cwd);
  const within = (base: string, p: string): boolean => {
    const rel = relative(base, p);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  };
  const abs = isAbsolute(filePath) ? resolve(filePath) : resolve(given, filePath);
  // cwd itself may be reached through a symlink: accept paths under either spelling.
  let candidate: string;
  if (within(given, abs)) candidate = resolve(root, relative(given, abs));
  else if (within(root, abs)) candidate = abs;
  else throw new PathOutsideWorkspaceError(filePath, cwd);
  // The nearest existing ancestor must really be inside (no escape through a symlink).
  // lstat, not exists: a dangling symlink exists as a link and must not be written through.
  let probe = candidate;
  while (!linkOrFileExists(probe)) probe = dirname(probe);
  let real: string;
  try {
    real = realpathSync(probe);
  } catch {
    throw new PathOutsideWorkspaceError(filePath, cwd); // dangling link: its target is unknown
  }
  if (!within(root, real)) throw new PathOutsideWorkspaceError(filePath, cwd);
  return candidate;
}

function linkOrFileExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

const str = (input: unknown, key: string): string => {
  const v = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[key] : undefined;
  if (typeof v !== 'string') throw new Error(`missing string input "${key}"`);
  return v;
};

function bound(text: string): string {
  return Buffer.byteLength(text) <= MAX_OUTPUT_BYTES
    ? text
    : `${text.slice(0, MAX_OUTPUT_BYTES / 2)}\n[… output truncated …]\n${text.slice(-MAX_OUTPUT_BYTES / 2)}`;
}

/** Runs one tool call; failures come back as `isError` outcomes the model can read. */
export async function executeLocalTool(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  try {
    switch (name) {
      case 'Write': {
        const path = confinedPath(ctx.cwd, str(input, 'file_path'));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, str(input, 'content'));
        return { output: `Wrote ${relative(realpathSync(ctx.cwd), path)}`, isError: false };
      }
      case 'Edit': {
        const path = confinedPath(ctx.cwd, str(input, 'file_path'));
        const text = readFileSync(path, 'utf8');
        const oldString = str(input, 'old_string');
        const at = text.indexOf(oldString);
        if (oldString.length === 0 || at < 0) return { output: 'old_string not found in the file', isError: true };
        if (text.indexOf(oldString, at + 1) >= 0)
          return { output: 'old_string occurs more than once; include more context', isError: true };
        writeFileSync(path, text.slice(0, at) + str(input, 'new_string') + text.slice(at + oldString.length));
        return { output: `Edited ${relative(realpathSync(ctx.cwd), path)}`, isError: false };
      }
      case 'Read':
        return { output: bound(readFileSync(confinedPath(ctx.cwd, str(input, 'file_path')), 'utf8')), isError: false };
      case 'Bash': {
        let out = '';
        const spawn = confineSpawn(
          ctx.confinement ?? NO_CONFINEMENT,
          'bash',
          ['--norc', '--noprofile', '-c', `(${str(input, 'command')}) 2>&1`],
          {
            cwd: ctx.cwd,
            scratch: ctx.scratchDir,
            path: ctx.env.PATH,
          },
        );
        const r = await runProcess({
          file: spawn.file,
          args: spawn.args,
          cwd: ctx.cwd,
          env: ctx.env,
          input: '',
          timeoutMs: ctx.commandTimeoutMs ?? 120_000,
          graceMs: 2000,
          ...(ctx.signal !== undefined ? { signal: ctx.signal } : {}),
          onStdoutLine: (l) => {
            if (out.length < MAX_OUTPUT_BYTES * 2) out += `${l}\n`;
          },
        });
        const text = bound(out.trimEnd());
        if (r.stopReason !== undefined) return { output: `${text}\n[command stopped: ${r.stopReason}]`, isError: true };
        return r.exitCode === 0
          ? { output: text, isError: false }
          : { output: `exit code ${r.exitCode ?? r.signal}\n${text}`, isError: true };
      }
      default:
        return { output: `unknown tool ${name}`, isError: true };
    }
  } catch (err) {
    return { output: err instanceof Error ? err.message : String(err), isError: true };
  }
}
