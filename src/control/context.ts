// What every control-plane command runs against: the event store, the project's folders,
// the risk patterns, a clock, and the git port (kept at the edge: the CLI and the loop
// supply it, tests supply a real repository).
import * as path from 'node:path';
import type { EventStore } from '../store/types';
import { archivingStore } from './patchArchive';
import { DEFAULT_RISK_PATTERNS, type RiskPatterns } from '../domain/risk';
import { STATE_FILE } from './stateJson';

/** The few git facts the control plane needs. */
export interface GitPort {
  /** True when `hash` names a commit in the project's repository. */
  commitExists(hash: string): Promise<boolean>;
  /**
   * The target branch when `hash` is not reachable from it (done means a commit on the
   * branch), null when it is. Optional: the loop promotes onto the branch itself.
   */
  notOnTargetBranch?(hash: string): Promise<string | null>;
}

/**
 * The client that relayed a command (an MCP client's name and version from its handshake,
 * VS Code's chat): every event the command appends carries it as `client` and
 * `client_version` in its payload, beside the actor, so the log says who decided through what.
 */
export interface CommandClient {
  readonly name: string;
  readonly version?: string;
}

export interface ControlContext {
  readonly store: EventStore;
  /** The `.ralph` directory. */
  readonly ralphDir: string;
  /** The project root (the parent of `.ralph` by default). */
  readonly projectDir: string;
  readonly git?: GitPort;
  readonly riskPatterns: RiskPatterns;
  readonly now: () => Date;
  /** Stamped into every event appended through this context (see CommandClient). */
  readonly client?: CommandClient;
}

export function controlContext(
  store: EventStore,
  opts: { ralphDir: string; projectDir?: string; git?: GitPort; riskPatterns?: RiskPatterns; now?: () => Date; client?: CommandClient },
): ControlContext {
  const projectDir = opts.projectDir ?? path.dirname(opts.ralphDir);
  return {
    // A command that closes a patch moves its file out of commits/pending/ (patchArchive.ts).
    store: archivingStore(store, { ralphDir: opts.ralphDir, projectDir }),
    ralphDir: opts.ralphDir,
    projectDir,
    ...(opts.git ? { git: opts.git } : {}),
    riskPatterns: opts.riskPatterns ?? DEFAULT_RISK_PATTERNS,
    now: opts.now ?? ((): Date => new Date()),
    ...(opts.client ? { client: opts.client } : {}),
  };
}

/**
 * The same context with `client` set. The risk patterns stay a getter of the original: the
 * CLI reads ralph.config.json on first use, and a command that needs no patterns must not fail
 * on a broken config.
 */
export function withClient(ctx: ControlContext, client: CommandClient | undefined): ControlContext {
  if (client === undefined) return ctx;
  const out = {
    store: ctx.store,
    ralphDir: ctx.ralphDir,
    projectDir: ctx.projectDir,
    ...(ctx.git ? { git: ctx.git } : {}),
    now: ctx.now,
    client,
  };
  return Object.defineProperty(out, 'riskPatterns', { get: () => ctx.riskPatterns, enumerable: true }) as ControlContext;
}

export const CONTROL_ACTOR = 'control_plane';

/** Paths of the files the control plane owns inside `.ralph`. */
export function ralphPaths(ralphDir: string): {
  backlog: string;
  state: string;
  proposals: string;
  processed: string;
  rejected: string;
  inbox: string;
} {
  return {
    backlog: path.join(ralphDir, 'BACKLOG.md'),
    state: path.join(ralphDir, STATE_FILE),
    proposals: path.join(ralphDir, 'proposals'),
    processed: path.join(ralphDir, 'proposals', 'processed'),
    rejected: path.join(ralphDir, 'proposals', 'rejected'),
    inbox: path.join(ralphDir, 'inbox'),
  };
}
