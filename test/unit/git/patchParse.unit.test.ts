import { strict as assert } from 'node:assert';
import { addedLines, filesTouchedByPatch, PatchParseError, readQuoted, touchedPaths } from '../../../src/git/patchParse';
import { parseNameStatusZ, parseWorktreeList } from '../../../src/git/repo';
import { parseMergeTree } from '../../../src/git/rebase';

const modified = [
  'diff --git a/src/a.ts b/src/a.ts',
  'index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644',
  '--- a/src/a.ts',
  '+++ b/src/a.ts',
  '@@ -1,3 +1,4 @@',
  ' line1',
  '-line2',
  '+line2 changed',
  '+-- not a header',
  ' line3',
  '@@ -10 +11,2 @@',
  '-old10',
  '+new11',
  '+new12',
  '\\ No newline at end of file',
  '',
].join('\n');

const added = [
  'diff --git a/docs/new file.md b/docs/new file.md',
  'new file mode 100644',
  'index 0000000000000000000000000000000000000000..3333333333333333333333333333333333333333',
  '--- /dev/null',
  '+++ b/docs/new file.md\t',
  '@@ -0,0 +1,2 @@',
  '+# Title',
  '+text',
  '',
].join('\n');

const deleted = [
  'diff --git a/old.txt b/old.txt',
  'deleted file mode 100644',
  'index 4444444444444444444444444444444444444444..0000000000000000000000000000000000000000',
  '--- a/old.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  '',
].join('\n');

const renamed = [
  'diff --git a/lib/x y.ts b/lib/z w.ts',
  'similarity index 90%',
  'rename from lib/x y.ts',
  'rename to lib/z w.ts',
  'index 5555555555555555555555555555555555555555..6666666666666666666666666666666666666666 100644',
  '--- a/lib/x y.ts\t',
  '+++ b/lib/z w.ts\t',
  '@@ -1,2 +1,2 @@',
  ' keep',
  '-a',
  '+b',
  '',
].join('\n');

const binaryAndQuoted = [
  'diff --git "a/img/caf\\303\\251.png" "b/img/caf\\303\\251.png"',
  'new file mode 100644',
  'index 0000000000000000000000000000000000000000..7777777777777777777777777777777777777777',
  'GIT binary patch',
  'literal 5',
  'McmZQzWMT#Y01o{A5dZ)H',
  '',
  'literal 0',
  'HcmV?d00001',
  '',
  'diff --git a/run.sh b/run.sh',
  'old mode 100644',
  'new mode 100755',
  'diff --git a/empty b/empty',
  'new file mode 100644',
  'index 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391',
  '',
].join('\n');

