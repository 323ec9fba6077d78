#!/usr/bin/env -S RALPH_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS} NODE_EXTRA_CA_CERTS=${RALPH_NO_EXTRA_CA_CERTS} node
// Entry point of the `ralph` command line, the only module every call loads. The shebang
// starts Node without NODE_EXTRA_CA_CERTS, whose certificates Node 20 would parse before
// anything runs, and keeps its value for the CLI to put back (shared/extraCaCerts.ts);
// RALPH_NO_EXTRA_CA_CERTS is never set, so it empties the variable in a way npm's Windows
// shims also parse. It keeps start-up to what the command needs: V8 flags first
// (Liftoff-only wasm: a short-lived process gains nothing from the optimizing tier, and it
// about halves sql.js start-up), then, in the bundle, the code cache for the chunks; the dispatcher's tables are plain
// data and each command loads its own part of the engine (lazy.ts).
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { defaultCacheDir, installCodeCache } from './codeCache';
import type * as RunModule from './run';
import { restoreExtraCaCerts } from '../shared/extraCaCerts';

// Before anything can start a process: agents, gates and git inherit the user's environment.
restoreExtraCaCerts();

// RALPH_NO_LIFTOFF=1 keeps V8's defaults (the CLI benchmark measures both). Set before
// anything compiles wasm (nothing has: the store loads with the first command that opens it).
const liftoff = !process.env['RALPH_NO_LIFTOFF'];
if (liftoff) v8.setFlagsFromString('--liftoff-only');

// RALPH_NO_CODE_CACHE=1 compiles every chunk from source; RALPH_CODE_CACHE_DIR moves the cache.
if (typeof RALPH_BUNDLE !== 'undefined' && !process.env['RALPH_NO_CODE_CACHE']) {
  installCodeCache({
    root: path.dirname(__filename),
    cacheDir: process.env['RALPH_CODE_CACHE_DIR'] || defaultCacheDir(),
    salt: liftoff ? 'liftoff-only' : '',
  });
}

const loadRun = (): Promise<typeof RunModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./run.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./run') as typeof RunModule);

loadRun()
  .then(({ runCli }) => runCli(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`ralph: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
