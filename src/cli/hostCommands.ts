// The commands that are not single control-plane operations: project bootstrap and upkeep
// (src/project via projectCommands.ts) and the loop's verbs (src/loop/cliCommands.ts).
// The dispatcher tries these before the ralphctl-compatible table.
import { demoCommand, loopRequestCommand, startCommand } from '../loop/cliCommands';
import { runInitCommand, runRepairCommand } from './projectCommands';
import type { CliIo } from './controlCommands';
import type * as McpCli from '../mcp/cli';

/**
 * The MCP server (and its SDK) is required only by `ralph mcp`: esbuild makes it a bundle of
 * its own (dist/mcp.js), so loading it costs the other commands nothing.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const mcpCli = (): typeof McpCli => require('../mcp/cli') as typeof McpCli;

export interface HostCommand {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  run(dir: string, args: readonly string[], io: CliIo): Promise<number>;
}

const projectIo = (io: CliIo): { stdout(t: string): void; stderr(t: string): void } => ({ stdout: io.out, stderr: io.err });

export const HOST_COMMANDS: readonly HostCommand[] = [
  {
    name: 'init',
    usage: 'init [--lang L] [--name N] [--model M] [--force]',
    summary: 'create or complete .ralph/ and ralph.config.json, then import BACKLOG.md',
    run: (dir, args, io) => runInitCommand(args, projectIo(io), { cwd: dir }),
  },
  {
    name: 'repair',
    usage: 'repair [--fix] [--json]',
    summary: 'check the project, store and git health; --fix repairs through the control plane',
    run: (dir, args, io) => runRepairCommand(args, projectIo(io), { cwd: dir }),
  },
  {
    name: 'start',
    usage: 'start [--once] [--workers N] [--quiet]',
    summary: 'run the loop in this process (until stopped; --once: until the backlog is empty or blocked)',
    run: (dir, args, io) => startCommand(dir, args, io),
  },
  ...(['stop', 'pause', 'resume'] as const).map((verb): HostCommand => ({
    name: verb,
    usage: `${verb} [reason...]`,
    summary: `ask the running loop to ${verb}`,
    run: async (dir, args, io) => loopRequestCommand(dir, verb, args, io),
  })),
  {
    name: 'mcp',
    usage: 'mcp [--read-only]',
    summary:
      'serve this project to chat clients (Claude Code, Codex, VS Code) as an MCP server over stdio; --read-only: only the reading tools',
    run: (dir, args, io) => mcpCli().runMcpCommand(dir, args, io),
  },
  {
    name: 'demo',
    usage: 'demo [--scripted]',
    summary:
      'run the loop on a generated sample project with a scripted model (through the real claude CLI when installed in .tools/, else the scripted executable)',
    run: (_dir, args, io) => demoCommand(io, args),
  },
];
