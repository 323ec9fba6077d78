// Test-side wiring of the real CLIs to the scripted model server (test/kit/README.md): the pinned
// binaries from .tools/, throwaway HOME/TMPDIR/config dirs, the DISABLE_* variables, few
// retries, and Codex's custom "mock" provider. Also a temp git repository helper.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Sandbox } from '../../src/agents/scripted/sandbox';
import { makeTempGitRepo } from './git';
import type { TempGitRepo } from './git';

// The claude sandbox is product code (the demo uses it); the tests take it from there.
export { claudeSandbox } from '../../src/agents/scripted/sandbox';
export type { Sandbox } from '../../src/agents/scripted/sandbox';

const root = resolve(__dirname, '..', '..');

export interface AgentClis {
  readonly claude: string;
  readonly codex: string;
}

let clis: AgentClis | undefined;
/** Installs (once, ~800 MB) or finds the pinned CLIs in .tools/ and returns their paths. */
export function ensureAgentClis(): AgentClis {
  clis ??= JSON.parse(
    execFileSync(process.execPath, [join(root, 'scripts', 'ensure-agent-clis.mjs')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  ) as AgentClis;
  return clis;
}

const basePath = (): string => process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';

/**
 * Environment for the real `codex` (throwaway home, key for the mock provider). CODEX_HOME
 * must not lie under the temporary directory codex sees (TMPDIR, else /tmp): codex 0.171
 * refuses to create its `codex-linux-sandbox` helper alias there, and with bubblewrap
 * installed every sandboxed command then fails with `bwrap: execvp codex-linux-sandbox`.
 * So TMPDIR is a sibling folder of CODEX_HOME, never a parent of it.
 */
export function codexSandbox(path: string = basePath()): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-codex-home-'));
  for (const sub of ['home', 'codex', 'tmp']) mkdirSync(join(dir, sub));
  const env = {
    PATH: path,
    HOME: join(dir, 'home'),
    CODEX_HOME: join(dir, 'codex'),
    TMPDIR: join(dir, 'tmp'),
    CODEX_API_KEY: 'test-key-not-secret-0123456789',
  };
  return { dir, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A PATH with the same programs as `path` but without `names` (e.g. `bwrap`): a folder of
 * symbolic links to every other executable, so a test can run a CLI as on a machine where
 * those programs are not installed.
 */
export function pathWithout(names: readonly string[], path: string = basePath()): { path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-path-without-'));
  const skip = new Set(names);
  for (const d of path.split(':')) {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      continue;
    }
    for (const e of entries) {
      if (skip.has(e)) continue;
      try {
        symlinkSync(join(d, e), join(dir, e));
      } catch {
        // an earlier PATH entry already provides it, as PATH lookup would
      }
    }
  }
  return { path: dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `-c` overrides pointing codex at the scripted server with no websocket, retries or analytics. */
export function codexMockProvider(serverUrl: string): { configOverrides: string[]; extraArgs: string[] } {
  return {
    configOverrides: [
      'model_provider="mock"',
      'model_providers.mock.name="mock"',
      `model_providers.mock.base_url="${serverUrl}/v1"`,
      'model_providers.mock.wire_api="responses"',
      'model_providers.mock.env_key="CODEX_API_KEY"',
      'model_providers.mock.supports_websockets=false',
      'model_providers.mock.request_max_retries=0',
      'model_providers.mock.stream_max_retries=0',
      'analytics.enabled=false',
    ],
    extraArgs: ['--disable', 'plugins'],
  };
}

/** A temp git repository with one commit and a user in its config. */
export function makeTempRepo(prefix = 'ralph-agent-repo-'): TempGitRepo {
  return makeTempGitRepo(undefined, { prefix, identity: true });
}

/** Live (non-zombie) processes whose working directory is `dir` or below it. */
export function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && (cwd === dir || cwd.startsWith(dir + '/'))) found.push(Number(entry));
    } catch {
      // gone or not ours to read
    }
  }
  return found;
}
