// sql.js's WebAssembly, read for the loader. The bundle ships it brotli-compressed
// (dist/sql-wasm.wasm.br, 291 KB instead of the 338 KB the .vsix's deflate makes of it: the
// largest part of the package, esbuild.js); the first process to need it decompresses it
// into Ralph's cache folder, and every later one reads that copy, so a start-up pays for a
// file read, not for the decompression. The copy is keyed by the compressed file's size and
// time, written whole or not at all; any failure of the cache only means decompressing in
// memory.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Zlib from 'node:zlib';
import { ralphCacheDir } from '../shared/cacheDir';

/** The first bytes of every WebAssembly module: `\0asm` and version 1. */
const WASM_HEADER = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);

function isWasm(bytes: Buffer): boolean {
  return bytes.length > WASM_HEADER.length && bytes.subarray(0, WASM_HEADER.length).equals(WASM_HEADER);
}

/** The wasm module's bytes: `file` itself, or decompressed when it ends in `.br`. */
export function readWasm(file: string, cacheDir: string = path.join(ralphCacheDir(), 'wasm')): Buffer {
  if (!file.endsWith('.br')) return fs.readFileSync(file);
  const st = fs.statSync(file);
  const copy = path.join(cacheDir, `${path.basename(file, '.br').replace(/\.wasm$/, '')}-${st.size}-${Math.trunc(st.mtimeMs)}.wasm`);
  try {
    const cached = fs.readFileSync(copy);
    if (isWasm(cached)) return cached;
  } catch {
    // not decompressed yet (or the cache is unreadable): below
  }
  // Loaded here only: every later process reads the decompressed copy and needs no zlib.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const zlib = require('node:zlib') as typeof Zlib;
  const bytes = zlib.brotliDecompressSync(fs.readFileSync(file));
  if (!isWasm(bytes)) throw new Error(`${file}: not a brotli-compressed WebAssembly module`);
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    const tmp = `${copy}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, bytes);
    fs.renameSync(tmp, copy);
  } catch {
    // an unwritable cache only costs the next process the decompression
  }
  return bytes;
}
