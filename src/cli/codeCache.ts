// A V8 code cache for the CLI's bundle: every `ralph` call is a new process, and compiling
// the chunks it loads is a large part of its start-up. Node 20 has no
// module.enableCompileCache (22.1+), so the chunks in the bundle's folder are compiled
// through vm.Script with the cached data V8 produced for them on an earlier run. The cache
// lives in the user's cache folder, one file per chunk, keyed by the chunk's name (which
// carries esbuild's hash of its content), size and modification time, and by what else
// makes V8 reject an entry (Node version, architecture, V8 flags): a new build, a different
// Node or other flags never meet a stale entry, and no start-up pays for hashing the text
// (or for loading node:crypto). Every failure only means compiling as usual: the cache is
// an optimization, never a dependency.
import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

export interface CodeCacheOptions {
  /**
   * The bundle's folder: only the files directly in it whose name carries a content hash
   * (`name-HASH.js`, esbuild's chunk names) go through the cache.
   */
  readonly root: string;
  /** Where the cached data lives (created on the first write). */
  readonly cacheDir: string;
  /** Anything besides the source that changes V8's code, e.g. V8 flags set at start-up. */
  readonly salt?: string;
}

/** What happened to the chunks loaded so far (the benchmark and the tests read it). */
export interface CodeCacheStats {
  /** Chunks compiled from cached data. */
  hits: number;
  /** Chunks compiled from source because no entry existed. */
  misses: number;
  /** Chunks whose entry V8 refused (then rewritten). */
  rejected: number;
  /** Entries written at exit. */
  written: number;
}

interface InternalModule {
  _compile(content: string, filename: string): unknown;
}

interface ModuleStatics {
  wrapper: readonly [string, string];
  wrap(script: string): string;
}

/** The default cache folder: $XDG_CACHE_HOME (or ~/.cache), %LOCALAPPDATA% on Windows. */
export function defaultCacheDir(): string {
  const base =
    process.platform === 'win32'
      ? (process.env['LOCALAPPDATA'] ?? path.join(os.homedir(), 'AppData', 'Local'))
      : (process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'));
  return path.join(base, 'ralph-loop', 'v8-code-cache');
}

/** esbuild's chunk names: `[name]-[hash].js`, the hash being eight base-32 characters. */
const HASHED_CHUNK = /^[\w.]+-[A-Z0-9]{8}\.js$/;

/** A short hex digest of a short string (32-bit FNV-1a: a key suffix, not a checksum). */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

let installed: CodeCacheStats | undefined;

/**
 * Routes the compilation of the chunks in `root` through the code cache for the rest of the
 * process; entries missing or refused are written when the process exits, after the command
 * ran, so that they hold the functions it compiled. Call it once, before the first chunk
 * loads; later calls return the same statistics.
 */
export function installCodeCache(options: CodeCacheOptions): CodeCacheStats {
  if (installed) return installed;
  const stats: CodeCacheStats = { hits: 0, misses: 0, rejected: 0, written: 0 };
  installed = stats;
  const statics = Module as unknown as ModuleStatics;
  const proto = Module.prototype as unknown as InternalModule;
  const compile = proto._compile;
  const root = path.resolve(options.root);
  const salt = `${process.version}|${process.arch}|${options.salt ?? ''}`;
  const toWrite: { script: vm.Script; file: string }[] = [];
  // The wrapper is one line: shift the first line's columns back so stack traces point
  // at the chunk's own columns (minified chunks are mostly one long line).
  const columnOffset = -statics.wrapper[0].length;

  proto._compile = function (this: Module, content: string, filename: string): unknown {
    if (path.dirname(filename) !== root || !HASHED_CHUNK.test(path.basename(filename))) return compile.call(this, content, filename);
    let file: string;
    try {
      const st = fs.statSync(filename);
      file = path.join(options.cacheDir, `${path.basename(filename, '.js')}-${fnv1a(`${salt}|${st.size}|${st.mtimeMs}`)}.v8`);
    } catch {
      return compile.call(this, content, filename);
    }
    let cached: Buffer | undefined;
    try {
      cached = fs.readFileSync(file);
    } catch {
      cached = undefined;
    }
    const script = new vm.Script(statics.wrap(content), {
      filename,
      columnOffset,
      ...(cached ? { cachedData: cached } : {}),
    });
    if (cached === undefined) stats.misses++;
    else if (script.cachedDataRejected === true) stats.rejected++;
    else stats.hits++;
    if (cached === undefined || script.cachedDataRejected === true) toWrite.push({ script, file });
    const fn = script.runInThisContext({ displayErrors: true }) as (
      exports: unknown,
      require: NodeJS.Require,
      module: Module,
      filename: string,
      dirname: string,
    ) => unknown;
    return fn.call(this.exports, this.exports, Module.createRequire(filename), this, filename, path.dirname(filename));
  };

  process.once('exit', () => {
    for (const { script, file } of toWrite) {
      try {
        writeAtomically(file, script.createCachedData());
        stats.written++;
      } catch {
        // an unwritable cache folder only costs the next run its compile time
      }
    }
  });
  return stats;
}

/** Concurrent `ralph` processes may write the same entry: each writes a whole file or none. */
function writeAtomically(file: string, data: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}
