// Builds the three bundles: the extension host (CJS, node), the `ralph` CLI (CJS, node)
// and the monitor webview (IIFE, browser); copies sql.js's wasm beside the node bundles.
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const dist = path.join(__dirname, 'dist');

/** Copies the static assets the bundles load at run time. */
function copyAssets() {
  fs.mkdirSync(path.join(dist, 'webview'), { recursive: true });
  fs.copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), path.join(dist, 'sql-wasm.wasm'));
  const codicons = path.dirname(require.resolve('@vscode/codicons/dist/codicon.css'));
  for (const f of ['codicon.css', 'codicon.ttf']) {
    fs.copyFileSync(path.join(codicons, f), path.join(dist, 'webview', f));
  }
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

const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  sourcesContent: false,
  logLevel: 'warning',
  plugins: [problemMatcher],
};

/**
 * Modules the CLI loads only for one command, each in a bundle of its own beside cli.js: a
 * `require` of the source module from the CLI bundle becomes `require('./<file>')`, so its
 * code (and its dependencies, e.g. the MCP SDK) is not parsed by every other command.
 */
const LAZY_CLI_MODULES = { 'src/mcp/cli.ts': 'mcp.js' };

/** @type {import('esbuild').Plugin} */
const lazyCliModules = {
  name: 'lazy-cli-modules',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'require-call') return undefined;
      for (const [source, file] of Object.entries(LAZY_CLI_MODULES)) {
        const target = path.join(__dirname, source);
        const resolved = path.resolve(args.resolveDir, args.path);
        if (resolved === target || `${resolved}.ts` === target) return { path: `./${file}`, external: true };
      }
      return undefined;
    });
  },
};

const nodeCommon = {
  ...common,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // sql.js's `browser` export loads a build that cannot read files under Node.
  mainFields: ['module', 'main'],
  conditions: ['node'],
};

async function main() {
  const contexts = await Promise.all([
    esbuild.context({
      ...nodeCommon,
      entryPoints: ['src/extension/extension.ts'],
      outfile: 'dist/extension.js',
      external: ['vscode'],
    }),
    esbuild.context({
      ...nodeCommon,
      entryPoints: ['src/cli/main.ts'],
      outfile: 'dist/cli.js',
      banner: { js: '#!/usr/bin/env node' },
      plugins: [...common.plugins, lazyCliModules],
    }),
    ...Object.entries(LAZY_CLI_MODULES).map(([source, file]) =>
      esbuild.context({
        ...nodeCommon,
        entryPoints: [source],
        outfile: `dist/${file}`,
        define: { RALPH_VERSION: JSON.stringify(require('./package.json').version) },
      }),
    ),
    esbuild.context({
      ...common,
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
  fs.chmodSync(path.join(dist, 'cli.js'), 0o755);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
