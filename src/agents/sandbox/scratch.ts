// An agent's scratch folder (`<cache>/<repo>/agents/<name>/`, src/git/repoCache.ts): its own
// HOME, TMPDIR, XDG folders and CLI configuration, the only place besides its worktree an
// agent may write. A login the user made with the CLI (`claude login`, `codex login`) is
// copied in, never linked: the agent may read it (it must, to authenticate) but whatever it
// writes there (a refreshed token, settings, hooks) stays in its scratch.
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AgentCli } from './environment';

export interface ScratchLayout {
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  readonly config: string;
  readonly cache: string;
  /** CLAUDE_CONFIG_DIR or CODEX_HOME; a sibling of tmp, never inside it (codex refuses that). */
  readonly cliConfig: string;
}

export function scratchLayout(root: string, cli: AgentCli): ScratchLayout {
  return {
    root,
    home: join(root, 'home'),
    tmp: join(root, 'tmp'),
    config: join(root, 'config'),
    cache: join(root, 'cache'),
    cliConfig: join(root, cli === 'codex' ? 'codex' : 'claude'),
  };
}

/** The scratch variables for a layout (see SCRATCH_VARIABLES). */
export function scratchEnv(layout: ScratchLayout, cli: AgentCli): Record<string, string> {
  return {
    HOME: layout.home,
    TMPDIR: layout.tmp,
    TMP: layout.tmp,
    TEMP: layout.tmp,
    XDG_CONFIG_HOME: layout.config,
    XDG_CACHE_HOME: layout.cache,
    XDG_DATA_HOME: join(layout.home, '.local', 'share'),
    XDG_STATE_HOME: join(layout.home, '.local', 'state'),
    ...(cli === 'codex' ? { CODEX_HOME: layout.cliConfig } : { CLAUDE_CONFIG_DIR: layout.cliConfig }),
  };
}

/** The files a CLI's login lives in, relative to its config folder. */
const LOGIN_FILES: Readonly<Record<AgentCli, readonly string[]>> = {
  claude: ['.credentials.json'],
  codex: ['auth.json', 'config.toml'],
  scripted: [],
};

/** The user's own config folder of a CLI (where `claude login` / `codex login` wrote). */
export function userCliConfigDir(cli: AgentCli, env: Readonly<Record<string, string | undefined>>, home = homedir()): string | null {
  if (cli === 'claude') return env.CLAUDE_CONFIG_DIR ?? join(home, '.claude');
  if (cli === 'codex') return env.CODEX_HOME ?? join(home, '.codex');
  return null;
}

/**
 * Creates the scratch folders and copies the user's CLI login in when it is newer than the
 * copy there (so a re-login reaches the agents). Returns the files copied.
 */
export function prepareScratch(layout: ScratchLayout, cli: AgentCli, userConfigDir: string | null): string[] {
  for (const d of [layout.home, layout.tmp, layout.config, layout.cache, layout.cliConfig]) mkdirSync(d, { recursive: true });
  const copied: string[] = [];
  if (userConfigDir === null) return copied;
  for (const f of LOGIN_FILES[cli]) {
    const from = join(userConfigDir, f);
    const to = join(layout.cliConfig, f);
    let src: number;
    try {
      src = statSync(from).mtimeMs;
    } catch {
      continue;
    }
    let dst = -1;
    try {
      dst = statSync(to).mtimeMs;
    } catch {
      // not copied yet
    }
    if (src > dst) {
      copyFileSync(from, to);
      copied.push(to);
    }
  }
  return copied;
}