describe('git/patchParse', () => {
  describe('filesTouchedByPatch', () => {
    it('given a modification, reports the path, status and counts', () => {
      const [f] = filesTouchedByPatch(modified);
      assert.deepEqual(f, {
        path: 'src/a.ts',
        status: 'modified',
        binary: false,
        oldBlob: '1111111111111111111111111111111111111111',
        newBlob: '2222222222222222222222222222222222222222',
        insertions: 4,
        deletions: 2,
      });
    });

    it('given an added file with a space in its name, reads it from the header', () => {
      const [f] = filesTouchedByPatch(added);
      assert.equal(f?.path, 'docs/new file.md');
      assert.equal(f?.status, 'added');
      assert.equal(f?.oldPath, undefined);
      assert.equal(f?.newMode, '100644');
    });

    it('given a deletion (+++ /dev/null), reports the deleted path', () => {
      const [f] = filesTouchedByPatch(deleted);
      assert.equal(f?.path, 'old.txt');
      assert.equal(f?.status, 'deleted');
      assert.equal(f?.deletions, 1);
    });

    it('given a rename with spaces, reports both names', () => {
      const [f] = filesTouchedByPatch(renamed);
      assert.equal(f?.status, 'renamed');
      assert.equal(f?.path, 'lib/z w.ts');
      assert.equal(f?.oldPath, 'lib/x y.ts');
    });

    it('given quoted unicode paths, a binary patch, a mode change and an empty new file', () => {
      const files = filesTouchedByPatch(binaryAndQuoted);
      assert.deepEqual(
        files.map((f) => [f.path, f.status, f.binary]),
        [
          ['img/café.png', 'added', true],
          ['run.sh', 'modified', false],
          ['empty', 'added', false],
        ],
      );
      assert.equal(files[1]?.oldMode, '100644');
      assert.equal(files[1]?.newMode, '100755');
    });

    it('given several files, touchedPaths lists old and new names once, sorted', () => {
      const files = filesTouchedByPatch(modified + renamed + deleted);
      assert.deepEqual(touchedPaths(files), ['lib/x y.ts', 'lib/z w.ts', 'old.txt', 'src/a.ts']);
    });

    it('given an empty patch, returns no files', () => {
      assert.deepEqual(filesTouchedByPatch(''), []);
    });

    it('given format-patch mail headers before the diff, ignores them', () => {
      const mail = 'From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n---\n a | 1 +\n\n' + deleted;
      assert.equal(filesTouchedByPatch(mail)[0]?.path, 'old.txt');
    });

    it('given garbage inside a hunk, throws a PatchParseError naming the line', () => {
      const bad = 'diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n?weird\n';
      assert.throws(
        () => filesTouchedByPatch(bad),
        (e: unknown) => e instanceof PatchParseError && e.lineNumber === 6,
      );
    });
  });

  describe('addedLines', () => {
    it('given hunks, returns added lines with new-file line numbers (content starting with -- included)', () => {
      assert.deepEqual(addedLines(modified), [
        {
          path: 'src/a.ts',
          lines: [
            { line: 2, text: 'line2 changed' },
            { line: 3, text: '-- not a header' },
            { line: 11, text: 'new11' },
            { line: 12, text: 'new12' },
          ],
        },
      ]);
    });

    it('given a deletion only, returns nothing for it', () => {
      assert.deepEqual(addedLines(deleted), []);
    });

    it('given a rename with an edit, attributes lines to the new name', () => {
      assert.deepEqual(addedLines(renamed), [{ path: 'lib/z w.ts', lines: [{ line: 2, text: 'b' }] }]);
    });
  });

  describe('readQuoted', () => {
    it('decodes octal UTF-8 bytes and C escapes', () => {
      assert.deepEqual(readQuoted('"a\\tb\\"c\\\\d\\303\\251"', 0), { value: 'a\tb"c\\dé', end: 20 });
    });
    it('returns null for an unterminated string', () => {
      assert.equal(readQuoted('"abc', 0), null);
    });
  });

  describe('git output parsers', () => {
    it('parseNameStatusZ reads renames with two paths', () => {
      assert.deepEqual(parseNameStatusZ('M\0a b\0R100\0x\0y z\0A\0new\0'), [
        { path: 'a b', status: 'modified' },
        { path: 'y z', oldPath: 'x', status: 'renamed' },
        { path: 'new', status: 'added' },
      ]);
    });

    it('parseWorktreeList reads branches, detached heads and prunable entries', () => {
      const out =
        'worktree /r\0HEAD aaa\0branch refs/heads/main\0\0' +
        'worktree /r/.git/ralph/worktrees/w1\0HEAD bbb\0detached\0prunable gitdir file points to non-existent location\0\0';
      const list = parseWorktreeList(out);
      assert.equal(list.length, 2);
      assert.equal(list[0]?.branch, 'main');
      assert.equal(list[1]?.branch, null);
      assert.equal(list[1]?.prunable, true);
    });

    it('parseMergeTree reads the tree, conflicted files and messages', () => {
      const out =
        'abc123\0f\0g h\0\0' +
        '1\0f\0Auto-merging\0Auto-merging f\n\0' +
        '1\0f\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in f\n\0';
      assert.deepEqual(parseMergeTree(out), {
        tree: 'abc123',
        files: ['f', 'g h'],
        messages: ['Auto-merging f', 'CONFLICT (content): Merge conflict in f'],
      });
    });
  });
});
