#!/usr/bin/env node
// Installs the pinned agent CLIs (Claude Code, Codex) into the git-ignored `.tools/` folder
// for the integration tests and prints their executable paths as JSON. They are large
// (~400 MB each, platform binaries as optional dependencies), so an install at the pinned
// version is reused; they are never runtime dependencies of the extension.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PINNED = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const toolsDir = process.env.RALPH_TOOLS_DIR ?? join(root, '.tools');

function installedVersion(pkg) {
  const manifest = join(toolsDir, 'node_modules', pkg, 'package.json');
  if (!existsSync(manifest)) return undefined;
  try {
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
  } catch {
    return undefined;
  }
}

function binPath(name) {
  return join(toolsDir, 'node_modules', '.bin', name);
}

// Two test runs installing at once would corrupt node_modules: a lock directory serialises
// them; one older than 20 minutes is a leftover of a killed install and is taken over.
function withInstallLock(fn) {
  const lock = join(toolsDir, '.install-lock');
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 20 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // removed meanwhile
      }
      Atomics.wait(wait, 0, 0, 500);
    }
  }
  try {
    fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export function ensureAgentClis(log = (m) => process.stderr.write(`${m}\n`)) {
  mkdirSync(toolsDir, { recursive: true });
  // A package.json of its own keeps npm from walking up into the project's manifest.
  const manifest = join(toolsDir, 'package.json');
  if (!existsSync(manifest)) {
    writeFileSync(manifest, JSON.stringify({ name: 'ralph-tools', private: true }, null, 2) + '\n');
  }
  const missing = Object.values(PINNED).filter((p) => installedVersion(p.pkg) !== p.version || !existsSync(binPath(p.bin)));
  if (missing.length > 0) {
    withInstallLock(() => {
      // Another process may have installed them while we waited for the lock.
      const still = missing.filter((p) => installedVersion(p.pkg) !== p.version || !existsSync(binPath(p.bin)));
      if (still.length === 0) return;
      const specs = still.map((p) => `${p.pkg}@${p.version}`);
      log(`ensure-agent-clis: installing ${specs.join(' ')} into ${toolsDir} (large, once)`);
      execFileSync('npm', ['install', '--prefix', toolsDir, '--save-exact', '--no-audit', '--no-fund', '--loglevel=error', ...specs], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    });
  }
  const paths = {};
  for (const [key, p] of Object.entries(PINNED)) {
    if (installedVersion(p.pkg) !== p.version) throw new Error(`${p.pkg}@${p.version} did not install into ${toolsDir}`);
    paths[key] = binPath(p.bin);
  }
  return paths;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const paths = ensureAgentClis();
  process.stdout.write(JSON.stringify(paths) + '\n');
}
