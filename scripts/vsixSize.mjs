// The .vsix size limit: the package a user downloads stays under 1 MB. scripts/run-e2e.mjs
// checks the package it builds (so `npm test`, and CI with it, fails when a landing crosses
// the limit), and `node scripts/vsixSize.mjs [file]` checks one by hand. Prints the size,
// what is left under the limit, and the entries that weigh most (compressed, as shipped).
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Bytes the .vsix may weigh. */
export const VSIX_LIMIT = 1_000_000;

/** Names and sizes of a zip's entries, from its central directory. */
export function zipEntries(file) {
  const buf = fs.readFileSync(file);
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error(`${file}: no zip end-of-central-directory record`);
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error(`${file}: central directory entry ${i} is damaged`);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    out.push({
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
      compressed: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

/**
 * Prints the package's size against the limit and its heaviest entries; returns an error
 * message when it is over the limit, else null.
 */
export function checkVsixSize(file, limit = VSIX_LIMIT, log = console.log) {
  const size = fs.statSync(file).size;
  const entries = zipEntries(file);
  log(`.vsix: ${size} bytes, limit ${limit}: ${size <= limit ? `${limit - size} bytes left` : `${size - limit} bytes OVER`}`);
  for (const e of [...entries].sort((a, b) => b.compressed - a.compressed).slice(0, 8)) {
    log(`  ${e.name.padEnd(48)} ${String(e.size).padStart(8)} -> ${String(e.compressed).padStart(7)}`);
  }
  return size <= limit
    ? null
    : `${file} is ${size} bytes, over the ${limit}-byte limit by ${size - limit}: cut what the list above shows (see npm run bench -- startup)`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  const problem = checkVsixSize(process.argv[2] ?? 'dist/ralph-loop.vsix');
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
}
