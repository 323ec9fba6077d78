// Finds the pinned real `claude` CLI in .tools/ WITHOUT installing it (the demo uses it when
// present, else the lightweight scripted executable). Works from the sources and from the
// esbuild bundle: it walks up from the given start folders to the one holding `.tools/`.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Keep equal to PINNED.claude.version in scripts/ensure-agent-clis.mjs (the demo int test checks). */
export const PINNED_CLAUDE_VERSION = '2.1.332';

export interface PinnedClaude {
  readonly binary: string;
  readonly version: string;
}

function atTools(toolsDir: string): PinnedClaude | undefined {
  const binary = join(toolsDir, 'node_modules', '.bin', 'claude');
  const manifest = join(toolsDir, 'node_modules', '@anthropic-ai', 'claude-code', 'package.json');
  if (!existsSync(binary) || !existsSync(manifest)) return undefined;
  try {
    const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
    return version === PINNED_CLAUDE_VERSION ? { binary, version } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pinned claude in `$RALPH_TOOLS_DIR` when set (only there), else in the first `.tools/`
 * found walking up from each start folder; undefined when absent or another version.
 */
export function findPinnedClaude(
  startDirs: readonly string[] = [__dirname, process.cwd()],
  env: NodeJS.ProcessEnv = process.env,
): PinnedClaude | undefined {
  if (env.RALPH_TOOLS_DIR !== undefined && env.RALPH_TOOLS_DIR !== '') return atTools(resolve(env.RALPH_TOOLS_DIR));
  for (const start of startDirs) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      if (existsSync(join(dir, '.tools'))) {
        const found = atTools(join(dir, '.tools'));
        if (found !== undefined) return found;
      }
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}
