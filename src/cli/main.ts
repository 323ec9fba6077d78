// Entry point of the `ralph` command line. Parses argv and dispatches to the commands.
import { runCli } from './run';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`ralph: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
