// Ids are ids: one grammar for the ids of tasks, patches, requirements and proposals, checked
// wherever an id enters (CLI arguments, inbox files, BACKLOG.md, proposals,
// specification.yaml, webview messages, and every event the domain builds), so an id can
// be part of a file name, a branch, a prompt line or a log line and never be a path.
// Pure.
//
// An id starts with a letter or digit and goes on with letters, digits, '.', '_' and '-'
// (W1-005, CALC-4, REQ-001, AC-001-01, patch_W1-005_20261129100000123_2), at most 128
// characters. No separator, no leading dot, no space or control character: `../x`, `a/b`,
// NUL and newlines are refused with a message naming the input.
import { z } from 'zod';

/** What an id names; `part` is a piece of a file name Ralph makes itself (a stamp, a stem). */
export type IdKind = 'task' | 'patch' | 'requirement' | 'proposal' | 'agent' | 'part';

/** Longest id; a patch id (`patch_<task>_<stamp>`) may be longer than its task's by its prefix and stamp. */
export const ID_MAX_LENGTH = 128;
const PATCH_ID_MAX_LENGTH = 200;

/** An id that breaks the grammar; names the kind, the input and what is wrong with it. */
export class InvalidIdError extends Error {
  override readonly name = 'InvalidIdError';
  constructor(
    readonly kind: IdKind,
    readonly input: string,
    readonly problem: string,
    /** Where the id came from (an argument, a file and line), when the caller knows. */
    readonly where?: string,
  ) {
    super(`${where === undefined ? '' : `${where}: `}invalid ${kind} id ${quoteId(input)}: ${problem}`);
  }
}

/** `s` quoted for a message, cut to a readable length so a hostile id cannot flood a log. */
export function quoteId(s: string): string {
  const shown = s.length > 80 ? `${s.slice(0, 80)}… (${s.length} characters)` : s;
  return `'${JSON.stringify(shown).slice(1, -1)}'`;
}

/** Whether `s` holds a control character (NUL, newline, escape, DEL...). */
export function hasControlCharacter(s: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f]/.test(s);
}

/** What is wrong with `s` as an id (of `kind`, for its length limit), or null when it is one. */
export function idProblem(s: string, kind?: IdKind): string | null {
  const max = kind === 'patch' ? PATCH_ID_MAX_LENGTH : ID_MAX_LENGTH;
  if (s === '') return 'it is empty';
  if (s.includes('\0')) return 'it contains a NUL character';
  if (hasControlCharacter(s)) return 'it contains a control character';
  if (s.includes('/') || s.includes('\\')) return 'it contains a path separator (ids are never paths)';
  if (s.length > max) return `it is longer than ${max} characters`;
  if (!/^[A-Za-z0-9]/.test(s)) return 'it must start with a letter or a digit';
  const bad = [...s].find((c) => !/[A-Za-z0-9._-]/.test(c));
  if (bad !== undefined) return `${JSON.stringify(bad)} is not allowed: use letters, digits, '.', '_' or '-' (e.g. W1-005)`;
  return null;
}

export function isId(s: unknown, kind?: IdKind): s is string {
  return typeof s === 'string' && idProblem(s, kind) === null;
}

/** `s` when it is an id, else InvalidIdError naming `where`. */
export function checkId(kind: IdKind, s: string, where?: string): string {
  const problem = idProblem(s, kind);
  if (problem !== null) throw new InvalidIdError(kind, s, problem, where);
  return s;
}

/** The grammar as a zod string schema (inbox files, proposals, webview messages). */
export function idSchema(kind: IdKind): z.ZodString {
  return z.string().superRefine((s, ctx) => {
    const problem = idProblem(s, kind);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: `${kind} id ${quoteId(s)}: ${problem}` });
  });
}

/**
 * A file name made of ids and Ralph's own parts (a stamp, a counter), joined by `_`, with
 * an extension: every part must follow the grammar, so the name is one path component and
 * stays in whatever folder it is joined to. The only way Ralph names a file after an id
 * (src/shared/idFiles.ts joins it to its folder).
 */
export function idFileName(parts: readonly (readonly [IdKind, string] | number)[], ext: string): string {
  if (!/^\.[A-Za-z0-9]+$/.test(ext)) throw new Error(`file extension ${JSON.stringify(ext)} is not one`);
  const names = parts.map((p) => (typeof p === 'number' ? String(p) : checkId(p[0], p[1])));
  return `${names.join('_')}${ext}`;
}
