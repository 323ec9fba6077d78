// Entry point of the `ralph` command line. Asks V8 for Liftoff-only wasm compilation
// before sql.js loads (a short-lived process gains nothing from the optimizing tier; it
// about halves sql.js start-up), then parses argv and dispatches to the commands.
import { enableFastWasmStartup } from '../store/sqlDb';
import type * as Run from './run';

// RALPH_NO_LIFTOFF=1 keeps V8's defaults (the CLI benchmark measures both).
if (!process.env['RALPH_NO_LIFTOFF']) enableFastWasmStartup();

// Required after the flag is set, so nothing compiles wasm before it.
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
