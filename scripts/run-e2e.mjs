#!/usr/bin/env node
// Runs the end-to-end tests (test/e2e/**/*.e2e.test.ts) in a real VS Code 1.100.3: ensures
// code-server, builds and packages the extension to dist/ralph-loop.vsix (warning when it is
// over the size limit, scripts/vsixSize.mjs), then runs mocha
// serially. Screenshots stay in .artifacts/screenshots/. Prints wall time and the peak
// memory (PSS) of the whole test process tree (code-server, extension hosts, chromium).
// Usage: node scripts/run-e2e.mjs [--no-package] [extra mocha args, e.g. --grep smoke]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCodeServer } from './ensure-code-server.mjs';
import { checkVsixSize } from './vsixSize.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const skipPackage = argv.includes('--no-package');
const mochaExtra = argv.filter((a) => a !== '--no-package');

function step(label, fn) {
  const t = Date.now();
  console.log(`[e2e] ${label}`);
  const r = fn();
  console.log(`[e2e] ${label}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return r;
}

/** Proportional set size (bytes) of `pid` and all its descendants: shared pages counted once. */
function treePss(pid) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      // the process ended while we looked
    }
  }
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop();
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'));
      total += m ? Number(m[1]) * 1024 : 0;
    } catch {
      // gone, or not readable
    }
    stack.push(...(children.get(p) ?? []));
  }
  return total;
}

async function main() {
  const started = Date.now();
  step('ensure code-server', () => ensureCodeServer());
  if (!skipPackage) {
    // vsce runs the manifest's vscode:prepublish (npm run build:prod) before packaging.
    step('vsce package (builds with build:prod first)', () =>
      // `npm run package`: the README with its pictures inlined (scripts/vsix-readme.mjs), then vsce.
      execFileSync('npm', ['run', '--silent', 'package'], {
        cwd: root,
        stdio: 'inherit',
      }),
    );
    // The package a user downloads stays under its limit: crossing it fails the run (the
    // README's inlined pictures are the easiest to overspend, scripts/vsix-readme.mjs).
    const tooBig = checkVsixSize(path.join(root, 'dist', 'ralph-loop.vsix'), undefined, (line) => console.log(`[e2e] ${line}`));
    if (tooBig) throw new Error(tooBig);
  }
  // Fresh screenshots each run, so the CI artifact shows this run only.
  fs.rmSync(path.join(root, '.artifacts', 'screenshots'), { recursive: true, force: true });
  const mocha = path.join(root, 'node_modules', '.bin', 'mocha');
  const mochaArgs = [
    '--require',
    'tsx/cjs',
    '--extension',
    'ts',
    '--timeout',
    '300000',
    '--reporter',
    'spec',
    ...mochaExtra,
    'test/e2e/**/*.e2e.test.ts',
  ];
  const testsStarted = Date.now();
  const child = spawn(mocha, mochaArgs, { cwd: root, stdio: 'inherit' });
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treePss(child.pid));
  }, 500);
  const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  clearInterval(sampler);
  const shots = path.join(root, '.artifacts', 'screenshots');
  const count = fs.existsSync(shots) ? fs.readdirSync(shots).filter((f) => f.endsWith('.png')).length : 0;
  console.log(
    `[e2e] mocha exit ${code}; tests ${((Date.now() - testsStarted) / 1000).toFixed(1)} s, ` +
      `total ${((Date.now() - started) / 1000).toFixed(1)} s; peak memory of the test process tree ` +
      `${(peak / 2 ** 30).toFixed(2)} GiB (PSS); ${count} screenshot(s) in ${path.relative(root, shots)}/`,
  );
  return code;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`[e2e] ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
