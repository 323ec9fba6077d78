// Composition root of a team-mode process (`ralph worker`, `ralph start` on a PostgreSQL
// store): the project's config, the shared store (leases and team patches among its views),
// the agent backends built exactly as the loop builds them (src/loop/host.ts: confined as
// this machine allows, refused by the preflight when they cannot start), and one Harness
// for invocations, gates and promotions.
import { join } from 'node:path';
import type { AgentBackend } from '../agents/types';
import { CONTROL_PROJECTIONS } from '../control/views';
import { currentBranch } from '../git/repo';
import { ControlAdapter } from '../loop/controlAdapter';
import { LoopEmitter } from '../loop/events';
import { Harness } from '../loop/harness';
import { backendFromConfig } from '../loop/host';
import { JsonlMetrics } from '../loop/metricsFile';
import { settingsFromConfig, type LoopSettings } from '../loop/settings';
import { systemClock } from '../loop/sleep';
import { defaultPreflightDeps, PreflightFailedError, runPreflight, type PreflightDeps, type PreflightReport } from '../preflight/preflight';
import { requireConfig, type RalphConfig } from '../project/config';
import { openPgStore } from '../store/postgres/pgStore';
import { redactStoreUrl, resolveStoreLocation, STORE_URL_ENV } from '../store/storeUrl';
import type { EventStore } from '../store/types';
import { leaseProjection } from './leases';
import { resolveMachine } from './machine';
import { teamPatchProjection } from './teamPatches';

export const TEAM_PROJECTIONS = [...CONTROL_PROJECTIONS, leaseProjection, teamPatchProjection];

/** The project has no PostgreSQL store: team mode needs one. */
export class NoTeamStoreError extends Error {
  override readonly name = 'NoTeamStoreError';
  constructor(what: string) {
    super(
      `${what} needs the team's PostgreSQL store: pass --store postgres://user@host:5432/db, set ${STORE_URL_ENV}, or "store" in ralph.config.json`,
    );
  }
}

/** The store URL a team process uses: `--store`, else RALPH_STORE_URL, else the config's. */
export function teamStoreUrl(projectDir: string, what: string, flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  const where = resolveStoreLocation(projectDir, flag !== undefined ? { ...env, [STORE_URL_ENV]: flag } : env);
  if (where.kind !== 'postgres') throw new NoTeamStoreError(what);
  return where.url;
}

export interface TeamHostOptions {
  readonly projectDir: string;
  readonly url: string;
  /** Backends instead of the configured ones (tests). */
  readonly backends?: Partial<Record<'primary' | 'worker' | 'judge', AgentBackend>>;
  readonly preflight?: Partial<PreflightDeps>;
  /** Skip the preflight (a promoter that starts no agent of its own). */
  readonly noAgents?: boolean;
  readonly publish?: (commit: string) => Promise<void>;
  readonly signal?: AbortSignal;
  /** Where RALPH_MACHINE is read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

export interface TeamHost {
  readonly projectDir: string;
  readonly ralphDir: string;
  readonly config: RalphConfig;
  readonly settings: LoopSettings;
  readonly store: EventStore;
  readonly control: ControlAdapter;
  readonly harness: Harness;
  readonly emitter: LoopEmitter;
  readonly branch: string;
  /** This machine's name in the team (RALPH_MACHINE, else the hostname): qualifies agent names. */
  readonly host: string;
  /** The store URL without its password, for messages. */
  readonly where: string;
  readonly preflight: PreflightReport | null;
  close(): Promise<void>;
}

export async function openTeamHost(o: TeamHostOptions): Promise<TeamHost> {
  // First: a bad RALPH_MACHINE fails before anything connects or starts.
  const machine = resolveMachine(o.env);
  const config = requireConfig(o.projectDir);
  const settings = settingsFromConfig(config);
  const branch = settings.targetBranch ?? (await currentBranch(o.projectDir));
  if (branch === null) throw new Error(`${o.projectDir}: HEAD is detached; set target_branch in ralph.config.json`);
  const preflight = o.noAgents === true ? null : runPreflight(config, o.projectDir, defaultPreflightDeps(o.preflight));
  if (preflight !== null && !preflight.ok) throw new PreflightFailedError(preflight);
  const backends = {
    primary: o.backends?.primary ?? backendFromConfig(config, 'primary', o.projectDir),
    worker: o.backends?.worker ?? backendFromConfig(config, 'worker', o.projectDir),
    judge: o.backends?.judge ?? backendFromConfig(config, 'judge', o.projectDir),
  };
  const ralphDir = join(o.projectDir, '.ralph');
  const store = await openPgStore({ url: o.url, mode: 'writer', projections: TEAM_PROJECTIONS });
  const control = new ControlAdapter({ store, projectDir: o.projectDir, ralphDir, riskPatterns: settings.riskPatterns });
  const emitter = new LoopEmitter();
  const harness = new Harness({
    projectDir: o.projectDir,
    ralphDir,
    branch,
    settings,
    control,
    backends,
    metrics: new JsonlMetrics(join(ralphDir, 'logs')),
    emitter,
    clock: systemClock,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.publish ? { publish: o.publish } : {}),
  });
  await harness.invocation.loadSpend();
  return {
    projectDir: o.projectDir,
    ralphDir,
    config,
    settings,
    store,
    control,
    harness,
    emitter,
    branch,
    host: machine,
    where: redactStoreUrl(o.url),
    preflight,
    close: () => store.close(),
  };
}
