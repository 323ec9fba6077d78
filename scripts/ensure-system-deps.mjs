#!/usr/bin/env node
// `npm test`'s first step (the `pretest` script): makes sure the system has what the tests
// drive for real — Debian's chromium (the monitor and VS Code e2e), ripgrep, libkrb5-dev and
// pkg-config (code-server's native modules), git and python3 (real repositories, a real
// sqlite3 client), bubblewrap and socat (agent confinement) and PostgreSQL's server (team
// mode) — plus a git identity for the tests' commits. As root with apt it installs what is
// missing; otherwise it stops at once with the one line to run. This is the one list of
// system packages: .ci/run only calls `npm ci && npm test`.
//
// Usage: node scripts/ensure-system-deps.mjs [--check]
//   --check (or RALPH_DEPS_NO_INSTALL=1): report, never install.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Debian package → how to tell it is there. */
const PACKAGES = [
  { pkg: 'git', present: () => onPath('git') },
  { pkg: 'python3', present: () => onPath('python3') },
  { pkg: 'chromium', present: () => chromiumPresent() },
  { pkg: 'ripgrep', present: () => onPath('rg') },
  { pkg: 'pkg-config', present: () => onPath('pkg-config') },
  {
    pkg: 'libkrb5-dev',
    present: () => ['/usr/include/krb5.h', '/usr/include/krb5/krb5.h'].some((f) => fs.existsSync(f)) || dpkgHas('libkrb5-dev'),
  },
  { pkg: 'bubblewrap', present: () => onPath('bwrap') },
  { pkg: 'socat', present: () => onPath('socat') },
  { pkg: 'postgresql', present: () => postgresPresent() },
];

/** The oldest Node the project supports (package.json engines). */
const MIN_NODE = [20, 19];

function log(msg) {
  console.log(`[ensure-system-deps] ${msg}`);
}

function onPath(cmd) {
  return (process.env.PATH ?? '').split(path.delimiter).some((d) => {
    if (!d) return false;
    try {
      fs.accessSync(path.join(d, cmd), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function dpkgHas(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && /install ok installed/.test(r.stdout);
}

function chromiumPresent() {
  const configured = process.env.RALPH_E2E_CHROMIUM ?? process.env.CHROMIUM_PATH;
  if (configured) return fs.existsSync(configured);
  return fs.existsSync('/usr/bin/chromium') || onPath('chromium');
}

function postgresPresent() {
  if (onPath('postgres') && onPath('initdb')) return true;
  try {
    return fs.readdirSync('/usr/lib/postgresql').some((v) => fs.existsSync(path.join('/usr/lib/postgresql', v, 'bin', 'initdb')));
  } catch {
    return false;
  }
}

function gitIdentity() {
  const get = (k) => {
    const r = spawnSync('git', ['config', '--get', k], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : '';
  };
  return { name: get('user.name'), email: get('user.email') };
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The Debian packages of `only` (default: all) that are missing; other scripts ask for their subset. */
export function missingPackages(only = PACKAGES.map((p) => p.pkg)) {
  return PACKAGES.filter((p) => only.includes(p.pkg) && !p.present()).map((p) => p.pkg);
}

function stop(line, detail) {
  if (detail) log(detail);
  console.error(`[ensure-system-deps] Run this, then npm test again:\n  ${line}`);
  process.exit(1);
}

function main() {
  const checkOnly = process.argv.includes('--check') || process.env.RALPH_DEPS_NO_INSTALL === '1';
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    stop(`install Node.js ${MIN_NODE.join('.')} or newer (this is ${process.versions.node})`);
  }

  let missing = missingPackages();
  const apt = onPath('apt-get');
  if (missing.length > 0) {
    const install = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
    if (checkOnly || !isRoot() || !apt) {
      const line = apt
        ? `sudo apt-get update && sudo ${install}`
        : `install these packages with your system's package manager: ${missing.join(' ')}`;
      stop(line, `missing system packages: ${missing.join(', ')}`);
    }
    log(`installing ${missing.join(' ')} with apt-get (running as root)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
    missing = missingPackages();
    if (missing.length > 0) stop(`sudo ${install}`, `still missing after apt-get: ${missing.join(', ')}`);
  }

  // The tests commit in real repositories: git refuses without an identity.
  const id = gitIdentity();
  if (!id.name || !id.email) {
    const line = 'git config --global user.name "Your Name" && git config --global user.email you@example.com';
    if (checkOnly || !isRoot()) stop(line, 'git has no user.name / user.email (the tests make real commits)');
    // A root shell on a fresh machine (CI): a throwaway identity, as .ci/run used to set.
    if (!id.name) execFileSync('git', ['config', '--global', 'user.name', 'Ralph CI']);
    if (!id.email) execFileSync('git', ['config', '--global', 'user.email', 'ci@ralph.invalid']);
    log('set a git identity for the tests (Ralph CI <ci@ralph.invalid>)');
  }
  log(`ok: ${PACKAGES.map((p) => p.pkg).join(', ')}, git identity, Node ${process.versions.node}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
