// Composition root for a loop run, shared by the CLI (`ralph start [--once]`) and the VS Code
// extension: loads ralph.config.json, opens the store as the writer, builds the backends the
// config names, and returns the Loop plus a close(). Also the one-line renderings of loop
// events and the summary that the CLI prints, and the stop/pause/resume requests another
// process sends through the control plane's inbox.
import { join } from 'node:path';
import { createClaudeBackend } from '../agents/claudeBackend';
import { createCodexBackend } from '../agents/codexBackend';
import { createScriptedBackend } from '../agents/scriptedBackend';
import { allowListedEnv, detectConfinement } from '../agents/sandbox';
import type { AgentBackend, PermissionMode } from '../agents/types';
import { defaultPreflightDeps, PreflightFailedError, runPreflight } from '../preflight/preflight';
import type { PreflightDeps, PreflightReport } from '../preflight/preflight';
import { submitToInbox } from '../control/inbox';
import { domainEvent } from '../domain/events';
import { CONTROL_PROJECTIONS } from '../control/views';
import { requireConfig } from '../project/config';
import type { BackendKind, RalphConfig } from '../project/config';
import { changedSpecs, discoverSpecs, recordEvolveRun, specFingerprint } from '../project/specs';
import { openProjectStore } from '../store/open';
import { resolveStoreLocation } from '../store/storeUrl';
import { leaseProjection } from '../team/leases';
import { LoopClaims } from '../team/loopClaims';
import type { EventStore } from '../store/types';
import { ControlAdapter } from './controlAdapter';
import type { LoopEvent, LoopSummary } from './events';
import { Loop } from './loop';
import { JsonlMetrics } from './metricsFile';
import type { SpecWatch } from './ports';
import { settingsFromConfig } from './settings';
import type { LoopSettings } from './settings';
import { keepingStatusImage } from '../control/statusImage';

export interface LoopHostOptions {
  readonly projectDir: string;
  readonly once?: boolean;
  /** Overrides of the configured settings (e.g. `--workers 2`). */
  readonly settings?: Partial<LoopSettings>;
  /** Backends to use instead of the configured ones (tests, the extension's in-process LM). */
  readonly backends?: Partial<Record<'primary' | 'worker' | 'judge', AgentBackend>>;
  readonly agentEnv?: Readonly<Record<string, string>>;
  /** How the preflight probes the machine (tests); default the real machine. */
  readonly preflight?: Partial<PreflightDeps>;
}

export interface LoopHost {
  readonly loop: Loop;
  readonly store: EventStore;
  readonly control: ControlAdapter;
  readonly config: RalphConfig;
  readonly settings: LoopSettings;
  /** What the preflight found (warnings included); null when every backend was given by the caller. */
  readonly preflight: PreflightReport | null;
  /** Stops the loop if it runs, then checkpoints and closes the store (releases the lock). */
  close(): Promise<void>;
}

export class UnsupportedBackendError extends Error {
  override readonly name = 'UnsupportedBackendError';
  constructor(
    readonly role: string,
    readonly kind: string,
  ) {
    super(
      `backend '${kind}' for the ${role} cannot run outside VS Code; choose claude, codex or scripted in ralph.config.json backends.${role}`,
    );
  }
}

/**
 * The backend a config names for a role, confined as this machine allows (the preflight has
 * refused an unconfined one unless the user opted in). Agents see only the allow-listed part
 * of the user's environment plus what the config's `env` adds. `vscode-lm` exists only
 * inside the extension.
 */
export function backendFromConfig(config: RalphConfig, role: 'primary' | 'worker' | 'judge', projectDir: string): AgentBackend {
  const kind: BackendKind = config.backends[role];
  const b = config.backends;
  switch (kind) {
    case 'claude':
      return createClaudeBackend({
        command: b.claude.binary,
        permissionMode: b.claude.permission_mode as PermissionMode,
        extraArgs: b.claude.extra_args,
        baseEnv: { ...allowListedEnv('claude', process.env), ...b.claude.env },
        confinement: detectConfinement('claude'),
      });
    case 'codex':
      return createCodexBackend({
        command: b.codex.binary,
        sandbox: b.codex.sandbox,
        extraArgs: b.codex.extra_args,
        baseEnv: { ...allowListedEnv('codex', process.env), ...b.codex.env },
        confinement: detectConfinement('codex'),
      });
    case 'scripted': {
      const scenario = b.scripted.scenario;
      if (scenario === undefined)
        throw new Error('ralph.config.json backends.scripted.scenario: the scripted backend needs a scenario file');
      return createScriptedBackend({
        scenario: join(projectDir, scenario),
        ...(b.scripted.binary ? { scriptPath: b.scripted.binary } : {}),
        confinement: detectConfinement('scripted'),
      });
    }
    default:
      throw new UnsupportedBackendError(role, kind);
  }
}

