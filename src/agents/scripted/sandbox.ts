// The environment for the real `claude` CLI against the scripted model server
// (modelServer.ts): a throwaway HOME/TMPDIR/config dir, the server's URL, a key that is no
// secret, no auto-update, telemetry or non-essential traffic, and few retries. The demo and
// the tests both run claude in it.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Sandbox {
  readonly dir: string;
  readonly env: Record<string, string>;
  cleanup(): void;
}

const basePath = (): string => process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';

/** Environment for the real `claude` against the scripted server, in a throwaway home. */
export function claudeSandbox(serverUrl: string): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-claude-home-'));
  mkdirSync(join(dir, 'tmp'));
  const env = {
    PATH: basePath(),
    HOME: dir,
    TMPDIR: join(dir, 'tmp'),
    CLAUDE_CONFIG_DIR: join(dir, '.claude'),
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: 'test-key-not-secret-0123456789',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
  };
  return { dir, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
