// The one patch parser agrees with real git: for patches Ralph captures from random changes,
// the paths it reads are exactly those `git apply --numstat` and `git diff --name-status`
// report; for hostile hand-written patches, every path git apply would touch is among the
// paths read, or the patch is refused.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parsePatch, PatchParseError, touchedPaths } from '../../../src/domain/patchText';
import { capturePatch } from '../../../src/git/capture';
import { ensureWorktree, resetWorktree } from '../../../src/git/worktrees';
import { git } from '../../kit/git';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

/** The paths `git apply` reads a patch as touching (`--numstat`, nothing applied); renames name the new path only. */
function gitApplyReads(repo: string, patchFile: string): string[] | 'refused' {
  try {
    const out = execFileSync('git', ['apply', '--numstat', '-z', patchFile], {
      cwd: repo,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return [
      ...new Set(
        out
          .split('\0')
          .filter((p) => p !== '')
          .map((p) => p.split('\t')[2] as string),
      ),
    ].sort();
  } catch {
    return 'refused';
  }
}

/** The paths that change when git really applies the patch onto `base` (a scratch index; old and new names of renames). */
function gitApplyChanges(repo: string, base: string, patchFile: string): string[] | 'refused' {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-agree-idx-'));
  const env = { ...process.env, GIT_INDEX_FILE: join(dir, 'index') };
  const run = (...args: string[]): string =>
    execFileSync('git', args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    run('read-tree', base);
    try {
      run('apply', '--cached', patchFile);
    } catch {
      return 'refused';
    }
    const out = run('diff-index', '--cached', '--name-only', '--no-renames', '-z', base);
    return out
      .split('\0')
      .filter((p) => p !== '')
      .sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const nameChar = fc.constantFrom('a', 'b', 'Z', '0', '-', '_', '.', ' ', 'é', 'ß', '"', '\\', '*', ':', '日');
const segment = fc
  .array(nameChar, { minLength: 1, maxLength: 6 })
  .map((cs) => cs.join(''))
  .filter((s) => s !== '.' && s !== '..' && s.toLowerCase() !== '.git' && !s.startsWith(' ') && !s.endsWith(' ') && s !== '.ralph');
const relPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));

type Op =
  | { readonly kind: 'write'; readonly path: string; readonly text: string }
  | { readonly kind: 'delete'; readonly existing: number }
  | { readonly kind: 'edit'; readonly existing: number; readonly text: string }
  | { readonly kind: 'rename'; readonly existing: number; readonly to: string }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string }
  | { readonly kind: 'binary'; readonly path: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), path: relPath, text: fc.string({ maxLength: 40 }) }),
  fc.record({ kind: fc.constant('delete' as const), existing: fc.nat() }),
  fc.record({ kind: fc.constant('edit' as const), existing: fc.nat(), text: fc.string({ maxLength: 40 }) }),
  fc.record({ kind: fc.constant('rename' as const), existing: fc.nat(), to: relPath }),
  fc.record({ kind: fc.constant('symlink' as const), path: relPath, target: fc.constantFrom('/etc/passwd', '../x', 'README.md', 'a/b') }),
  fc.record({ kind: fc.constant('binary' as const), path: relPath }),
);

const BASE_FILES: Record<string, string> = {
  'README.md': '# sample\nline two\nline three\n',
  'src/a.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\nexport const d = 4;\n',
  'docs/guide text.md': 'guide\nmore\nand more\nend\n',
  'lib/x.js': 'module.exports = 1;\nconst keep = 2;\nconst more = 3;\n',
};

