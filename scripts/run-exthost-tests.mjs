#!/usr/bin/env node
// Runs the extension-host tests (test/exthost/**/*.exthost.test.ts) with mocha inside the real
// extension host of VS Code 1.100.3 (code-server + chromium): builds the extension, bundles the
// suite with mocha to out/exthost/index.js, opens the workbench with extensionDevelopmentPath
// and extensionTestsPath in the URL payload, relays the log, exits with the runner's code.
// Usage: node scripts/run-exthost-tests.mjs [--no-build] [--keep]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import esbuild from 'esbuild';
import { require as tsxRequire } from 'tsx/cjs/api';
import { ensureCodeServer } from './ensure-code-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'out', 'exthost');
const TIMEOUT_MS = Number(process.env.RALPH_EXTHOST_TIMEOUT_MS ?? 300_000);
const args = new Set(process.argv.slice(2));

function findTests(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTests(p));
    else if (entry.name.endsWith('.exthost.test.ts')) found.push(p);
  }
  return found.sort();
}

/** One bundle: the suite index, mocha, and every test file, evaluated after mocha's globals exist. */
async function bundle() {
  const tests = findTests(path.join(root, 'test', 'exthost'));
  if (tests.length === 0) throw new Error('no test/exthost/**/*.exthost.test.ts files');
  const requires = tests.map((t) => `  require(${JSON.stringify('./' + path.relative(root, t).split(path.sep).join('/'))});`);
  const contents = [
    "import { runSuites } from './test/exthost/suite/index';",
    'export function run() {',
    '  return runSuites(() => {',
    ...requires,
    '  });',
    '}',
  ].join('\n');
  fs.rmSync(outDir, { recursive: true, force: true });
  await esbuild.build({
    stdin: { contents, resolveDir: root, sourcefile: 'exthost-entry.ts', loader: 'ts' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: path.join(outDir, 'index.js'),
    external: ['vscode'],
    sourcemap: 'inline',
    logLevel: 'error',
  });
  console.log(`[exthost] bundled ${tests.length} test file(s) into ${path.relative(root, outDir)}/index.js`);
}

async function main() {
  const started = Date.now();
  ensureCodeServer();
  if (!args.has('--no-build')) {
    console.log('[exthost] npm run build');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  }
  await bundle();

  const harness = tsxRequire('../test/e2e/harness.ts', import.meta.url);
  const repo = await harness.makeGitRepo();
  const server = await harness.CodeServer.start({});
  let exitCode;
  let resolveExit;
  const exited = new Promise((r) => (resolveExit = r));
  let workbench;
  try {
    workbench = await harness.Workbench.open(server, repo, {
      payload: [
        ['extensionDevelopmentPath', server.remoteUri(root)],
        ['extensionTestsPath', server.remoteUri(path.join(outDir, 'index'))],
      ],
      beforeLoad: async (page) => {
        // The extension host's console (mocha's reporter included) arrives as console args.
        await page.exposeFunction('codeAutomationLog', (_level, message) => {
          process.stdout.write(`${Array.isArray(message) ? format(...message) : String(message)}\n`);
        });
        await page.exposeFunction('codeAutomationExit', (code) => resolveExit(Number(code)));
      },
    });
    let timer;
    const timeout = new Promise((r) => (timer = setTimeout(() => r('timeout'), TIMEOUT_MS)));
    const result = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      console.error(`[exthost] no result after ${TIMEOUT_MS} ms; code-server log:\n${server.log()}`);
      exitCode = 2;
    } else {
      exitCode = result;
    }
  } finally {
    await workbench?.close();
    await server.stop({ keepFiles: args.has('--keep') });
    fs.rmSync(repo, { recursive: true, force: true });
  }
  console.log(`[exthost] exit code ${exitCode} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`[exthost] ${e instanceof Error ? e.stack : String(e)}`);
    process.exit(1);
  },
);
