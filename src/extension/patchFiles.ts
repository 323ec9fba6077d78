// A queued patch as before/after file contents, for the diff editor. Patches are
// `git diff --full-index` output, so each file's old blob id is in its `index` line: the
// "before" side is that blob, and the "after" side comes from applying the patch to a
// throwaway index holding just those blobs (the user's index and checkout are never
// touched). Plain Node; the content provider in patchContent.ts serves the results.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from '../git/exec';

export interface PatchEntry {
  /** Path after the change (the deleted path for a deletion). */
  readonly path: string;
  /** Path before the change; differs from `path` for renames and copies. */
  readonly oldPath: string;
  readonly status: 'added' | 'modified' | 'deleted' | 'renamed';
  /** Full blob ids from the `index` line; null for the missing side. */
  readonly oldBlob: string | null;
  readonly newBlob: string | null;
  readonly mode: string;
  readonly binary: boolean;
}

export interface FileSides {
  readonly entry: PatchEntry;
  readonly before: string;
  readonly after: string;
}

const ZERO = /^0+$/;

function unquote(p: string): string {
  if (!p.startsWith('"')) return p;
  try {
    return JSON.parse(p) as string;
  } catch {
    return p.slice(1, -1);
  }
}

/** The files of a unified git patch with their blob ids (pure). */
export function parsePatchEntries(text: string): PatchEntry[] {
  const out: PatchEntry[] = [];
  const sections = text.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '));
  for (const sec of sections) {
    const lines = sec.split('\n');
    const header = lines[0] ?? '';
    const m = /^diff --git (a\/.+|"a\/.+") (b\/.+|"b\/.+")$/.exec(header);
    let oldPath = m ? unquote(m[1] ?? '').replace(/^a\//, '') : '';
    let newPath = m ? unquote(m[2] ?? '').replace(/^b\//, '') : '';
    let status: PatchEntry['status'] = 'modified';
    let oldBlob: string | null = null;
    let newBlob: string | null = null;
    let mode = '100644';
    let binary = false;
    for (const l of lines.slice(1)) {
      if (l.startsWith('@@')) break;
      let r: RegExpExecArray | null;
      if ((r = /^new file mode (\d+)/.exec(l))) {
        status = 'added';
        mode = r[1] ?? mode;
      } else if ((r = /^deleted file mode (\d+)/.exec(l))) {
        status = 'deleted';
        mode = r[1] ?? mode;
      } else if ((r = /^rename from (.+)$/.exec(l))) {
        status = 'renamed';
        oldPath = unquote(r[1] ?? oldPath);
      } else if ((r = /^rename to (.+)$/.exec(l))) {
        newPath = unquote(r[1] ?? newPath);
      } else if ((r = /^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d+))?/.exec(l))) {
        oldBlob = ZERO.test(r[1] ?? '') ? null : (r[1] ?? null);
        newBlob = ZERO.test(r[2] ?? '') ? null : (r[2] ?? null);
        if (r[3]) mode = r[3];
      } else if (l.startsWith('old mode ')) {
        mode = l.slice(9).trim();
      } else if (l.startsWith('new mode ')) {
        mode = l.slice(9).trim();
      } else if (l.startsWith('GIT binary patch') || l.startsWith('Binary files ')) {
        binary = true;
      }
    }
    if (!newPath) continue;
    out.push({ path: newPath, oldPath: oldPath || newPath, status, oldBlob, newBlob, mode, binary });
  }
  return out;
}

async function blob(projectDir: string, id: string | null): Promise<string> {
  if (id === null) return '';
  const r = await runGit(projectDir, ['cat-file', 'blob', id], { allowExitCodes: [0, 128] });
  return r.exitCode === 0 ? r.stdout : `(blob ${id.slice(0, 12)} is not in this repository)\n`;
}

/**
 * Before/after contents of every file the patch touches. Binary files are shown as a
 * one-line note. Throws GitError when the patch does not apply to its own base blobs.
 */
export async function materializePatch(projectDir: string, patchText: string): Promise<FileSides[]> {
  const entries = parsePatchEntries(patchText);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-diff-'));
  const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  try {
    for (const e of entries) {
      if (e.oldBlob !== null && !e.binary) {
        await runGit(
          projectDir,
          ['update-index', '--add', '--cacheinfo', `${e.mode === '100755' ? '100755' : '100644'},${e.oldBlob},${e.oldPath}`],
          { env },
        );
      }
    }
    const patchFile = path.join(tmp, 'change.patch');
    fs.writeFileSync(patchFile, patchText);
    const text = entries.filter((e) => !e.binary);
    if (text.length > 0) await runGit(projectDir, ['apply', '--cached', '--whitespace=nowarn', patchFile], { env });
    const out: FileSides[] = [];
    for (const e of entries) {
      if (e.binary) {
        out.push({ entry: e, before: '(binary file)\n', after: '(binary file)\n' });
        continue;
      }
      const before = await blob(projectDir, e.oldBlob);
      let after = '';
      if (e.status !== 'deleted') {
        const ls = await runGit(projectDir, ['ls-files', '-s', '--', e.path], { env });
        const id = /^\d+ ([0-9a-f]+) /.exec(ls.stdout)?.[1] ?? null;
        after = await blob(projectDir, id);
      }
      out.push({ entry: e, before, after });
    }
    return out;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
