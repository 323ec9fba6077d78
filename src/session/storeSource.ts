// Which store a session reads, and its opening: the embedded store in .ralph (an observer of
// whichever process writes it), or the team's PostgreSQL store the folder's config or
// RALPH_STORE_URL names. On the team store every process appends (by compare-and-swap), so
// the session opens it as a writer: its human decisions go straight into the shared log.
// The team's machines are those of its live leases (teamAgents.ts makes the agents' rows).
import * as path from 'node:path';
import { CONTROL_PROJECTIONS, drainInbox, submitToInbox } from '../control';
import type { ControlContext, InboxCommand } from '../control';
import { openProjectStore } from '../store/open';
import { redactStoreUrl, resolveStoreLocation } from '../store/storeUrl';
import type { EventStore, SqlReader } from '../store/types';
import { currentLeases, leaseProjection, type Lease } from '../team/leases';
import type { TeamMachine } from './teamAgents';
import { CommandFailedError, type SubmitOutcome } from './errors';

export type SessionStoreLocation =
  | { readonly kind: 'embedded' }
  /** `where`: the URL without its password, the only form that is logged or shown. */
  | { readonly kind: 'postgres'; readonly where: string }
  /** The config names a store this session cannot read (never guessed as the embedded one). */
  | { readonly kind: 'broken'; readonly problem: string };

/** The folder's store; a broken "store" setting is a problem, not a silent embedded store. */
export function sessionStoreOf(projectDir: string, env: NodeJS.ProcessEnv): SessionStoreLocation {
  try {
    const l = resolveStoreLocation(projectDir, env);
    return l.kind === 'postgres' ? { kind: 'postgres', where: redactStoreUrl(l.url) } : { kind: 'embedded' };
  } catch (e) {
    return { kind: 'broken', problem: e instanceof Error ? e.message : String(e) };
  }
}

/** The team store keeps the leases beside the control views: they are its agents. */
export const TEAM_SESSION_PROJECTIONS = [...CONTROL_PROJECTIONS, leaseProjection];

/** Opens the session's store: the embedded one as an observer, the team's as a writer. */
export function openSessionStore(ralphDir: string, where: SessionStoreLocation, env: NodeJS.ProcessEnv): Promise<EventStore> {
  if (where.kind === 'broken') return Promise.reject(new Error(where.problem));
  const team = where.kind === 'postgres';
  return openProjectStore(
    {
      ralphDir,
      mode: team ? 'writer' : 'observer',
      projections: team ? TEAM_SESSION_PROJECTIONS : CONTROL_PROJECTIONS,
      ...(team ? { runId: `vscode_${process.pid}` } : {}),
    },
    env,
  );
}

/** The machines holding live leases now, by host name. */
export function teamMachines(db: SqlReader, now: Date): TeamMachine[] {
  const at = now.toISOString();
  const byHost = new Map<string, Lease[]>();
  for (const l of currentLeases(db)) {
    if (l.expiresAt <= at) continue;
    byHost.set(l.host, [...(byHost.get(l.host) ?? []), l]);
  }
  return [...byHost].map(([host, leases]) => ({ host, leases }));
}

/**
 * A human command on the team store is appended to the shared log now (every process there
 * appends, by compare-and-swap): no inbox waits for a loop to drain it. Its command file
 * still gives it its id, so it is applied once. Stopping or pausing is done where the
 * team's processes run: nobody on the store listens for such a request.
 */
export async function submitToTeamStore(ctx: ControlContext, cmd: InboxCommand, where: string): Promise<SubmitOutcome> {
  if (cmd.command === 'stop' || cmd.command === 'pause' || cmd.command === 'resume')
    throw new CommandFailedError(
      cmd.command,
      `${where} is shared: ${cmd.command} the team's workers and promoter on their machines (ralph worker, ralph start)`,
    );
  const file = submitToInbox(ctx.ralphDir, cmd);
  const name = path.basename(file);
  const mine = (await drainInbox(ctx, { only: [name] })).find((r) => r.file === name);
  if (mine && !mine.ok) throw new CommandFailedError(cmd.command, mine.error ?? 'failed');
  return { via: 'applied', file };
}
