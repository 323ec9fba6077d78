// Pure parsing of `git diff` output: which files a patch touches (for risk classification)
// and which lines it adds (for the forbidden-pattern gate on changed lines only).

export type PatchFileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied';

export interface PatchFile {
  /** Path after the change (for a deletion: the deleted path). */
  readonly path: string;
  /** Path before the change, for renames and copies. */
  readonly oldPath?: string;
  readonly status: PatchFileStatus;
  readonly binary: boolean;
  readonly oldMode?: string;
  readonly newMode?: string;
  /** Lines added / removed in text hunks (0 for binary files). */
  readonly insertions: number;
  readonly deletions: number;
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

/** A patch whose headers cannot be understood; names the line. */
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
function readPathField(field: string): string {
  const q = readQuoted(field, 0);
  if (q !== null) return q.value;
  // git appends a TAB after ---/+++ names that contain a space (GNU diff convention).
  return field.replace(/\t$/, '');
}

function stripPrefix(p: string): string {
  return p.replace(/^[ab]\//, '');
}

/**
 * The two names of a `diff --git a/X b/Y` header. Unquoted names containing spaces are
 * ambiguous; like git itself, we accept the split where both names are equal, and leave
 * renames to the `rename from/to` lines that follow.
 */
function parseDiffGitNames(rest: string): { a: string; b: string } | null {
  if (rest.startsWith('"')) {
    const a = readQuoted(rest, 0);
    if (a === null || rest[a.end] !== ' ') return null;
    const tail = rest.slice(a.end + 1);
    const b = tail.startsWith('"') ? readQuoted(tail, 0)?.value : tail;
    if (b === undefined) return null;
    return { a: stripPrefix(a.value), b: stripPrefix(b) };
  }
  const qb = rest.lastIndexOf(' "');
  if (qb > 0 && rest.endsWith('"')) {
    const b = readQuoted(rest, qb + 1);
    if (b !== null && b.end === rest.length) return { a: stripPrefix(rest.slice(0, qb)), b: stripPrefix(b.value) };
  }
  // Equal names: "a/P b/P" has length 2*len(P) + 5.
  if ((rest.length - 5) % 2 === 0) {
    const n = (rest.length - 5) / 2;
    const a = rest.slice(2, 2 + n);
    if (rest.slice(0, 2) === 'a/' && rest.slice(2 + n, 5 + n) === ' b/' && rest.slice(5 + n) === a) return { a, b: a };
  }
  const sp = rest.indexOf(' b/');
  if (sp > 0) return { a: stripPrefix(rest.slice(0, sp)), b: rest.slice(sp + 3) };
  return null;
}

interface MutableFile {
  path: string;
  oldPath?: string;
  status: PatchFileStatus;
  binary: boolean;
  oldMode?: string;
  newMode?: string;
  insertions: number;
  deletions: number;
  added: AddedLine[];
}

const hunkHeader = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function parse(patchText: string): MutableFile[] {
  const lines = patchText.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const files: MutableFile[] = [];
  let cur: MutableFile | null = null;
  let oldLeft = 0;
  let newLeft = 0;
  let newLine = 0;
  let inBinary = false;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const line = raw.endsWith('\r') && oldLeft + newLeft === 0 ? raw.slice(0, -1) : raw;
    if (cur !== null && (oldLeft > 0 || newLeft > 0)) {
      // Inside a hunk: counts, not prefixes, decide where it ends ("--- x" may be content).
      const c = raw[0];
      if (c === '\\') continue; // "\ No newline at end of file"
      if (c === '+') {
        cur.insertions++;
        cur.added.push({ line: newLine, text: raw.slice(1) });
        newLine++;
        newLeft--;
      } else if (c === '-') {
        cur.deletions++;
        oldLeft--;
      } else if (c === ' ' || raw === '') {
        newLine++;
        newLeft--;
        oldLeft--;
      } else {
        throw new PatchParseError(i + 1, raw, 'unexpected line inside a hunk');
      }
      continue;
    }
    if (line.startsWith('diff --git ')) {
      const names = parseDiffGitNames(line.slice('diff --git '.length));
      if (names === null) throw new PatchParseError(i + 1, line, 'cannot read the file names');
      cur = { path: names.b, status: 'modified', binary: false, insertions: 0, deletions: 0, added: [] };
      if (names.a !== names.b) cur.oldPath = names.a;
      files.push(cur);
      inBinary = false;
      continue;
    }
    if (cur === null) continue; // preamble (format-patch mail headers, stats)
    if (inBinary) continue; // base85 data never starts with "diff --git "
    const m = hunkHeader.exec(line);
    if (m !== null) {
      oldLeft = m[2] === undefined ? 1 : Number(m[2]);
      newLeft = m[4] === undefined ? 1 : Number(m[4]);
      newLine = Number(m[3]);
      continue;
    }
    if (line.startsWith('new file mode ')) {
      cur.status = 'added';
      cur.newMode = line.slice('new file mode '.length);
    } else if (line.startsWith('deleted file mode ')) {
      cur.status = 'deleted';
      cur.oldMode = line.slice('deleted file mode '.length);
    } else if (line.startsWith('old mode ')) {
      cur.oldMode = line.slice('old mode '.length);
    } else if (line.startsWith('new mode ')) {
      cur.newMode = line.slice('new mode '.length);
    } else if (line.startsWith('rename from ')) {
      cur.status = 'renamed';
      cur.oldPath = readPathField(line.slice('rename from '.length));
    } else if (line.startsWith('rename to ')) {
      cur.status = 'renamed';
      cur.path = readPathField(line.slice('rename to '.length));
    } else if (line.startsWith('copy from ')) {
      cur.status = 'copied';
      cur.oldPath = readPathField(line.slice('copy from '.length));
    } else if (line.startsWith('copy to ')) {
      cur.status = 'copied';
      cur.path = readPathField(line.slice('copy to '.length));
    } else if (line.startsWith('--- ')) {
      const p = readPathField(line.slice(4));
      if (p !== '/dev/null' && cur.status !== 'renamed' && cur.status !== 'copied') {
        const old = stripPrefix(p);
        if (old !== cur.path) cur.oldPath = old;
      }
    } else if (line.startsWith('+++ ')) {
      const p = readPathField(line.slice(4));
      if (p === '/dev/null') cur.status = 'deleted';
      else if (cur.status !== 'renamed' && cur.status !== 'copied') cur.path = stripPrefix(p);
    } else if (line.startsWith('Binary files ') || line === 'GIT binary patch') {
      cur.binary = true;
      inBinary = line === 'GIT binary patch';
    }
  }
  for (const f of files) {
    // For a deletion the only meaningful name is the old one.
    if (f.status === 'deleted' && f.oldPath !== undefined) {
      f.path = f.oldPath;
      delete f.oldPath;
    }
    if (f.status === 'added') delete f.oldPath;
  }
  return files;
}

/** Every file a patch touches, from its headers (renames, quoted paths, /dev/null, binary). */
export function filesTouchedByPatch(patchText: string): PatchFile[] {
  return parse(patchText).map(({ added: _added, ...f }) => f);
}

/** All paths a change reaches, old and new names alike: what risk must be classified on. */
export function touchedPaths(files: readonly PatchFile[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    out.add(f.path);
    if (f.oldPath !== undefined) out.add(f.oldPath);
  }
  return [...out].sort();
}

/** The lines a patch adds, per file, with their line numbers in the new file. */
export function addedLines(patchText: string): FileAddedLines[] {
  return parse(patchText)
    .filter((f) => f.added.length > 0)
    .map((f) => ({ path: f.path, lines: f.added }));
}
