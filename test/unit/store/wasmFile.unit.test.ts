import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { readWasm } from '../../../src/store/wasmFile';

describe('store: the compressed sql.js wasm', () => {
  const wasm = fs.readFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'));
  let dir: string;
  let br: string;
  let cache: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-wasm-'));
    br = path.join(dir, 'sql-wasm.wasm.br');
    // Quality 1: these tests are about the file handling, not the ratio esbuild.js gets.
    fs.writeFileSync(br, zlib.brotliCompressSync(wasm, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }));
    cache = path.join(dir, 'cache');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const copies = (): string[] => (fs.existsSync(cache) ? fs.readdirSync(cache) : []);

  it('given a .br file, then the bytes are the module and one decompressed copy lands in the cache', () => {
    assert.ok(readWasm(br, cache).equals(wasm));
    assert.equal(copies().length, 1);
    assert.ok(fs.readFileSync(path.join(cache, copies()[0] ?? '')).equals(wasm));
  });

  it('given the cached copy, then it is what is read (the compressed file is not decompressed again)', () => {
    readWasm(br, cache);
    const copy = path.join(cache, copies()[0] ?? '');
    // A marker module in place of the copy: if readWasm returns it, it read the copy.
    const marker = Buffer.concat([wasm.subarray(0, 8), Buffer.from('marker')]);
    fs.writeFileSync(copy, marker);
    assert.ok(readWasm(br, cache).equals(marker));
  });

  it('given a damaged copy, then the module is decompressed again and the copy rewritten', () => {
    readWasm(br, cache);
    const copy = path.join(cache, copies()[0] ?? '');
    fs.writeFileSync(copy, 'not wasm');
    assert.ok(readWasm(br, cache).equals(wasm));
    assert.ok(fs.readFileSync(copy).equals(wasm));
  });

  it('given a new compressed file (another size), then a new copy is made and the old one is not used', () => {
    readWasm(br, cache);
    fs.writeFileSync(br, zlib.brotliCompressSync(wasm, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }));
    assert.ok(readWasm(br, cache).equals(wasm));
    assert.equal(copies().length, 2);
  });

  it('given a cache that cannot be written, then the module is still read', () => {
    fs.writeFileSync(cache, 'a file where the folder would be');
    assert.ok(readWasm(br, cache).equals(wasm));
  });

  it('given a .br file that holds no wasm, then the error names the file', () => {
    fs.writeFileSync(br, zlib.brotliCompressSync(Buffer.from('hello')));
    assert.throws(
      () => readWasm(br, cache),
      (e: Error) => e.message.includes(br) && /not a brotli-compressed WebAssembly/.test(e.message),
    );
  });

  it('given a plain .wasm file, then it is read as it is', () => {
    const plain = path.join(dir, 'sql-wasm.wasm');
    fs.writeFileSync(plain, wasm);
    assert.ok(readWasm(plain, cache).equals(wasm));
    assert.deepEqual(copies(), []);
  });
});
