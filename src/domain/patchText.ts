// Over 400 lines because it is the one reader of git's patch grammar (headers, hunks, modes, renames, symlinks); a second reader would drift.
// The one reader of patch text, for the loop, the CLI and the extension alike: which files
// a patch touches (risk is classified from them), the lines it adds (the forbidden-pattern
// gate), its hunks and blob ids (the diff view), and symlink targets. Pure.
//
// It reads a patch the way `git apply` does, so what it reports is what git will touch:
// text between file sections is skipped as git skips it, `diff --git` names lose their
// first path component (git's -p1), and a section ends where its counted hunks end. What
// git would read differently from how it looks, or refuse, is refused here with the line:
// a hunk outside any file section, a `---`/`+++` file header outside git's own format (git
// guesses the path depth from such sections, which changes how every later section is
// read), inconsistent names, and paths git rejects (`..`, `.git`, absolute, control
// characters).

export type PatchFileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied';

export interface PatchHunk {
  readonly oldStart: number;
  readonly oldLines: number;
  readonly newStart: number;
  readonly newLines: number;
  /** The hunk's lines with their first character (' ', '-', '+', '\\'); an empty line is context. */
  readonly lines: readonly string[];
}

export interface PatchFile {
  /** Path after the change (for a deletion: the deleted path). */
  readonly path: string;
  /** Path before the change, for renames and copies. */
  readonly oldPath?: string;
  readonly status: PatchFileStatus;
  readonly binary: boolean;
  readonly oldMode?: string;
  readonly newMode?: string;
  /** Blob ids from the `index` line (absent for the missing side of an addition or deletion). */
  readonly oldBlob?: string;
  readonly newBlob?: string;
  /** Lines added / removed in text hunks (0 for binary files). */
  readonly insertions: number;
  readonly deletions: number;
  readonly hunks: readonly PatchHunk[];
  /**
   * Set when the file is a symbolic link after the change: its target as the patch
   * writes it, or null when the patch does not show it (a binary patch).
   */
  readonly symlinkTarget?: string | null;
  /** 1-based line of the section's `diff --git` header. */
  readonly line: number;
}

export interface AddedLine {
  /** 1-based line number in the new version of the file. */
  readonly line: number;
  readonly text: string;
}

export interface FileAddedLines {
  readonly path: string;
  readonly lines: readonly AddedLine[];
}

/** A patch Ralph will not read (git would read it differently, or refuse it); names the line. */
export class PatchParseError extends Error {
  override readonly name = 'PatchParseError';
  constructor(
    readonly lineNumber: number,
    readonly line: string,
    readonly reason: string,
  ) {
    super(`patch line ${lineNumber}: ${reason}: ${JSON.stringify(line.slice(0, 200))}`);
  }
}

export const SYMLINK_MODE = '120000';

const escapes: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  '\\': 92,
};

/**
 * Reads a C-quoted git path (`"dir/caf\303\251 x.txt"`) starting at `s[start] === '"'`.
 * Returns the decoded path (octal escapes are UTF-8 bytes) and the index after the quote.
 */
export function readQuoted(s: string, start: number): { value: string; end: number } | null {
  if (s[start] !== '"') return null;
  const bytes: number[] = [];
  let i = start + 1;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '"') return { value: Buffer.from(bytes).toString('utf8'), end: i + 1 };
    if (c === '\\') {
      const n = s[i + 1];
      if (n === undefined) return null;
      if (/[0-7]/.test(n)) {
        const oct = s.slice(i + 1, i + 4);
        if (!/^[0-7]{3}$/.test(oct)) return null;
        bytes.push(parseInt(oct, 8));
        i += 4;
        continue;
      }
      const e = escapes[n];
      if (e === undefined) return null;
      bytes.push(e);
      i += 2;
      continue;
    }
    for (const b of Buffer.from(c, 'utf8')) bytes.push(b);
    i += 1;
  }
  return null;
}

/** A path as written after `rename from`, `---` and the like: quoted, or raw to end of line. */
function readPathField(field: string): string | null {
  if (field.startsWith('"')) {
    const q = readQuoted(field, 0);
    return q === null ? null : q.value;
  }
  // git appends a TAB after ---/+++ names that contain a space (GNU diff convention).
  return field.replace(/\t.*$/, '');
}

/** git's -p1: the first path component goes (`a/x` -> `x`); null when there is none. */
function stripComponent(p: string): string | null {
  const slash = p.indexOf('/');
  return slash < 0 ? null : p.slice(slash + 1);
}

/**
 * The two names of a `diff --git a/X b/Y` header, each still with its first component.
 * Unquoted names containing spaces are ambiguous; like git, the split is accepted where
 * both names are equal after -p1, else left to the `---`/`+++` or rename lines.
 */
