// Builds the bundles: the extension host's and the `ralph` CLI's (node, CommonJS), which
// share their chunks, and the monitor webview (IIFE, browser); copies sql.js's wasm beside
// the node bundles (compressed).
//
// The node bundles are split at every dynamic import() (a lazy-loading seam: the CLI's
// commands, the extension's composition), so a process loads only the chunks it needs.
// esbuild splits only ESM output, and VS Code 1.100 loads extensions as CommonJS, so the
// build runs in two passes: ESM with splitting into dist/.esm/, then each file converted to
// CommonJS into dist/ (import() becomes require(); source maps chain to the sources).
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');
const { codiconPaths, oneEnglishZod } = require('./scripts/esbuildPlugins.cjs');
const { shareInteropIn } = require('./scripts/sharedInterop.cjs');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const dist = path.join(__dirname, 'dist');
const staging = path.join(dist, '.esm');

/**
 * sql.js's wasm, brotli-compressed beside the bundles: 291 KB in the .vsix instead of the
 * 338 KB its deflate makes of the plain file, the package's largest entry. The store
 * decompresses it once into the user's cache (src/store/wasmFile.ts). Compressing at
 * brotli's best takes seconds, so it is redone only when sql.js's file changed.
 */
function compressWasm() {
  const source = require.resolve('sql.js/dist/sql-wasm.wasm');
  const out = path.join(dist, 'sql-wasm.wasm.br');
  fs.rmSync(path.join(dist, 'sql-wasm.wasm'), { force: true });
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs >= fs.statSync(source).mtimeMs) return;
  const zlib = require('node:zlib');
  const packed = zlib.brotliCompressSync(fs.readFileSync(source), {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 },
  });
  fs.writeFileSync(`${out}.tmp`, packed);
  fs.renameSync(`${out}.tmp`, out);
}

/** Copies the static assets the bundles load at run time. */
function copyAssets() {
  fs.mkdirSync(path.join(dist, 'webview'), { recursive: true });
  compressWasm();
  // No icon font: the monitor draws its codicons as inline SVG (scripts/esbuildPlugins.cjs).
  for (const f of ['codicon.css', 'codicon.ttf']) fs.rmSync(path.join(dist, 'webview', f), { force: true });
}

/** @type {import('esbuild').Plugin} */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
    });
  },
};

/**
 * The MCP SDK's server imports its ajv-based JSON Schema validator whether or not it is
 * used; it is used only for elicitation, which Ralph's server never does and for which it
 * passes its own validator (src/mcp/server.ts). The stub keeps ajv, ajv-formats and
 * fast-uri out of the bundle, and says so if anything ever constructs it.
 * @type {import('esbuild').Plugin}
 */
const noAjv = {
  name: 'no-ajv',
  setup(build) {
    build.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]validation[\\/]ajv-provider\.js$/ }, () => ({
      contents:
        'export class AjvJsonSchemaValidator { constructor() { throw new Error("ajv is not bundled: pass a jsonSchemaValidator"); } }\n',
    }));
  },
};

/**
 * The MCP SDK accepts zod 3 schemas beside zod 4 ones, so it imports zod/v3 and the
 * zod-to-json-schema converter for them (about 70 KB minified). Ralph's tools are zod 4
 * schemas (src/mcp/tools.ts), which take the SDK's other branch; the stub keeps zod 3 out
 * of the bundle and says so if a zod 3 schema ever reaches the SDK.
 * @type {import('esbuild').Plugin}
 */
const noZod3 = {
  name: 'no-zod3',
  setup(build) {
    build.onResolve({ filter: /^(zod\/v3|zod-to-json-schema)$/ }, (args) =>
      /[\\/]@modelcontextprotocol[\\/]sdk[\\/]/.test(args.importer) ? { path: args.path, namespace: 'no-zod3' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-zod3' }, (args) => {
      const fail = `() => { throw new Error("${args.path} is not bundled: Ralph's MCP tools are zod 4 schemas"); }`;
      return {
        contents: args.path === 'zod/v3' ? `export const object = ${fail};\n` : `export const zodToJsonSchema = ${fail};\n`,
      };
    });
  },
};

/**
 * sql.js's glue loads node:crypto the first time SQLite asks for random bytes (the seed of
 * its PRNG, read from /dev/urandom by the first statement a process runs): some fifteen
 * internal modules, about a twentieth of a short `ralph` call. Ralph's SQLite makes nothing
 * secret from them (no temporary files, no random() or randomblob() in its SQL), so the
 * bundle hands it Math.random's bytes instead. A sql.js whose glue reads randomness
 * differently fails the build rather than loading crypto unseen.
 * @type {import('esbuild').Plugin}
 */
