// Opens the control plane for a project: the event store in <project>/.ralph with the
// control projections (plus any a host adds), the project's risk patterns, a git port.
import * as path from 'node:path';
import { openProjectStore } from '../store/open';
import type { OpenStoreOptions } from '../store/sqlJsStore';
import type { Projection, StoreMode } from '../store/types';
import { controlContext, type ControlContext, type GitPort } from './context';
import { loadRiskPatterns } from './riskConfig';
import type { RiskPatterns } from '../domain/risk';
import { CONTROL_PROJECTIONS } from './views';

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
  });
  const ctx = controlContext(store, {
    ralphDir,
    projectDir: opts.projectDir,
    ...(opts.git ? { git: opts.git } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  // Read on first use: a broken ralph.config.json fails the risk commands (ConfigError
  // naming the file), not `status`.
  let patterns: RiskPatterns | undefined;
  Object.defineProperty(ctx, 'riskPatterns', { get: () => (patterns ??= loadRiskPatterns(opts.projectDir)), enumerable: true });
  return ctx;
}