function parseDiffGitNames(rest: string): { a: string; b: string } | null {
  if (rest.startsWith('"')) {
    const a = readQuoted(rest, 0);
    if (a === null || rest[a.end] !== ' ') return null;
    const tail = rest.slice(a.end + 1);
    const b = tail.startsWith('"') ? readQuoted(tail, 0) : { value: tail, end: tail.length };
    if (b === null || b.end !== tail.length) return null;
    return { a: a.value, b: b.value };
  }
  const qb = rest.lastIndexOf(' "');
  if (qb > 0 && rest.endsWith('"')) {
    const b = readQuoted(rest, qb + 1);
    if (b !== null && b.end === rest.length) return { a: rest.slice(0, qb), b: b.value };
  }
  // Find the space where both halves name the same path after their first component.
  for (let i = rest.indexOf(' '); i > 0; i = rest.indexOf(' ', i + 1)) {
    const a = rest.slice(0, i);
    const b = rest.slice(i + 1);
    const sa = stripComponent(a);
    if (sa !== null && sa === stripComponent(b)) return { a, b };
  }
  return null;
}

/** Why git would refuse the repository path `p` (its verify_path), or null when it is fine. */
export function invalidRepoPath(p: string): string | null {
  if (p === '') return 'an empty path';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return 'a path with a control character';
  if (p.startsWith('/')) return 'an absolute path';
  for (const part of p.split('/')) {
    if (part === '') return 'a path with an empty component';
    if (part === '.' || part === '..') return `a path with a '${part}' component`;
    if (part.toLowerCase() === '.git') return "a path inside '.git'";
  }
  return null;
}

const hunkHeader = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const indexLine = /^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: ([0-7]+))?$/;
const ZERO = /^0+$/;
// One line of a base85 block of a `GIT binary patch`: a length character, then data.
const base85Line = /^[A-Za-z][0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]+$/;

interface MutableFile {
  path: string;
  oldPath?: string;
  status: PatchFileStatus;
  binary: boolean;
  oldMode?: string;
  newMode?: string;
  indexMode?: string;
  oldBlob?: string;
  newBlob?: string;
  insertions: number;
  deletions: number;
  hunks: PatchHunk[];
  added: AddedLine[];
  line: number;
}

/** Splits into lines; a final newline ends the last line rather than starting an empty one. */
function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

class Reader {
  private i = 0;
  readonly files: MutableFile[] = [];
  constructor(private readonly lines: readonly string[]) {}

  fail(at: number, reason: string): never {
    throw new PatchParseError(at + 1, this.lines[at] ?? '', reason);
  }

  run(): MutableFile[] {
    const { lines } = this;
    while (this.i < lines.length) {
      const line = lines[this.i] as string;
      if (line.startsWith('diff --git ')) {
        this.section();
        continue;
      }
      if (hunkHeader.test(line)) this.fail(this.i, 'a hunk outside any file section (git apply refuses such a patch)');
      if (line.startsWith('--- ') && lines[this.i + 1]?.startsWith('+++ ') && lines[this.i + 2]?.startsWith('@@ -')) {
        const name = readPathField((lines[this.i + 1] as string).slice(4)) ?? '';
        const target = name === '/dev/null' ? (readPathField(line.slice(4)) ?? '') : name;
        this.fail(
          this.i,
          `a file header outside git's diff format (git apply would change ${JSON.stringify(stripComponent(target) ?? target)}); only git diffs are accepted`,
        );
      }
      // Anything else (mail headers, a diffstat, a signature) is skipped, as git skips it.
      this.i++;
    }
    return this.files;
  }

