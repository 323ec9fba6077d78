// A queued patch as before/after file contents, for the diff editor, read by the one patch
// parser (src/domain/patchText.ts). Two ways, and neither writes anything:
// - trusted folder: the "before" side is the blob the patch's `index` line names (one
//   `git cat-file`, with Ralph's git environment), the "after" side is the patch's hunks
//   applied to it in memory (no temporary index, no object written for the new content);
// - Restricted Mode: no process at all; both sides are built from the hunks alone, the
//   lines the patch shows, with a marker where unchanged lines are left out.
// Plain Node; the content provider in patchContent.ts serves the results.
import { parsePatch } from '../domain/patchText';
import type { PatchFileStatus, PatchHunk } from '../domain/patchText';
import { runGit } from '../git/exec';

export interface PatchEntry {
  /** Path after the change (the deleted path for a deletion). */
  readonly path: string;
  /** Path before the change; differs from `path` for renames and copies. */
  readonly oldPath: string;
  readonly status: PatchFileStatus;
  /** Blob ids from the `index` line; null for the missing side. */
  readonly oldBlob: string | null;
  readonly newBlob: string | null;
  readonly mode: string;
  readonly binary: boolean;
  readonly hunks: readonly PatchHunk[];
}

export interface FileSides {
  readonly entry: PatchEntry;
  readonly before: string;
  readonly after: string;
}

/** The patch's hunks do not fit the file they claim to change. */
export class PatchApplyError extends Error {
  override readonly name = 'PatchApplyError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: the patch does not apply to its own base (${detail})`);
  }
}

/** The files of a git patch with their blob ids and hunks (pure; throws PatchParseError). */
export function parsePatchEntries(text: string): PatchEntry[] {
  return parsePatch(text).map((f) => ({
    path: f.path,
    oldPath: f.oldPath ?? f.path,
    status: f.status,
    oldBlob: f.oldBlob ?? null,
    newBlob: f.newBlob ?? null,
    mode: f.newMode ?? f.oldMode ?? '100644',
    binary: f.binary,
    hunks: f.hunks,
  }));
}

interface Line {
  readonly text: string;
  /** Whether the line ends with a newline (only a file's last line may not). */
  eol: boolean;
}

function toLines(content: string): Line[] {
  if (content === '') return [];
  const parts = content.split('\n');
  const last = parts.pop() as string;
  const lines: Line[] = parts.map((text) => ({ text, eol: true }));
  if (last !== '') lines.push({ text: last, eol: false });
  return lines;
}

function fromLines(lines: readonly Line[]): string {
  return lines.map((l) => (l.eol ? `${l.text}\n` : l.text)).join('');
}

/**
 * `before` with the hunks applied, exactly (no fuzz, no offset): what git apply produces
 * for a patch that applies to its own base. Throws PatchApplyError on a mismatch.
 */
export function applyHunks(file: string, before: string, hunks: readonly PatchHunk[]): string {
  const old = toLines(before);
  const out: Line[] = [];
  let cursor = 0;
  for (const h of hunks) {
    // A hunk that removes or keeps nothing inserts after line oldStart; otherwise it starts at it.
    const start = h.oldLines === 0 ? h.oldStart : h.oldStart - 1;
    if (start < cursor || start > old.length) throw new PatchApplyError(file, `hunk at line ${h.oldStart} is out of order or past the end`);
    out.push(...old.slice(cursor, start).map((l) => ({ ...l })));
    cursor = start;
    let last: 'old' | 'new' | 'both' | null = null;
    for (const raw of h.lines) {
      const c = raw === '' ? ' ' : raw[0];
      const text = raw.slice(1);
      if (c === '\\') {
        if (last === 'new' || last === 'both') (out[out.length - 1] as Line).eol = false;
        continue;
      }
      if (c === ' ' || c === '-') {
        const have = old[cursor];
        if (have === undefined || have.text !== text) {
          throw new PatchApplyError(
            file,
            `line ${cursor + 1} is ${have === undefined ? 'missing' : JSON.stringify(have.text.slice(0, 60))}`,
          );
        }
        cursor++;
        if (c === ' ') out.push({ text, eol: have.eol });
        last = c === ' ' ? 'both' : 'old';
      } else {
        out.push({ text, eol: true });
        last = 'new';
      }
    }
  }
  out.push(...old.slice(cursor).map((l) => ({ ...l })));
  return fromLines(out);
}

/** A line standing for unchanged lines the patch does not show (Restricted Mode). */
export const ELIDED = '⋯';

/** Both sides from the hunks alone (pure): what the patch shows, nothing read from git. */
export function sidesFromHunks(entry: PatchEntry): FileSides {
  if (entry.binary) return { entry, before: '(binary file)\n', after: '(binary file)\n' };
  const before: string[] = [];
  const after: string[] = [];
  let oldNext = 1;
  for (const h of entry.hunks) {
    const first = h.oldLines === 0 ? h.oldStart + 1 : h.oldStart;
    if (first > oldNext) {
      before.push(ELIDED);
      after.push(ELIDED);
    }
    for (const raw of h.lines) {
      const c = raw === '' ? ' ' : raw[0];
      if (c === '\\') continue;
      if (c !== '+') before.push(raw.slice(1));
      if (c !== '-') after.push(raw.slice(1));
    }
    oldNext = first + h.oldLines;
  }
  const text = (ls: string[]): string => (ls.length === 0 ? '' : `${ls.join('\n')}\n`);
  // A modified file may go on after the last hunk: say so unless the patch shows its end.
  const openEnd = entry.status !== 'added' && entry.status !== 'deleted' && entry.hunks.length > 0;
  return { entry, before: text(openEnd ? [...before, ELIDED] : before), after: text(openEnd ? [...after, ELIDED] : after) };
}

/** Both sides of every file without starting a process (Restricted Mode). */
export function sidesFromPatchText(patchText: string): FileSides[] {
  return parsePatchEntries(patchText).map(sidesFromHunks);
}

async function blob(projectDir: string, id: string | null): Promise<string | null> {
  if (id === null) return '';
  const r = await runGit(projectDir, ['cat-file', 'blob', id], { allowExitCodes: [128] });
  return r.exitCode === 0 ? r.stdout : null;
}

/**
 * Before/after contents of every file the patch touches, in a trusted folder. Binary files
 * are shown as a one-line note; a base blob missing from the repository falls back to the
 * hunks alone. Throws PatchApplyError when the hunks do not fit their own base.
 */
export async function materializePatch(projectDir: string, patchText: string): Promise<FileSides[]> {
  const out: FileSides[] = [];
  for (const e of parsePatchEntries(patchText)) {
    if (e.binary) {
      out.push({ entry: e, before: '(binary file)\n', after: '(binary file)\n' });
      continue;
    }
    const before = e.status === 'added' ? '' : await blob(projectDir, e.oldBlob);
    if (before === null) {
      out.push(sidesFromHunks(e));
      continue;
    }
    out.push({ entry: e, before, after: e.status === 'deleted' ? '' : applyHunks(e.path, before, e.hunks) });
  }
  return out;
}
