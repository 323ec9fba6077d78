import { strict as assert } from 'node:assert';
import { invalidRepoPath, parsePatch, PatchParseError, touchedPaths } from '../../../src/domain/patchText';

const modify = (path: string, from = 'x', to = 'y'): string =>
  [`diff --git a/${path} b/${path}`, `--- a/${path}`, `+++ b/${path}`, '@@ -1 +1 @@', `-${from}`, `+${to}`, ''].join('\n');

function refusal(text: string): PatchParseError {
  try {
    parsePatch(text);
  } catch (e) {
    if (e instanceof PatchParseError) return e;
    throw e;
  }
  assert.fail('the patch was accepted');
}

describe('domain/patchText', () => {
  describe('what git apply would read differently is refused, naming the line', () => {
    it('given a hunk for config/.env hidden before the first diff --git line, then refused and the path named', () => {
      const hidden = ['--- a/config/.env', '+++ b/config/.env', '@@ -0,0 +1 @@', '+KEY=value', ''].join('\n') + modify('src/a.ts');
      const e = refusal(hidden);
      assert.equal(e.lineNumber, 1);
      assert.match(e.message, /outside git's diff format/);
      assert.match(e.message, /config\/\.env/);
    });

    it('given a traditional header right after a section ends, then refused (it would be a second file)', () => {
      const smuggled = modify('src/a.ts') + ['--- a/.env', '+++ b/.env', '@@ -0,0 +1 @@', '+K=v', ''].join('\n');
      const e = refusal(smuggled);
      assert.equal(e.lineNumber, 7);
      assert.match(e.message, /"\.env"/);
    });

    it('given a hunk with no file header, then refused as git refuses it', () => {
      assert.match(refusal('@@ -1 +1 @@\n-x\n+y\n').message, /hunk outside any file section/);
    });

    it('given a traditional creation (--- /dev/null), then the new path is named', () => {
      assert.match(refusal('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n').message, /"new\.txt"/);
    });

    it('given paths git rejects (.., .git, absolute after -p1, control characters), then refused', () => {
      const cases = [
        'diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+a\n',
        'diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+a\n',
        'diff --git a/sub/.GIT/config b/sub/.GIT/config\n--- a/sub/.GIT/config\n+++ b/sub/.GIT/config\n@@ -1 +1 @@\n-a\n+b\n',
        'diff --git a//etc/passwd b//etc/passwd\n--- a//etc/passwd\n+++ b//etc/passwd\n@@ -1 +1 @@\n-a\n+b\n',
        'diff --git a/x b/x\nrename from x\nrename to ../../elsewhere/x\n',
        'diff --git "a/x\\ry" "b/x\\ry"\n--- "a/x\\ry"\n+++ "b/x\\ry"\n@@ -1 +1 @@\n-a\n+b\n',
      ];
      for (const c of cases) assert.throws(() => parsePatch(c), PatchParseError, c);
    });

    it('given a --- name that disagrees with the diff --git header, then refused (git: inconsistent name)', () => {
      const text = 'diff --git a/f b/f\n--- a/.env\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n';
      assert.match(refusal(text).message, /inconsistent old file name/);
    });

    it('given a carriage return in a header, then refused', () => {
      assert.match(refusal('diff --git a/f b/f\r\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n').message, /control character/);
    });

    it('given a hunk cut short or with a foreign line, then refused', () => {
      assert.match(refusal('diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n').message, /ends inside a hunk/);
      assert.match(refusal('diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n*a\n').message, /unexpected line/);
    });

    it('given a header naming no file (unquoted names that differ, nothing else), then refused', () => {
      assert.match(refusal('diff --git a/x y b/z w\nold mode 100644\nnew mode 100755\n').message, /without the file name/);
    });
  });

  describe('what git apply reads is read the same way', () => {
    it('given mail headers, a diffstat and a signature around git sections, then only the sections count', () => {
      const mail = [
        'From 1234 Mon Sep 17 00:00:00 2001',
        'Subject: [PATCH] change',
        '---',
        ' src/a.ts | 2 +-',
        '',
        modify('src/a.ts').trimEnd(),
        '-- ',
        '2.39.5',
        '',
      ].join('\n');
      assert.deepEqual(
        parsePatch(mail).map((f) => f.path),
        ['src/a.ts'],
      );
    });

    it('given header names with any first component, then -p1 drops it as git does', () => {
      const text = 'diff --git foo/src/x.ts bar/src/x.ts\n--- foo/src/x.ts\n+++ bar/src/x.ts\n@@ -1 +1 @@\n-a\n+b\n';
      assert.deepEqual(
        parsePatch(text).map((f) => f.path),
        ['src/x.ts'],
      );
    });

    it('given content lines that look like headers inside counted hunks, then they stay content', () => {
      const text = [
        'diff --git a/f b/f',
        '--- a/f',
        '+++ b/f',
        '@@ -1,2 +1,3 @@',
        '--- a/.env',
        '++++ b/.env',
        '+diff --git a/.env b/.env',
        ' keep',
        '',
      ].join('\n');
      const [f] = parsePatch(text);
      assert.equal(f?.path, 'f');
      assert.equal(f?.insertions, 2);
      assert.equal(f?.deletions, 1);
    });

    it('given a binary patch with a forward and a reverse block, then the next section is still read', () => {
      const text = [
        'diff --git a/img.png b/img.png',
        'new file mode 100644',
        'index 0000000000000000000000000000000000000000..7777777777777777777777777777777777777777',
        'GIT binary patch',
        'literal 5',
        'McmZQzWMT#Y01o{A5dZ)H',
        '',
        'literal 0',
        'HcmV?d00001',
        '',
        modify('src/b.ts'),
      ].join('\n');
      const files = parsePatch(text);
      assert.deepEqual(
        files.map((f) => [f.path, f.binary, f.status]),
        [
          ['img.png', true, 'added'],
          ['src/b.ts', false, 'modified'],
        ],
      );
      assert.equal(files[0]?.newBlob, '7777777777777777777777777777777777777777');
      assert.equal(files[0]?.oldBlob, undefined);
    });

    it('given renames and copies, then both names are touched', () => {
      const text = [
        'diff --git a/a.txt b/b.txt',
        'similarity index 100%',
        'rename from a.txt',
        'rename to b.txt',
        'diff --git a/c.txt b/d/.env',
        'similarity index 90%',
        'copy from c.txt',
        'copy to d/.env',
        '--- a/c.txt',
        '+++ b/d/.env',
        '@@ -1 +1 @@',
        '-c',
        '+K=v',
        '',
      ].join('\n');
      const files = parsePatch(text);
      assert.deepEqual(touchedPaths(files), ['a.txt', 'b.txt', 'c.txt', 'd/.env']);
      assert.deepEqual(
        files.map((f) => f.status),
        ['renamed', 'copied'],
      );
    });
  });

  describe('symlinks', () => {
    it('given a new symlink, then its target is read from the hunk', () => {
      const text = [
        'diff --git a/lnk b/lnk',
        'new file mode 120000',
        'index 0000000000000000000000000000000000000000..3594e94c04db171e2767224db355f514b13715c5',
        '--- /dev/null',
        '+++ b/lnk',
        '@@ -0,0 +1 @@',
        '+/etc/passwd',
        '\\ No newline at end of file',
        '',
      ].join('\n');
      const [f] = parsePatch(text);
      assert.equal(f?.symlinkTarget, '/etc/passwd');
      assert.equal(f?.newMode, '120000');
    });

    it('given a changed symlink (mode on the index line), then the new target; a plain file has none', () => {
      const text = [
        'diff --git a/l b/l',
        'index 1111111..2222222 120000',
        '--- a/l',
        '+++ b/l',
        '@@ -1 +1 @@',
        '-docs',
        '\\ No newline at end of file',
        '+../../outside',
        '\\ No newline at end of file',
        '',
        modify('plain.txt'),
      ].join('\n');
      const [l, plain] = parsePatch(text);
      assert.equal(l?.symlinkTarget, '../../outside');
      assert.equal(plain?.symlinkTarget, undefined);
    });

    it('given a symlink renamed without content, then its target is unknown (null)', () => {
      const text = 'diff --git a/docs/l b/l\nsimilarity index 100%\nrename from docs/l\nrename to l\nindex 1111111..1111111 120000\n';
      assert.equal(parsePatch(text)[0]?.symlinkTarget, null);
    });
  });

  describe('invalidRepoPath', () => {
    it('accepts ordinary paths, names the problem of others', () => {
      assert.equal(invalidRepoPath('src/a b/café.ts'), null);
      assert.equal(invalidRepoPath('.github/workflows/ci.yml'), null);
      assert.equal(invalidRepoPath('a/../b'), "a path with a '..' component");
      assert.equal(invalidRepoPath('.git/config'), "a path inside '.git'");
      assert.equal(invalidRepoPath('a\u0000b'), 'a path with a control character');
    });
  });
});
