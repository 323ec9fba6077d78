#!/usr/bin/env node
// Installs code-server (VS Code 1.100.3 server + web workbench) into the git-ignored
// .e2e/code-server, offline-safe (test/e2e/README.md). Idempotent: a marker file written
// after a successful install makes later runs a no-op. Prints what it did.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { missingPackages } from './ensure-system-deps.mjs';

export const CODE_SERVER_VERSION = '4.100.3';
// The @vscode/ripgrep version code-server 4.100.3 depends on, and the rg archive it fetches.
const RIPGREP_PKG_VERSION = '1.15.11';
const RIPGREP_TARGETS = {
  x64: 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz',
  arm64: 'ripgrep-v13.0.0-10-aarch64-unknown-linux-musl.tar.gz',
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const installDir = path.join(root, '.e2e', 'code-server');
export const codeServerBin = path.join(installDir, 'node_modules', '.bin', 'code-server');
const marker = path.join(installDir, `.installed-${CODE_SERVER_VERSION}`);

function log(msg) {
  console.log(`[ensure-code-server] ${msg}`);
}

function installedVersion() {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(installDir, 'node_modules', 'code-server', 'package.json'), 'utf8'));
    return pkg.version;
  } catch {
    return undefined;
  }
}

function which(cmd) {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** code-server's native modules and the e2e browser: the packages of the one list in ensure-system-deps.mjs. */
function checkSystem() {
  const missing = missingPackages(['ripgrep', 'pkg-config', 'libkrb5-dev', 'chromium']);
  if (missing.length > 0) {
    throw new Error(
      `missing system packages: ${missing.join(' ')} — install them with ` +
        `apt-get install -y --no-install-recommends ${missing.join(' ')} (npm test's pretest step does this as root)`,
    );
  }
}

/** @vscode/ripgrep's postinstall downloads rg; a pre-seeded cache in TMPDIR makes it offline. */
function seedRipgrepCache(tmpDir) {
  const archive = RIPGREP_TARGETS[process.arch];
  if (!archive) throw new Error(`no ripgrep archive name known for arch ${process.arch}`);
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${RIPGREP_PKG_VERSION}`);
  fs.mkdirSync(cacheDir, { recursive: true });
  const rg = fs.realpathSync(which('rg'));
  execFileSync('tar', ['czf', path.join(cacheDir, archive), '-C', path.dirname(rg), path.basename(rg)]);
  log(`seeded ${path.join(cacheDir, archive)} from ${rg}`);
}

export function ensureCodeServer() {
  const version = installedVersion();
  if (version === CODE_SERVER_VERSION && fs.existsSync(marker) && fs.existsSync(codeServerBin)) {
    log(`code-server ${version} already installed in ${path.relative(root, installDir)}; nothing to do`);
    return codeServerBin;
  }
  checkSystem();
  if (version !== undefined) log(`found code-server ${version} (incomplete or other version): reinstalling`);
  fs.rmSync(installDir, { recursive: true, force: true });
  fs.mkdirSync(installDir, { recursive: true });
  // A private TMPDIR so the seeded cache is exactly where the postinstall looks.
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-cs-install-'));
  try {
    seedRipgrepCache(tmpDir);
    const started = Date.now();
    log(`npm install --prefix ${path.relative(root, installDir)} code-server@${CODE_SERVER_VERSION} --unsafe-perm`);
    execFileSync(
      'npm',
      ['install', '--prefix', installDir, `code-server@${CODE_SERVER_VERSION}`, '--unsafe-perm', '--no-audit', '--no-fund'],
      {
        stdio: 'inherit',
        // Root refuses postinstall without --unsafe-perm; node-pty's postinstall runs
        // `npx node-gyp`, which needs npm_config_yes to not prompt.
        env: { ...process.env, TMPDIR: tmpDir, npm_config_yes: 'true' },
      },
    );
    const got = installedVersion();
    if (got !== CODE_SERVER_VERSION || !fs.existsSync(codeServerBin)) {
      throw new Error(`code-server install finished but ${codeServerBin} (version ${got}) is not usable`);
    }
    fs.writeFileSync(marker, `${new Date().toISOString()}\n`);
    log(`installed code-server ${got} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
  return codeServerBin;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    ensureCodeServer();
  } catch (e) {
    console.error(`[ensure-code-server] ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
