// The commands that are not single control-plane operations: project bootstrap and upkeep
// (src/project via projectCommands.ts), the loop's verbs (loopCommands.ts) and the
// MCP server (src/mcp/cli.ts, with the MCP SDK).
// The dispatcher tries these before the ralphctl-compatible table. Each command loads its
// implementation when it runs (lazy.ts), so the table costs nothing to list.
import type { CliIo } from './controlCommands';
import {
  loadDoctorCommand,
  loadLogsCommand,
  loadLoopCommands,
  loadMcpCommand,
  loadProjectCommands,
  loadReqCommand,
  loadRestoreIncidentCommand,
  loadStoreCommand,
  loadStoreUrl,
  loadTeamCommands,
} from './lazy';

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
    usage: 'init [--lang L] [--name N] [--model M] [--force] [--git-init]',
    summary: 'create or complete .ralph/ and ralph.config.json, then import BACKLOG.md',
    run: async (dir, args, io) => (await loadProjectCommands()).runInitCommand(args, projectIo(io), { cwd: dir }),
  },
  {
    name: 'repair',
    usage: 'repair [--fix] [--json]',
    summary: 'check the project, store and git health; --fix repairs through the control plane',
    run: async (dir, args, io) => (await loadProjectCommands()).runRepairCommand(args, projectIo(io), { cwd: dir }),
  },
  {
    name: 'doctor',
    usage: 'doctor [--json]',
    summary: 'check each role’s agent CLI (installed, version, login) and which confinement its agents get',
    run: async (dir, args, io) => (await loadDoctorCommand()).doctorCommand(dir, args, io),
  },
  {
    name: 'restore-incident',
    usage: 'restore-incident <incident-id>',
    summary: 'put back the hooks and config files an agent changed (see `ralph status` and the incident event)',
    run: async (dir, args, io) => (await loadRestoreIncidentCommand()).restoreIncidentCommand(dir, args, io),
  },
  {
    name: 'start',
    usage: 'start [--once] [--workers N] [--quiet]',
    summary:
      'run the loop in this process (until stopped; --once: until the backlog is empty or blocked); on a PostgreSQL store with a shared remote: the elected promoter',
    run: async (dir, args, io) => {
      // On the team's PostgreSQL store with a shared remote this process stands for election
      // as the one promoter; without a remote, the loop runs on that store and promotes here.
      if ((await loadStoreUrl()).resolveStoreLocation(dir).kind === 'postgres') {
        const team = await loadTeamCommands();
        if (await team.hasTeamRemote(dir, args)) return team.teamStartCommand(dir, team.parseTeamStartArgs(args), io);
      }
      return (await loadLoopCommands()).startCommand(dir, args, io);
    },
  },
  {
    name: 'worker',
    usage: 'worker [--store URL] [--count N] [--remote R] [--lease-ttl S] [--exit-when-idle] [--quiet]',
    summary:
      'team mode: claim tasks from the shared PostgreSQL store by lease, work them confined in this clone, push each verified patch as a ref to the remote and queue it',
    run: async (dir, args, io) => (await loadTeamCommands()).workerCommand(dir, args, io),
  },
  ...(['stop', 'pause', 'resume'] as const).map((verb): HostCommand => ({
    name: verb,
    usage: `${verb} [reason...]`,
    summary: `ask the running loop to ${verb}`,
    run: async (dir, args, io) => (await loadLoopCommands()).loopRequestCommand(dir, verb, args, io),
  })),
  {
    name: 'logs',
    usage: 'logs [--agent A] [--task T] [--all] [--follow]',
    summary: "the agents' transcripts: each invocation's text, tool calls and results; --follow: as they are written",
    run: async (dir, args, io) => (await loadLogsCommand()).logsCommand(dir, args, io),
  },
  {
    name: 'req',
    usage:
      'req status [--json] | req run [--quiet] | req resume [--quiet] | req decide REQ-ID skip|manual|stop|rollback | req promote <learning>',
    summary: 'REQ mode: build specification.yaml requirement by requirement (fresh context per REQ, TDD, L1-L3 verification)',
    run: async (dir, args, io) => (await loadReqCommand()).reqCommand(dir, args, io),
  },
  {
    name: 'mcp',
    usage: 'mcp [--read-only]',
    summary:
      'serve this project to chat clients (Claude Code, Codex, VS Code) as an MCP server over stdio; --read-only: only the reading tools',
    run: async (dir, args, io) => (await loadMcpCommand()).runMcpCommand(dir, args, io),
  },
  {
    name: 'store',
    usage: 'store migrate --to postgres://user@host:5432/db | store where | store roles [--database D]',
    summary: "team mode: copy this project's history into a shared PostgreSQL store, verified event by event; where: which store is used",
    run: async (dir, args, io) => (await loadStoreCommand()).storeCommand(dir, args, io),
  },
  {
    name: 'demo',
    usage: 'demo [--req] [--scripted]',
    summary:
      'run the loop on a generated sample project with a scripted model (through the real claude CLI when installed in .tools/, else the scripted executable); --req: REQ mode on a specification.yaml',
    run: async (_dir, args, io) => (await loadLoopCommands()).demoCommand(io, args),
  },
];
