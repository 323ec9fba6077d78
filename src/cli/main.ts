#!/usr/bin/env -S RALPH_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS} NODE_EXTRA_CA_CERTS=${RALPH_NO_EXTRA_CA_CERTS} node
// Entry point of the `ralph` command line, the only module every call loads. The shebang
// starts Node without NODE_EXTRA_CA_CERTS, whose certificates Node 20 would parse before
// anything runs, and keeps its value for the CLI to put back (shared/extraCaCerts.ts);
// RALPH_NO_EXTRA_CA_CERTS is never set, so it empties the variable in a way npm's Windows
// shims also parse. A store command goes to this build's warm process when one listens,
// and starts one when none does (warmCommands.ts); otherwise it keeps start-up to what the
// command needs: V8 flags first (Liftoff-only wasm: a short-lived process gains nothing
// from the optimizing tier, and it about halves sql.js start-up), then, in the bundle, the
// code cache for the chunks; the dispatcher's tables are plain data and each command loads
// its own part of the engine (lazy.ts).
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { defaultCacheDir, fnv1a, installCodeCache } from './codeCache';
import type * as RunModule from './run';
import type * as WarmClientModule from './warmClient';
import type * as WarmServerModule from './warmServer';
import { WARM_SERVE, wantsWarm } from './warmCommands';
import { restoreExtraCaCerts } from '../shared/extraCaCerts';

// Before anything can start a process: agents, gates and git inherit the user's environment.
restoreExtraCaCerts();

const argv = process.argv.slice(2);
const serving = argv[0] === WARM_SERVE;

// RALPH_NO_LIFTOFF=1 keeps V8's defaults (the CLI benchmark measures both). Set before
// anything compiles wasm (nothing has: the store loads with the first command that opens it).
// The warm process lives long enough for the optimizing tier to pay.
const liftoff = !process.env['RALPH_NO_LIFTOFF'] && !serving;

/** Loads the dispatcher with V8's flags and the code cache set up (once per process). */
function loadRun(): Promise<typeof RunModule> {
  if (liftoff) v8.setFlagsFromString('--liftoff-only');
  // RALPH_NO_CODE_CACHE=1 compiles every chunk from source; RALPH_CODE_CACHE_DIR moves the cache.
  if (typeof RALPH_BUNDLE !== 'undefined' && !process.env['RALPH_NO_CODE_CACHE']) {
    installCodeCache({
      root: path.dirname(__filename),
      cacheDir: process.env['RALPH_CODE_CACHE_DIR'] || defaultCacheDir(),
      salt: liftoff ? 'liftoff-only' : '',
    });
  }
  return typeof RALPH_BUNDLE !== 'undefined'
    ? import('./run.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./run') as typeof RunModule);
}

const loadWarmClient = (): Promise<typeof WarmClientModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./warmClient.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./warmClient') as typeof WarmClientModule);

const loadWarmServer = (): Promise<typeof WarmServerModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./warmServer.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./warmServer') as typeof WarmServerModule);

/** Runs the call here, or in the warm process when one serves it (warmCommands.ts). */
async function main(): Promise<number> {
  if (typeof RALPH_BUNDLE !== 'undefined' && wantsWarm(argv)) {
    const code = await (await loadWarmClient()).runWarm(argv, { cliFile: __filename, serve: [__filename, WARM_SERVE], hash: fnv1a });
    if (code !== undefined) return code;
  }
  return (await loadRun()).runCli(argv);
}

/** The warm process: ready before it listens, gone when idle. */
async function serve(): Promise<number> {
  const server = await loadWarmServer();
  server.closeInheritedFiles();
  const run = await loadRun();
  const target = server.warmTarget(__filename, fnv1a);
  if (target === undefined) return 1;
  await run.warmUp();
  await server.serveWarm({ ...target, runCli: run.runCli });
  // Handles a command left open (a timer, a closed store's watcher) must not keep it alive.
  process.exit(0);
}

(serving ? serve() : main()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`ralph: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
