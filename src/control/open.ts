// Opens the control plane for a project: the event store in <project>/.ralph with the
// control projections (plus any a host adds), the project's risk patterns, a git port.
// The risk patterns are the loaded config's, passed in: control never reads ralph.config.json.
import * as path from 'node:path';
import { openProjectStore } from '../store/open';
import type { OpenStoreOptions } from '../store/sqlJsStore';
import type { Projection, StoreMode } from '../store/types';
import { controlContext, type ControlContext, type GitPort } from './context';
import type { RiskPatterns } from '../domain/risk';
import { ControlError } from '../domain/errors';
import { CONTROL_PROJECTIONS } from './views';
import { keepingStatusImage } from './statusImage';

export interface OpenControlOptions {
  readonly projectDir: string;
  readonly mode: StoreMode;
  readonly git?: GitPort;
  /** Further projections the host keeps in the same database (monitor, metrics…). */
  readonly extraProjections?: readonly Projection[];
  readonly now?: () => Date;
  /** Writer: wait this long for another short-lived command's lock (see OpenStoreOptions.lockWaitMs). */
  readonly lockWaitMs?: number;
  readonly onLockWait?: OpenStoreOptions['onLockWait'];
  /** The run the events are stamped with (default: this process's, OpenStoreOptions.runId). */
  readonly runId?: string;
  /**
   * The loaded config's risk_patterns, or how to get them on first use (a broken
   * ralph.config.json then fails the command that classifies risk, not `status`). Without
   * them, classifying risk fails: never the defaults in place of the user's patterns.
   */
  readonly riskPatterns?: RiskPatterns | (() => RiskPatterns);
}

/** Why a context opened without risk patterns cannot classify risk. */
export class RiskPatternsNotLoadedError extends ControlError {
  override readonly name = 'RiskPatternsNotLoadedError';
  constructor(projectDir: string) {
    super(`the risk patterns of ${projectDir} were not loaded for this command (openControl without riskPatterns)`);
  }
}

/** Opens the store and returns the context every control command takes; close ctx.store when done. */
export async function openControl(opts: OpenControlOptions): Promise<ControlContext> {
  const ralphDir = path.join(opts.projectDir, '.ralph');
  const store = await openProjectStore({
    ralphDir,
    mode: opts.mode,
    projections: [...CONTROL_PROJECTIONS, ...(opts.extraProjections ?? [])],
    ...(opts.lockWaitMs !== undefined ? { lockWaitMs: opts.lockWaitMs } : {}),
    ...(opts.onLockWait ? { onLockWait: opts.onLockWait } : {}),
    ...(opts.runId !== undefined ? { runId: opts.runId } : {}),
    // The writer leaves the image `ralph status` answers from until the store changes again.
    ...(opts.mode === 'writer' ? keepingStatusImage(ralphDir, opts.now) : {}),
  });
  const ctx = controlContext(store, {
    ralphDir,
    projectDir: opts.projectDir,
    ...(opts.git ? { git: opts.git } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const given = opts.riskPatterns;
  let patterns: RiskPatterns | undefined = typeof given === 'function' ? undefined : given;
  const load = (): RiskPatterns => {
    if (typeof given !== 'function') throw new RiskPatternsNotLoadedError(opts.projectDir);
    return given();
  };
  Object.defineProperty(ctx, 'riskPatterns', { get: () => (patterns ??= load()), enumerable: true });
  return ctx;
}