/**
 * When the loop starts running: how each role's agents are confined, as a live event (the
 * status bar, the monitor) and a store event (`ralph status`, observers, later windows).
 */
function announceConfinement(
  loop: Loop,
  control: ControlAdapter,
  backends: Record<'primary' | 'worker' | 'judge', AgentBackend>,
  optedIn: boolean,
): void {
  const roles = (['primary', 'worker', 'judge'] as const).map((role) => {
    const c = backends[role].confinement;
    return {
      role,
      backend: backends[role].id,
      kind: c?.kind ?? 'in-process',
      summary: c?.summary ?? 'runs inside the host; no process of its own',
    };
  });
  const unconfined = roles.some((r) => r.kind === 'none');
  const sub = loop.events.on((e) => {
    if (e.type !== 'loop.state' || e.state !== 'running') return;
    sub.dispose();
    // The notification comes from the store's append (storeFeed.ts), for every window alike.
    void control
      .record([domainEvent('agents.confinement', 'agents', 'harness', { roles, unconfined, opted_in: optedIn })])
      .catch(() => undefined);
  });
}

/** Spec discovery as the loop needs it: changed specs, and marking them evolved. */
export function specWatch(projectDir: string, ralphDir: string): SpecWatch {
  return {
    changed: async () => (await changedSpecs(projectDir, ralphDir)).map((s) => s.path),
    markEvolved: async (files) => {
      const specs = await discoverSpecs(projectDir);
      await recordEvolveRun(projectDir, { fingerprint: specFingerprint(specs), specsRead: [...files] }, ralphDir);
    },
  };
}

/** A loop's lease on a shared store: long enough for a busy host's heartbeat, short enough to free a dead run's tasks soon. */
const LOOP_LEASE_TTL_MS = 60_000;

/** Builds everything a loop run needs; the caller runs `host.loop` and closes the host. */
export async function openLoopHost(o: LoopHostOptions): Promise<LoopHost> {
  const config = requireConfig(o.projectDir);
  const settings: LoopSettings = { ...settingsFromConfig(config), ...o.settings };
  // The configured backends are checked before anything starts (binary, version, login,
  // confinement); an error refuses the start with the report, for the host to show.
  const configured = o.backends?.primary === undefined || o.backends.worker === undefined || o.backends.judge === undefined;
  // A vscode-lm backend handed in means the extension host runs this (it has that backend).
  const inVsCode = (['primary', 'worker', 'judge'] as const).some(
    (r) => config.backends[r] === 'vscode-lm' && o.backends?.[r] !== undefined,
  );
  const preflight = configured
    ? runPreflight(config, o.projectDir, defaultPreflightDeps({ ...(inVsCode ? { host: 'vscode' as const } : {}), ...o.preflight }))
    : null;
  if (preflight !== null && !preflight.ok) throw new PreflightFailedError(preflight);
  const ralphDir = join(o.projectDir, '.ralph');
  const backends = {
    primary: o.backends?.primary ?? backendFromConfig(config, 'primary', o.projectDir),
    worker: o.backends?.worker ?? backendFromConfig(config, 'worker', o.projectDir),
    judge: o.backends?.judge ?? backendFromConfig(config, 'judge', o.projectDir),
  };
  // drainsInbox: commands started beside this loop send their work to its inbox instead of
  // waiting for the lock (the loop reads it as a file lands, and every second). A short-lived command that
  // holds the lock right now is waited for; another loop is not.
  // On a shared (PostgreSQL) store every claim is a lease, as team workers' are.
  const shared = resolveStoreLocation(o.projectDir).kind === 'postgres';
  const store = await openProjectStore({
    ralphDir,
    mode: 'writer',
    projections: shared ? [...CONTROL_PROJECTIONS, leaseProjection] : CONTROL_PROJECTIONS,
    drainsInbox: true,
    lockWaitMs: 10_000,
    ...keepingStatusImage(ralphDir),
  });
  try {
    const control = new ControlAdapter({
      store,
      projectDir: o.projectDir,
      ralphDir,
      riskPatterns: settings.riskPatterns,
      ...(shared ? { leases: (ctx) => new LoopClaims(ctx, { ttlMs: LOOP_LEASE_TTL_MS }) } : {}),
    });
    const loop = new Loop({
      projectDir: o.projectDir,
      ralphDir,
      settings,
      control,
      backends,
      metrics: new JsonlMetrics(join(ralphDir, 'logs')),
      specs: specWatch(o.projectDir, ralphDir),
      ...(o.once !== undefined ? { once: o.once } : {}),
      ...(o.agentEnv ? { agentEnv: o.agentEnv } : {}),
    });
    announceConfinement(loop, control, backends, settings.agentsUnconfined);
    return {
      loop,
      store,
      control,
      config,
      settings,
      preflight,
      close: async () => {
        if (loop.state !== 'idle' && loop.state !== 'stopped') await loop.stop('host closing').catch(() => undefined);
        await control.dispose();
        await store.close();
      },
    };
  } catch (e) {
    await store.close();
    throw e;
  }
}

