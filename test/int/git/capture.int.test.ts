import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePatch } from '../../../src/git/capture';
import { touchedPaths } from '../../../src/git/patchParse';
import { changedFiles, isClean } from '../../../src/git/repo';
import { ensureWorktree } from '../../../src/git/worktrees';
import { git } from '../../kit/git';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0x00, 0xfe]);

describe('git/capture (real git)', () => {
  let repo: TempRepo;
  let out: string;
  beforeEach(() => {
    repo = makeRepo({
      'src/a.ts': 'export const a = 1;\n',
      'src/gone.ts': 'export const gone = true;\n',
      'src/old name.ts': 'export const moved = 1;\nexport const more = 2;\nexport const evenMore = 3;\n',
      'bin/run.sh': '#!/bin/sh\necho hi\n',
      'logo.png': png,
      '.ralph/BACKLOG.md': '# backlog\n',
    });
    out = mkdtempSync(join(tmpdir(), 'ralph-patches-'));
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(out, { recursive: true, force: true });
  });

  it('captures edits, new untracked, deleted, renamed, binary and mode changes; never .ralph/', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'src/a.ts', 'export const a = 2;\nexport const TODO_x = 1;\n');
    writeIn(wt.path, 'src/new file é.ts', 'export const n = 1;\n');
    unlinkSync(join(wt.path, 'src/gone.ts'));
    renameSync(join(wt.path, 'src/old name.ts'), join(wt.path, 'src/new name.ts'));
    chmodSync(join(wt.path, 'bin/run.sh'), 0o755);
    writeIn(wt.path, 'logo.png', Buffer.concat([png, Buffer.from([1, 2, 3])]));
    writeIn(wt.path, 'img/new.bin', Buffer.from([0, 1, 2, 255, 254]));
    writeIn(wt.path, '.ralph/BACKLOG.md', '# changed by agent\n');
    writeIn(wt.path, '.ralph/plan.json', '{}');
    // An agent commit counts too: the capture is against the base, not HEAD.
    writeIn(wt.path, 'src/committed.ts', 'export const c = 1;\n');
    git(wt.path, 'add', 'src/committed.ts');
    git(wt.path, '-c', 'user.name=A', '-c', 'user.email=a@a', 'commit', '-q', '-m', 'agent commit');

    const p = await capturePatch(wt.path, wt.base, join(out, 'p1.patch'));
    assert.equal(p.isEmpty, false);
    assert.equal(p.baseCommit, wt.base);
    const byPath = new Map(p.files.map((f) => [f.path, f]));
    assert.equal(byPath.get('src/a.ts')?.status, 'modified');
    assert.equal(byPath.get('src/new file é.ts')?.status, 'added');
    assert.equal(byPath.get('src/gone.ts')?.status, 'deleted');
    assert.equal(byPath.get('src/new name.ts')?.status, 'renamed');
    assert.equal(byPath.get('src/new name.ts')?.oldPath, 'src/old name.ts');
    assert.equal(byPath.get('bin/run.sh')?.newMode, '100755');
    assert.equal(byPath.get('logo.png')?.binary, true);
    assert.equal(byPath.get('img/new.bin')?.binary, true);
    assert.equal(byPath.get('src/committed.ts')?.status, 'added');
    assert.ok(
      touchedPaths(p.files).every((f) => !f.startsWith('.ralph')),
      'no .ralph paths',
    );
    assert.deepEqual(p.addedLines.find((f) => f.path === 'src/a.ts')?.lines, [
      { line: 1, text: 'export const a = 2;' },
      { line: 2, text: 'export const TODO_x = 1;' },
    ]);
    assert.equal(p.stats.files, p.files.length);
    assert.ok(p.stats.bytes > 0);

    // The patch replays exactly onto the base in a fresh checkout (byte for byte).
    git(repo.dir, 'apply', '--index', p.path);
    assert.deepEqual(repo.readBytes('logo.png'), Buffer.concat([png, Buffer.from([1, 2, 3])]));
    assert.deepEqual(repo.readBytes('img/new.bin'), Buffer.from([0, 1, 2, 255, 254]));
    assert.equal(repo.read('src/new name.ts'), 'export const moved = 1;\nexport const more = 2;\nexport const evenMore = 3;\n');
    assert.equal(repo.read('.ralph/BACKLOG.md'), '# backlog\n');
  });

  it('racy git: a same-size edit right after the worktree was reset is captured', async () => {
    for (let i = 0; i < 5; i++) {
      const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
      writeIn(wt.path, 'src/a.ts', `export const a = ${i + 2};\n`);
      const p = await capturePatch(wt.path, wt.base, join(out, `r${i}.patch`));
      assert.deepEqual(
        p.files.map((f) => f.path),
        ['src/a.ts'],
        `round ${i}`,
      );
    }
  });

  it('leaves the worktree and its index untouched', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'untracked.txt', 'x\n');
    const before = git(wt.path, 'status', '--porcelain');
    await capturePatch(wt.path, wt.base, join(out, 'p.patch'));
    assert.equal(git(wt.path, 'status', '--porcelain'), before);
  });

  it('reports an empty patch when nothing changed (or only .ralph/ or ignored files)', async () => {
    repo.commit({ '.gitignore': 'node_modules/\n' });
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, '.ralph/notes.md', 'n\n');
    writeIn(wt.path, 'node_modules/x/index.js', '1');
    const p = await capturePatch(wt.path, wt.base, join(out, 'empty.patch'));
    assert.equal(p.isEmpty, true);
    assert.deepEqual(p.files, []);
    assert.equal(readFileSync(p.path, 'utf8'), '');
  });

  it('changedFiles and isClean see untracked files and ignore .ralph/ in the list', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, '.ralph/plan.json', '{}');
    assert.equal(await isClean(wt.path), true, '.ralph/ does not count');
    writeIn(wt.path, 'docs/x y.md', 'x\n');
    unlinkSync(join(wt.path, 'src/gone.ts'));
    writeIn(wt.path, '.ralph/x', 'x');
    assert.equal(await isClean(wt.path), false);
    assert.deepEqual(
      (await changedFiles(wt.path, wt.base)).map((f) => [f.path, f.status]),
      [
        ['docs/x y.md', 'added'],
        ['src/gone.ts', 'deleted'],
      ],
    );
  });
});
