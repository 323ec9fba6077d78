import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readWithStampWhile } from '../../../src/store/fileStamp';

describe('store: reading a file while other work runs', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-stamp-'));
    file = path.join(dir, 'ralph.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const openFds = (): number => fs.readdirSync('/proc/self/fd').length;

  it('given the file is replaced by rename while `meanwhile` runs, then the read is the file as opened', async () => {
    fs.writeFileSync(file, 'the image before the checkpoint');
    const before = fs.statSync(file);
    const { read, result } = await readWithStampWhile(file, () => {
      fs.writeFileSync(`${file}.tmp`, 'the image the checkpoint wrote, longer');
      fs.renameSync(`${file}.tmp`, file);
      return 'journal';
    });
    assert.equal(result, 'journal');
    assert.equal(Buffer.from(read?.data ?? []).toString(), 'the image before the checkpoint');
    assert.deepEqual(read?.stamp, { ino: before.ino, size: before.size, mtimeMs: before.mtimeMs });
    assert.notEqual(fs.statSync(file).ino, before.ino);
  });

  it('given no file, then `meanwhile` still runs and the read is undefined', async () => {
    let ran = false;
    const { read, result } = await readWithStampWhile(file, () => {
      ran = true;
      return 7;
    });
    assert.equal(read, undefined);
    assert.equal(result, 7);
    assert.ok(ran);
  });

  it('given `meanwhile` throws, then its own error is thrown once the file is closed', async () => {
    fs.writeFileSync(file, Buffer.alloc(1 << 20, 1));
    const fds = openFds();
    const boom = new Error('journal damaged');
    await assert.rejects(
      readWithStampWhile(file, () => {
        throw boom;
      }),
      (e) => e === boom,
    );
    assert.equal(openFds(), fds);
  });
});
