// The one atomic write and the file errors that name their file and operation.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileSystemError, fileError, isAtomicTempOf, writeFileAtomic, writeFileAtomicSync } from '../../../src/shared/fs';

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-fs-'));
}

describe('shared/fs writeFileAtomic', () => {
  for (const [name, write] of [
    ['async', (f: string, d: string, o?: { mkdir?: boolean }) => writeFileAtomic(f, d, o)],
    ['sync', async (f: string, d: string, o?: { mkdir?: boolean }) => writeFileAtomicSync(f, d, o)],
  ] as const) {
    it(`${name}: given a file, then it is replaced whole and no temp is left`, async () => {
      const dir = tmpDir();
      const file = path.join(dir, 'a.json');
      fs.writeFileSync(file, 'old');
      await write(file, 'new ✓');
      assert.equal(fs.readFileSync(file, 'utf8'), 'new ✓');
      assert.deepEqual(fs.readdirSync(dir), ['a.json']);
    });

    it(`${name}: given mkdir, then the folder is created`, async () => {
      const file = path.join(tmpDir(), 'x', 'y', 'b.txt');
      await write(file, 'b', { mkdir: true });
      assert.equal(fs.readFileSync(file, 'utf8'), 'b');
    });

    it(`${name}: given a directory where the file should be, then the error names the file and the operation (EISDIR)`, async () => {
      const dir = tmpDir();
      const target = path.join(dir, 'ralph.db');
      fs.mkdirSync(target);
      fs.writeFileSync(path.join(target, 'keep'), 'k');
      await assert.rejects(write(target, 'data'), (e: Error) => {
        assert.ok(e instanceof FileSystemError, e.message);
        assert.equal(e.operation, 'rename');
        assert.equal(e.file, target);
        assert.ok(['EISDIR', 'ENOTEMPTY', 'EEXIST'].includes(e.code ?? ''), e.code);
        assert.ok(e.message.startsWith(`could not rename ${target}: `), e.message);
        return true;
      });
      assert.deepEqual(fs.readdirSync(dir), ['ralph.db'], 'the temp file is removed');
    });

    it(`${name}: given a missing folder, then the error names the file (ENOENT on create)`, async () => {
      const target = path.join(tmpDir(), 'missing', 'STATE.json');
      await assert.rejects(write(target, '{}'), (e: Error) => {
        assert.ok(e instanceof FileSystemError);
        assert.equal(e.operation, 'create');
        assert.equal(e.code, 'ENOENT');
        assert.match(e.message, /STATE\.json: no such file or directory \(ENOENT\)$/);
        return true;
      });
    });
  }

  it('recognises its own temp names', () => {
    assert.ok(isAtomicTempOf('/p/.ralph/ralph.db', 'ralph.db.tmp-123-abcd0123'));
    assert.ok(!isAtomicTempOf('/p/.ralph/ralph.db', 'ralph.db.prev'));
  });

  it('turns an errno error into one naming the file; other errors pass through', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const e = fileError('write', '/p/.ralph/ralph.events.journal', enospc);
    assert.equal(e.message, 'could not write /p/.ralph/ralph.events.journal: no space left on device (ENOSPC)');
    assert.equal(fileError('write', '/x', e), e, 'already named: unchanged');
    const plain = new TypeError('bad');
    assert.equal(fileError('write', '/x', plain), plain);
  });
});
