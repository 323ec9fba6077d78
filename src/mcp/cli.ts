// `ralph mcp [--read-only]`: the MCP server of the project in --dir (default the current
// folder) over stdio, until the client closes stdin or ends the process. Loaded lazily by the
// CLI's dispatch, in its own bundle (dist/mcp.js): the SDK costs the other commands nothing.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createRalphMcpServer } from './server';
import { StoreAccess } from './storeAccess';

export interface McpCliIo {
  out(text: string): void;
  err(text: string): void;
}

export const MCP_USAGE = 'mcp [--read-only]';

declare const RALPH_VERSION: string | undefined;

function version(): string {
  // esbuild defines it from package.json; under tsx (tests) it is undefined.
  return typeof RALPH_VERSION === 'string' ? RALPH_VERSION : '0.0.0-dev';
}

/** Runs the server until the client goes away; resolves with the exit code. */
export async function runMcpCommand(projectDir: string, args: readonly string[], io: McpCliIo): Promise<number> {
  let readOnly = false;
  for (const a of args) {
    if (a === '--read-only') readOnly = true;
    else {
      io.err(`ralph mcp: unknown argument '${a}' (usage: ralph ${MCP_USAGE})\n`);
      return 2;
    }
  }
  const access = new StoreAccess({ projectDir });
  const server = createRalphMcpServer({
    port: access,
    readOnly,
    version: version(),
    log: (m) => io.err(`ralph mcp: ${m}\n`),
  });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  const close = (): void => void server.close().catch(() => undefined);
  process.stdin.once('end', close);
  process.once('SIGTERM', close);
  process.once('SIGINT', close);
  await server.connect(new StdioServerTransport());
  io.err(`ralph mcp: serving ${projectDir}${readOnly ? ' (read-only)' : ''} over stdio\n`);
  await closed;
  process.stdin.off('end', close);
  process.off('SIGTERM', close);
  process.off('SIGINT', close);
  await access.close();
  return 0;
}