describe('domain/patchText agrees with real git (fast-check)', function () {
  this.timeout(300_000);
  let repo: TempRepo;
  let out: string;
  before(() => {
    repo = makeRepo(BASE_FILES);
    out = mkdtempSync(join(tmpdir(), 'ralph-agree-'));
  });
  after(() => {
    repo.cleanup();
    rmSync(out, { recursive: true, force: true });
  });

  it('given random changes captured as Ralph captures them, then the paths are what git apply and git diff name', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'agree', branch: 'main' });
    const base = git(repo.dir, 'rev-parse', 'main');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 5 }), async (ops) => {
        await resetWorktree(wt.path, base);
        const existing = Object.keys(BASE_FILES);
        const pick = (n: number): string | undefined => existing[n % Math.max(existing.length, 1)];
        for (const o of ops) {
          try {
            if (o.kind === 'write') writeIn(wt.path, o.path, o.text);
            else if (o.kind === 'binary') writeIn(wt.path, o.path, Buffer.from([0, 1, 2, 255, 0, 7]));
            else if (o.kind === 'symlink') {
              writeIn(wt.path, o.path, '');
              unlinkSync(join(wt.path, o.path));
              symlinkSync(o.target, join(wt.path, o.path));
            } else {
              const p = pick(o.existing);
              if (p === undefined) continue;
              if (o.kind === 'delete') unlinkSync(join(wt.path, p));
              else if (o.kind === 'edit') writeFileSync(join(wt.path, p), `${o.text}\n${BASE_FILES[p] ?? ''}`);
              else {
                writeIn(wt.path, o.to, BASE_FILES[p] ?? '');
                unlinkSync(join(wt.path, p));
              }
              existing.splice(existing.indexOf(p), 1);
            }
          } catch {
            // a path that collides with an earlier one (a file where a directory is): skip it
          }
        }
        const file = join(out, `p${++run}.patch`);
        const captured = await capturePatch(wt.path, base, file);
        const ours = touchedPaths(parsePatch(readText(file)));
        assert.deepEqual(ours, touchedPaths(captured.files));
        if (captured.isEmpty) return;
        const theirs = gitApplyChanges(repo.dir, base, file);
        assert.notEqual(theirs, 'refused', `git apply refused ${file}`);
        assert.deepEqual(ours, theirs, file);
      }),
      { numRuns: 60, seed: Number(process.env['RALPH_FC_SEED'] ?? Date.now() % 1e9), verbose: 1 },
    );
  });

  it('given hostile hand-written patches, then git apply touches nothing the parser did not name, or the parser refuses', () => {
    const cases: Record<string, string> = {
      'hidden traditional hunk first': '--- a/config/.env\n+++ b/config/.env\n@@ -0,0 +1 @@\n+K=v\n' + modify('README.md'),
      'traditional after a section': modify('README.md') + '--- a/.env\n+++ b/.env\n@@ -0,0 +1 @@\n+K=v\n',
      'p0 guessed from a slash-less header': '--- x\n+++ x\n@@ -1 +1 @@\n-x\n+y\n' + modify('README.md'),
      'other first components':
        'diff --git foo/README.md bar/README.md\n--- foo/README.md\n+++ bar/README.md\n@@ -1 +1 @@\n-# sample\n+# changed\n',
      'garbage and signature': 'Subject: x\n---\n a | 1\n\n' + modify('README.md') + '-- \n2.39.5\n',
      'stray hunk': '@@ -1 +1 @@\n-# sample\n+# x\n',
      dotdot: 'diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+a\n',
      'dot git': 'diff --git a/.git/hooks/x b/.git/hooks/x\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/x\n@@ -0,0 +1 @@\n+a\n',
      'inconsistent names': 'diff --git a/README.md b/README.md\n--- a/.env\n+++ b/README.md\n@@ -1 +1 @@\n-# sample\n+# x\n',
      'rename then edit':
        'diff --git a/README.md b/.env\nsimilarity index 50%\nrename from README.md\nrename to .env\n--- a/README.md\n+++ b/.env\n@@ -1 +1 @@\n-# sample\n+K=v\n',
      'header only, no names': 'diff --git a/x y b/z w\nold mode 100644\nnew mode 100755\n',
    };
    for (const [name, text] of Object.entries(cases)) {
      const file = join(out, `${name.replace(/\W+/g, '_')}.patch`);
      writeFileSync(file, text);
      let ours: string[] | 'refused';
      try {
        ours = touchedPaths(parsePatch(text));
      } catch (e) {
        assert.ok(e instanceof PatchParseError, `${name}: ${String(e)}`);
        ours = 'refused';
      }
      if (ours === 'refused') continue;
      const reads = gitApplyReads(repo.dir, file);
      const changes = gitApplyChanges(repo.dir, 'main', file);
      assert.notEqual(reads, 'refused', `${name}: the parser accepted a patch git refuses to read`);
      for (const p of [...(reads as string[]), ...(changes === 'refused' ? [] : changes)]) {
        assert.ok(ours.includes(p), `${name}: git apply touches ${p}, the parser named ${ours.join(', ')}`);
      }
    }
  });
});

function modify(path: string): string {
  return `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-# sample\n+# changed\n`;
}

function readText(file: string): string {
  return execFileSync('cat', [file], { encoding: 'utf8' });
}