const sqlJsWithoutCrypto = {
  name: 'sql-js-without-crypto',
  setup(build) {
    build.onLoad({ filter: /[\\/]sql\.js[\\/]dist[\\/]sql-wasm\.js$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      const needle = /var (\w+)=require\("node:crypto"\);return (\w+)=>\(\1\.randomFillSync\(\2\),0\)/g;
      const found = text.match(needle) ?? [];
      if (found.length !== 1) {
        return { errors: [{ text: `${args.path}: expected one node:crypto random source in sql.js's glue, found ${found.length}` }] };
      }
      const fill = 'return b=>{for(let i=0;i<b.length;i++)b[i]=Math.random()*256|0;return 0}';
      return { contents: text.replace(needle, fill), loader: 'js' };
    });
  },
};

/**
 * esbuild ends each CommonJS file with `0&&(module.exports={…names})`, dead code that lists
 * the exports again for Node's cjs-module-lexer, which reads them only when an ES module
 * imports the file. Nothing does: every chunk is loaded by require(). Left out of the
 * production build, it is 2.5 KB of the .vsix.
 */
function dropExportNames(file) {
  const text = fs.readFileSync(file, 'utf8');
  const cut = text.replace(/0&&\(module\.exports=\{[\w$,:]*\}\);?\s*$/, '');
  if (cut !== text) fs.writeFileSync(file, cut);
}

/**
 * After each ESM build: the chunks become CommonJS files in dist/ (stale chunks of an
 * earlier build removed first), and the CLI becomes executable.
 * @type {import('esbuild').Plugin}
 */
const toCommonJs = {
  name: 'to-commonjs',
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0) return;
      const files = fs.readdirSync(staging).filter((f) => f.endsWith('.js'));
      for (const f of fs.readdirSync(dist)) {
        if (/\.js(\.map)?$/.test(f) && !files.includes(f.replace(/\.map$/, ''))) fs.rmSync(path.join(dist, f));
      }
      await esbuild.build({
        entryPoints: files.map((f) => path.join(staging, f)),
        outdir: dist,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        // import() of a chunk becomes require(): VS Code compiles extension code without a
        // dynamic-import callback, and the CLI's code cache (src/cli/codeCache.ts) too.
        supported: { 'dynamic-import': false },
        minify: production,
        sourcemap: !production,
        sourcesContent: false,
        logLevel: 'warning',
      });
      if (production) {
        for (const f of files) dropExportNames(path.join(dist, f));
        const shared = shareInteropIn(dist);
        console.log(`shared interop helpers: ${shared.files} of ${files.length} chunks, ${shared.saved} bytes less`);
      }
      fs.chmodSync(path.join(dist, 'cli.js'), 0o755);
    });
  },
};

const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
};

async function main() {
  fs.rmSync(staging, { recursive: true, force: true });
  const contexts = await Promise.all([
    esbuild.context({
      ...common,
      plugins: [problemMatcher, oneEnglishZod, noAjv, noZod3, sqlJsWithoutCrypto, toCommonJs],
      platform: 'node',
      target: 'node20',
      format: 'esm',
      splitting: true,
      entryPoints: { extension: 'src/extension/extension.ts', cli: 'src/cli/main.ts', checkpointWorker: 'src/store/checkpointWorker.ts' },
      outdir: staging,
      chunkNames: '[name]-[hash]',
      external: ['vscode'],
      // sql.js's `browser` export loads a build that cannot read files under Node.
      mainFields: ['module', 'main'],
      conditions: ['node'],
      // The lazy-loading seams take their import() branch (src/shared/bundle.d.ts); the MCP
      // server names the package version in its handshake.
      define: {
        RALPH_BUNDLE: 'true',
        RALPH_VERSION: JSON.stringify(require('./package.json').version),
        RALPH_BUILD: JSON.stringify(`${require('./package.json').version}+${Date.now().toString(36)}`),
      },
    }),
    esbuild.context({
      ...common,
      plugins: [problemMatcher, oneEnglishZod, codiconPaths],
      platform: 'browser',
      target: 'es2022',
      format: 'iife',
      entryPoints: ['webview-ui/main.ts'],
      outfile: 'dist/webview/monitor.js',
    }),
  ]);
  copyAssets();
  if (watch) {
    await Promise.all(contexts.map((c) => c.watch()));
    return;
  }
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