  /** One `diff --git` section: extended headers, then text hunks or a binary patch. */
  private section(): void {
    const { lines } = this;
    const at = this.i;
    const header = lines[at] as string;
    this.checkHeaderLine(at);
    const names = parseDiffGitNames(header.slice('diff --git '.length));
    const a = names === null ? null : stripComponent(names.a);
    const b = names === null ? null : stripComponent(names.b);
    if (names !== null && (a === null || b === null)) this.fail(at, 'a file name without the a/ or b/ prefix component');
    let oldName: string | null = a !== null && a === b ? a : null;
    let newName: string | null = oldName;
    let isNew = false;
    let isDelete = false;
    let rename = false;
    let copy = false;
    const f: MutableFile = { path: '', status: 'modified', binary: false, insertions: 0, deletions: 0, hunks: [], added: [], line: at + 1 };
    this.i++;
    // Extended header lines, until the first line that is not one (git's order does not matter).
    for (; this.i < lines.length; this.i++) {
      const line = lines[this.i] as string;
      const field = (prefix: string): string | null => (line.startsWith(prefix) ? line.slice(prefix.length) : null);
      let v: string | null;
      if (line.startsWith('@@ -') || line.startsWith('diff --git ')) break;
      if ((v = field('--- ')) !== null) {
        this.checkHeaderLine(this.i);
        const p = this.path(v, true);
        if (p === null) isNew = true;
        else if (oldName !== null && oldName !== p && !rename && !copy)
          this.fail(this.i, `inconsistent old file name (${JSON.stringify(oldName)} in the header)`);
        else if (!rename && !copy) oldName = p;
      } else if ((v = field('+++ ')) !== null) {
        this.checkHeaderLine(this.i);
        const p = this.path(v, true);
        if (p === null) isDelete = true;
        else if (newName !== null && newName !== p && !rename && !copy)
          this.fail(this.i, `inconsistent new file name (${JSON.stringify(newName)} in the header)`);
        else if (!rename && !copy) newName = p;
      } else if ((v = field('new file mode ')) !== null) {
        isNew = true;
        f.newMode = v;
      } else if ((v = field('deleted file mode ')) !== null) {
        isDelete = true;
        f.oldMode = v;
      } else if ((v = field('old mode ')) !== null) f.oldMode = v;
      else if ((v = field('new mode ')) !== null) f.newMode = v;
      else if ((v = field('rename from ')) !== null || (v = field('rename old ')) !== null) {
        this.checkHeaderLine(this.i);
        rename = true;
        oldName = this.path(v, false);
      } else if ((v = field('rename to ')) !== null || (v = field('rename new ')) !== null) {
        this.checkHeaderLine(this.i);
        rename = true;
        newName = this.path(v, false);
      } else if ((v = field('copy from ')) !== null) {
        this.checkHeaderLine(this.i);
        copy = true;
        oldName = this.path(v, false);
      } else if ((v = field('copy to ')) !== null) {
        this.checkHeaderLine(this.i);
        copy = true;
        newName = this.path(v, false);
      } else if (line.startsWith('similarity index ') || line.startsWith('dissimilarity index ')) {
        // informational
      } else if ((v = field('index ')) !== null) {
        const m = indexLine.exec(line);
        if (m === null) this.fail(this.i, 'an index line git cannot read');
        if (!ZERO.test(m[1] as string)) f.oldBlob = m[1] as string;
        if (!ZERO.test(m[2] as string)) f.newBlob = m[2] as string;
        if (m[3] !== undefined) f.indexMode = m[3];
      } else break;
    }
    if (isNew && isDelete) this.fail(at, 'a file both created and deleted');
    if (isNew) newName ??= a ?? b;
    if (isDelete) oldName ??= a ?? b;
    if ((newName === null && !isDelete) || (oldName === null && !isNew))
      this.fail(at, 'a diff header without the file name (git cannot tell which file it changes)');
    f.status = isNew ? 'added' : isDelete ? 'deleted' : rename ? 'renamed' : copy ? 'copied' : 'modified';
    f.path = (isDelete ? oldName : newName) as string;
    if (!isNew && !isDelete && oldName !== null && oldName !== f.path) f.oldPath = oldName;
    for (const p of [f.path, f.oldPath]) {
      const bad = p === undefined ? null : invalidRepoPath(p);
      if (bad !== null) this.fail(at, `${bad} (git apply refuses it): ${JSON.stringify(p)}`);
    }
    this.hunks(f);
    if (f.hunks.length === 0) this.binary(f);
    this.files.push(f);
  }

  /** A header path: unquoted, checked; `/dev/null` -> null (only where it may appear). */
  private path(field: string, prefixed: boolean): string | null {
    const raw = readPathField(field);
    if (raw === null) this.fail(this.i, 'a quoted file name git cannot read');
    if (prefixed && raw === '/dev/null') return null;
    const p = prefixed ? stripComponent(raw) : raw;
    if (p === null) this.fail(this.i, 'a file name without the a/ or b/ prefix component');
    const bad = invalidRepoPath(p);
    if (bad !== null) this.fail(this.i, `${bad} (git apply refuses it): ${JSON.stringify(p)}`);
    return p;
  }

