// Opens a project's event store where the project keeps it: the embedded sql.js store in
// .ralph (the default), or the shared PostgreSQL store its URL names (team mode). The
// PostgreSQL adapter and its driver load only for a project that has a store URL.
/* eslint-disable @typescript-eslint/no-require-imports */
import * as path from 'node:path';
import type * as PgStoreModule from './postgres/pgStore';
import { openStore, type OpenStoreOptions } from './sqlJsStore';
import { resolveStoreLocation } from './storeUrl';
import type { EventStore } from './types';

const loadPgStore = (): Promise<typeof PgStoreModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./postgres/pgStore.js')
    : Promise.resolve().then(() => require('./postgres/pgStore') as typeof PgStoreModule);

/** Opens the project's store (the project is the parent of `ralphDir`). */
export async function openProjectStore(options: OpenStoreOptions, env: NodeJS.ProcessEnv = process.env): Promise<EventStore> {
  const where = resolveStoreLocation(path.dirname(options.ralphDir), env);
  if (where.kind === 'embedded') return openStore(options);
  const { openPgStore } = await loadPgStore();
  return openPgStore({
    url: where.url,
    mode: options.mode,
    projections: options.projections,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.wasmPath !== undefined ? { wasmPath: options.wasmPath } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
  });
}
