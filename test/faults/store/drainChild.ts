// A writer draining the inbox in its own process, for kill -9 tests (run with `node --import tsx`):
//   pause <projectDir> <file>   drain in order; once <file>'s events are durable and before its file
//                               moves, print `applied <file>` and wait to be killed there
//   run <projectDir>            drain everything, printing `applied <file>` for each, then exit 0
import { drainInbox } from '../../../src/control/inbox';
import { openControl } from '../../../src/control/open';

const [mode, projectDir, target] = process.argv.slice(2);

function say(line: string): void {
  // stdout to a pipe is synchronous on Linux: the parent reads it even after a SIGKILL
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  if ((mode !== 'pause' && mode !== 'run') || projectDir === undefined) throw new Error('usage: drainChild pause|run <projectDir> [file]');
  const ctx = await openControl({ projectDir, mode: 'writer', lockWaitMs: 10_000 });
  say(`open ${process.pid}`);
  await drainInbox(ctx, {
    afterApply: async (r) => {
      say(`applied ${r.file}`);
      // until SIGKILL (a ref'd timer: an empty event loop would let the process exit by itself)
      if (mode === 'pause' && r.file === target) await new Promise(() => setInterval(() => undefined, 60_000));
    },
  });
  await ctx.store.close();
  say('done');
}

main().catch((e: unknown) => {
  say(`error ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
