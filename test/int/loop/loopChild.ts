// A loop run in its own process (for the kill -9 test): `ralph start --once` in miniature,
// printing every loop event as one JSON line so the parent can kill it at a chosen moment.
import { openLoopHost } from '../../../src/loop/host';

async function main(): Promise<void> {
  const projectDir = process.argv[2];
  if (projectDir === undefined) throw new Error('usage: loopChild <projectDir>');
  const host = await openLoopHost({ projectDir, once: true });
  host.loop.events.on((e) => {
    if (e.type !== 'gate.progress') process.stdout.write(`${JSON.stringify(e)}\n`);
  });
  await host.loop.run();
  await host.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exitCode = 1;
});