  /** A header line with a control character (other than a tab) names a file git would read differently. */
  private checkHeaderLine(at: number): void {
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(this.lines[at] as string)) this.fail(at, 'a control character in a file header');
  }

  private hunks(f: MutableFile): void {
    const { lines } = this;
    while (this.i < lines.length && (lines[this.i] as string).startsWith('@@ -')) {
      const m = hunkHeader.exec(lines[this.i] as string);
      if (m === null) this.fail(this.i, 'a hunk header git cannot read');
      const hunk = {
        oldStart: Number(m[1]),
        oldLines: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newLines: m[4] === undefined ? 1 : Number(m[4]),
        lines: [] as string[],
      };
      this.i++;
      let oldLeft = hunk.oldLines;
      let newLeft = hunk.newLines;
      let newLine = hunk.newStart;
      // Counts, not prefixes, decide where a hunk ends ("--- x" may be content).
      while (oldLeft > 0 || newLeft > 0) {
        if (this.i >= lines.length) this.fail(this.i - 1, 'the patch ends inside a hunk');
        const raw = lines[this.i] as string;
        const c = raw[0];
        if (c === '+') {
          if (newLeft === 0) this.fail(this.i, 'more added lines than the hunk header counts');
          f.insertions++;
          f.added.push({ line: newLine, text: raw.slice(1) });
          newLine++;
          newLeft--;
        } else if (c === '-') {
          if (oldLeft === 0) this.fail(this.i, 'more removed lines than the hunk header counts');
          f.deletions++;
          oldLeft--;
        } else if (c === ' ' || raw === '') {
          if (oldLeft === 0 || newLeft === 0) this.fail(this.i, 'more context lines than the hunk header counts');
          newLine++;
          newLeft--;
          oldLeft--;
        } else if (c !== '\\') {
          this.fail(this.i, 'unexpected line inside a hunk');
        }
        hunk.lines.push(raw);
        this.i++;
      }
      // "\ No newline at end of file" after the hunk's last line.
      if ((lines[this.i] ?? '').startsWith('\\ ')) hunk.lines.push(lines[this.i++] as string);
      f.hunks.push(hunk);
    }
  }

  private binary(f: MutableFile): void {
    const { lines } = this;
    const line = lines[this.i];
    if (line === undefined) return;
    if (line.startsWith('Binary files ') && line.endsWith(' differ')) {
      f.binary = true;
      this.i++;
      return;
    }
    if (line !== 'GIT binary patch') return;
    f.binary = true;
    this.i++;
    // A forward block and an optional reverse one: `literal N` / `delta N`, data, a blank line.
    for (let block = 0; block < 2 && /^(literal|delta) \d+$/.test(lines[this.i] ?? ''); block++) {
      this.i++;
      while (this.i < lines.length && base85Line.test(lines[this.i] as string)) this.i++;
      if (lines[this.i] === '') this.i++;
    }
  }
}

function finish(f: MutableFile): PatchFile & { readonly added: readonly AddedLine[] } {
  const newMode = f.newMode ?? (f.status === 'deleted' ? undefined : f.indexMode);
  const isLink = f.status !== 'deleted' && newMode === SYMLINK_MODE;
  let symlinkTarget: string | null | undefined;
  if (isLink) {
    // A link renamed or copied unchanged shows no content: its target is not in the patch.
    symlinkTarget =
      f.binary || f.hunks.length === 0
        ? null
        : f.hunks
            .flatMap((h) => h.lines)
            .filter((l) => l.startsWith('+') || l.startsWith(' ') || l === '')
            .map((l) => l.slice(1))
            .join('\n');
  }
  return {
    path: f.path,
    ...(f.oldPath !== undefined ? { oldPath: f.oldPath } : {}),
    status: f.status,
    binary: f.binary,
    ...(f.oldMode !== undefined ? { oldMode: f.oldMode } : {}),
    ...(f.newMode !== undefined ? { newMode: f.newMode } : {}),
    ...(f.oldBlob !== undefined ? { oldBlob: f.oldBlob } : {}),
    ...(f.newBlob !== undefined ? { newBlob: f.newBlob } : {}),
    insertions: f.insertions,
    deletions: f.deletions,
    hunks: f.hunks,
    ...(symlinkTarget !== undefined ? { symlinkTarget } : {}),
    line: f.line,
    added: f.added,
  };
}

/** Every file section of a git patch; throws PatchParseError for a patch git would read otherwise. */
export function parsePatch(patchText: string): PatchFile[] {
  return new Reader(splitLines(patchText)).run().map((f) => {
    const { added: _added, ...rest } = finish(f);
    return rest;
  });
}

/** All paths a change reaches, old and new names alike: what risk must be classified on. */
export function touchedPaths(files: readonly Pick<PatchFile, 'path' | 'oldPath'>[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    out.add(f.path);
    if (f.oldPath !== undefined) out.add(f.oldPath);
  }
  return [...out].sort();
}

/** The lines a patch adds, per file, with their line numbers in the new file. */
export function addedLines(patchText: string): FileAddedLines[] {
  return new Reader(splitLines(patchText))
    .run()
    .filter((f) => f.added.length > 0)
    .map((f) => ({ path: f.path, lines: f.added }));
}
