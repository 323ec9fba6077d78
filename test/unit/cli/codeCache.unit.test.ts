// The CLI's V8 code cache (src/cli/codeCache.ts), each case in fresh Node processes as the
// CLI uses it: the first run compiles and writes an entry, the next compiles from it; a new
// build of the chunk, other V8 flags or a damaged entry are compiled from source (and the
// entry rewritten), never run stale; files without a content hash in their name, or outside
// the bundle's folder, are left to Node; stack traces keep the chunk's own columns.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const CODE_CACHE = path.join(ROOT, 'src', 'cli', 'codeCache.ts');

interface Stats {
  hits: number;
  misses: number;
  rejected: number;
  written: number;
}

describe('cli/codeCache: a V8 code cache for the bundle chunks', function () {
  this.timeout(60_000);
  let dir: string;
  let bundle: string;
  let cacheDir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-code-cache-'));
    bundle = path.join(dir, 'dist');
    cacheDir = path.join(dir, 'cache');
    fs.mkdirSync(bundle);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs `node` with the cache installed for `bundle`, requires `file`, prints its answer() and the stats. */
  function load(file: string, salt = ''): { answer: unknown; stats: Stats; stderr: string } {
    const script = `
      const { installCodeCache } = require(${JSON.stringify(CODE_CACHE)});
      const stats = installCodeCache({ root: ${JSON.stringify(bundle)}, cacheDir: ${JSON.stringify(cacheDir)}, salt: ${JSON.stringify(salt)} });
      let answer;
      try { answer = require(${JSON.stringify(file)}).answer(); } catch (e) { answer = String(e.stack); }
      process.on('exit', () => console.log(JSON.stringify({ answer, stats })));`;
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const line = r.stdout.trim().split('\n').at(-1) ?? '';
    return { ...(JSON.parse(line) as { answer: unknown; stats: Stats }), stderr: r.stderr };
  }

  function chunk(name: string, body: string): string {
    const file = path.join(bundle, name);
    fs.writeFileSync(file, body);
    return file;
  }

  it('given a hashed chunk, when it loads twice, then the first run writes an entry and the second compiles from it', () => {
    const file = chunk('store-ABCD2345.js', 'exports.answer = () => 6 * 7;\n');
    const first = load(file);
    assert.equal(first.answer, 42);
    assert.deepEqual(first.stats, { hits: 0, misses: 1, rejected: 0, written: 1 });
    assert.equal(fs.readdirSync(cacheDir).filter((f) => f.startsWith('store-ABCD2345-') && f.endsWith('.v8')).length, 1);
    const second = load(file);
    assert.equal(second.answer, 42);
    assert.deepEqual(second.stats, { hits: 1, misses: 0, rejected: 0, written: 0 });
  });

  it('given an entry, when the chunk is rebuilt in place with other code, then the new code runs (no stale entry)', () => {
    const file = chunk('store-ABCD2345.js', 'exports.answer = () => 1;\n');
    load(file);
    fs.writeFileSync(file, 'exports.answer = () => 2;\n');
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const after = load(file);
    assert.equal(after.answer, 2);
    assert.equal(after.stats.misses, 1);
  });

  it('given an entry made under other V8 flags (salt), then it is not used', () => {
    const file = chunk('store-ABCD2345.js', 'exports.answer = () => 3;\n');
    load(file, 'liftoff-only');
    const other = load(file, '');
    assert.equal(other.answer, 3);
    assert.deepEqual(other.stats, { hits: 0, misses: 1, rejected: 0, written: 1 });
  });

  it('given a damaged entry, then V8 refuses it, the chunk still runs, and the entry is rewritten', () => {
    const file = chunk('store-ABCD2345.js', 'exports.answer = () => "fine";\n');
    load(file);
    const [entry] = fs.readdirSync(cacheDir);
    assert.ok(entry);
    fs.writeFileSync(path.join(cacheDir, entry), Buffer.from('not a code cache at all, just some bytes'));
    const damaged = load(file);
    assert.equal(damaged.answer, 'fine');
    assert.deepEqual(damaged.stats, { hits: 0, misses: 0, rejected: 1, written: 1 });
    assert.equal(load(file).stats.hits, 1);
  });

  it('given an entry point without a content hash, or a file outside the bundle folder, then Node compiles it as usual', () => {
    const entry = chunk('cli.js', 'exports.answer = () => "entry";\n');
    const outside = path.join(dir, 'other-ABCD2345.js');
    fs.writeFileSync(outside, 'exports.answer = () => "outside";\n');
    const a = load(entry);
    const b = load(outside);
    assert.equal(a.answer, 'entry');
    assert.equal(b.answer, 'outside');
    assert.deepEqual(a.stats, { hits: 0, misses: 0, rejected: 0, written: 0 });
    assert.deepEqual(b.stats, { hits: 0, misses: 0, rejected: 0, written: 0 });
    assert.equal(fs.existsSync(cacheDir), false);
  });

  it('given a chunk that throws on its first line, then the stack trace names the chunk with its own line and column', () => {
    const file = chunk('boom-ABCD2345.js', 'exports.answer = () => { throw new Error("boom"); };\n');
    for (const run of [load(file), load(file)]) {
      const stack = String(run.answer);
      assert.match(stack, /Error: boom/);
      assert.ok(stack.includes(`${file}:1:32`), stack);
    }
  });

  it('given an unwritable cache folder, then the chunk runs and nothing is written', () => {
    fs.writeFileSync(cacheDir, 'a file where the folder should be');
    const file = chunk('store-ABCD2345.js', 'exports.answer = () => "still";\n');
    const r = load(file);
    assert.equal(r.answer, 'still');
    assert.equal(r.stats.written, 0);
  });
});