/** `ralph stop|pause|resume` beside a running loop: a command file in the inbox. */
export function requestLoopCommand(projectDir: string, command: 'stop' | 'pause' | 'resume', actor = 'cli', reason?: string): string {
  return submitToInbox(join(projectDir, '.ralph'), { command, actor, ...(reason !== undefined ? { reason } : {}) });
}

const short = (s: string, n = 120): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One line per event worth printing (gate progress and agent starts are left to verbose hosts). */
export function formatLoopEvent(e: LoopEvent): string | null {
  switch (e.type) {
    case 'loop.state':
      return `loop ${e.state}${e.reason ? `: ${e.reason}` : ''}`;
    case 'phase.changed':
      return `${e.agent} ${e.from} → ${e.to}${e.taskId ? ` [${e.taskId}]` : ''} (${e.reason})`;
    case 'agent.finished':
      return `${e.agent} ${e.phase}${e.taskId ? ` [${e.taskId}]` : ''}: ${e.status}, ${e.turns} turns, $${e.costUsd.toFixed(4)}, ${(e.durationMs / 1000).toFixed(1)} s`;
    case 'gate.finished':
      return e.status === 'skipped'
        ? null
        : `${e.agent} gate ${e.gate}${e.taskId ? ` [${e.taskId}]` : ''}: ${e.status} (${(e.durationMs / 1000).toFixed(1)} s)`;
    case 'patch.queued':
      return `patch ${e.patchId} queued for ${e.taskId}: tier ${e.tier}, ${e.files.length} file(s)`;
    case 'patch.promoted':
      return `PROMOTED ${e.patchId} → ${e.taskId} done (commit ${e.commit.slice(0, 8)})`;
    case 'patch.deferred':
      return `${e.taskId} deferred to the judge: ${e.reason}`;
    case 'patch.waiting':
      return `${e.taskId} waiting: ${short(e.reason, 200)}`;
    case 'patch.discarded':
      return `patch ${e.patchId} of ${e.taskId} discarded: ${short(e.reason)}`;
    case 'task.released':
      return `${e.taskId} released: ${short(e.reason)}`;
    case 'task.blocked':
      return `${e.taskId} BLOCKED: ${short(e.reason)}`;
    case 'task.decomposed':
      return `${e.taskId} decomposed into ${e.accepted} sub-task(s)`;
    case 'verdict':
      return `${e.by} ${e.verdict}s ${e.taskId}: ${short(e.rationale)}`;
    case 'budget':
      return `budget: ${e.message}`;
    case 'incident':
      return `INCIDENT ${e.incidentId} (${e.agent} ${e.phase}${e.taskId ? ` [${e.taskId}]` : ''}): changed ${short(e.summary, 300)}${e.restore ? ` — ${e.restore}` : ''}`;
    case 'log':
      return e.level === 'info' ? null : `${e.level}: ${e.agent}: ${e.message}`;
    case 'summary':
      return formatSummary(e.summary);
    default:
      return null;
  }
}

export function formatSummary(s: LoopSummary): string {
  const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const pct = (ms: number): string => (s.wallMs > 0 ? `${Math.round((100 * ms) / s.wallMs)} %` : '-');
  // The harness alone: wall time with no agent and no gate running (busy is their union).
  const alone = s.wallMs > 0 ? Math.max(0, s.wallMs - s.busyMs) : 0;
  const agents = Object.entries(s.agentBusyMs)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, ms]) => `${name} ${sec(ms)} (${pct(ms)})`);
  return [
    `=== Ralph loop summary ===`,
    `Stopped: ${s.stopReason}`,
    `Promoted: ${s.promoted} | Deferred: ${s.deferred} | Blocked: ${s.blocked} | Released: ${s.released}`,
    `Iterations: ${s.iterations} | Invocations: ${s.invocations} | Cost: $${s.costUsd.toFixed(4)}`,
    `Wall: ${sec(s.wallMs)} | agents ${sec(s.modelMs)} and gates ${sec(s.gateMs)} summed over agents | some agent busy ${sec(s.busyMs)} | harness alone ${sec(alone)} (${pct(alone)})`,
    ...(agents.length > 0 ? [`Busy: ${agents.join(' | ')}`] : []),
  ].join('\n');
}
