// Ralph's own agents get no MCP server, whatever the user's or the repository's
// configuration says: `ralph mcp` (or any server with a deciding tool) in an agent's hands
// would let it approve its own patch past the judge. Claude Code has a switch for it (only
// the servers of --mcp-config, and that config names none; project .mcp.json, user and
// settings servers are ignored). Codex has none: each server it would start (user config,
// profile, project config — as `codex mcp list` resolves them for the agent's environment
// and folder) is disabled by a `-c` override; when the list cannot be read, the user's
// config.toml is not loaded at all.
import { runProcess } from './process';

/** Claude Code: only --mcp-config's servers, and it has none. */
export const CLAUDE_NO_MCP_ARGS: readonly string[] = ['--strict-mcp-config', '--mcp-config', '{"mcpServers":{}}'];

/** What the codex command line does about MCP servers. */
export type CodexMcpOff = { readonly disable: readonly string[] } | { readonly ignoreUserConfig: true };

/** A TOML key for a server name: bare when it can be, else quoted. */
function tomlKey(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}

/** The codex arguments that keep MCP servers off. */
export function codexMcpOffArgs(off: CodexMcpOff): string[] {
  if ('ignoreUserConfig' in off) return ['--ignore-user-config'];
  return off.disable.flatMap((n) => ['-c', `mcp_servers.${tomlKey(n)}.enabled=false`]);
}

/**
 * The MCP servers codex would start for this environment and folder (`codex mcp list --json`);
 * `ignoreUserConfig` when it cannot say (fail closed).
 */
export async function codexMcpOff(o: {
  readonly command: string;
  readonly commandArgs?: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly signal?: AbortSignal;
}): Promise<CodexMcpOff> {
  const lines: string[] = [];
  const out = await runProcess({
    file: o.command,
    args: [...(o.commandArgs ?? []), 'mcp', 'list', '--json'],
    cwd: o.cwd,
    env: o.env,
    input: '',
    timeoutMs: 15_000,
    graceMs: 1000,
    ...(o.signal ? { signal: o.signal } : {}),
    onStdoutLine: (l) => void lines.push(l),
  });
  if (out.exitCode !== 0) return { ignoreUserConfig: true };
  try {
    const list: unknown = JSON.parse(lines.join('\n'));
    if (!Array.isArray(list)) return { ignoreUserConfig: true };
    const names = list.map((s) => (s as { name?: unknown }).name);
    if (!names.every((n): n is string => typeof n === 'string' && n.length > 0)) return { ignoreUserConfig: true };
    return { disable: names };
  } catch {
    return { ignoreUserConfig: true };
  }
}
