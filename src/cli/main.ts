// Entry point of the `ralph` command line. Sets V8 flags before sql.js's wasm is compiled
// (Liftoff only: no optimizing tier for a short-lived process, about half the start-up),
// then parses argv and dispatches to the commands.
import * as v8 from 'node:v8';
import type * as Run from './run';

v8.setFlagsFromString('--liftoff-only');

// Required after the flag is set so the wasm compile sees it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runCli } = require('./run') as typeof Run;

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`ralph: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
