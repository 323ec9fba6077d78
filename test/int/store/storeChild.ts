// A child process for the store's integration tests (run with `node --import tsx`).
// Modes:
//   append-loop <ralphDir> <burst>  append bursts of events forever, printing `ack <id>` per acknowledged event
//   hold <ralphDir>                 open as writer, print `ready`, wait until killed or stdin closes
//   append-exit <ralphDir> <n>      append n events (no checkpoint yet), print their ids, then process.exit(0)
//   append-wait <ralphDir> <n>      append n events, print their ids and `done`, then wait like hold
//   wait-hold <ralphDir>            wait in line for the lock (printing `waiting` once), then like hold
// Any open failure prints `error <name> <message>` and exits with code 3.
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { counterProjection } from '../../unit/store/counterProjection';

const [mode, ralphDir, arg] = process.argv.slice(2);

function say(line: string): void {
  // stdout to a pipe is synchronous on Linux: once written, the parent can read it after a SIGKILL.
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  if (!mode || !ralphDir) throw new Error('usage: storeChild <mode> <ralphDir> [arg]');
  let store: EventStore;
  let waiting = false;
  try {
    store = await openStore({
      ralphDir,
      mode: 'writer',
      projections: [counterProjection()],
      // append-loop checkpoints often, so kills also land inside checkpoints and trims
      checkpointDebounceMs: mode === 'append-loop' ? 25 : 3_600_000,
      ...(mode === 'wait-hold' ? { lockWaitMs: 100_000, onLockWait: () => void (waiting ||= (say('waiting'), true)) } : {}),
    });
  } catch (e) {
    say(`error ${(e as Error).name} ${(e as Error).message}`);
    process.exit(3);
  }
  say(`open ${process.pid} ${store.runId}`);
  const n = Number(arg ?? '1');
  if (mode === 'append-loop') {
    for (let round = 0; ; round++) {
      const acks = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          store.append([{ entity_type: 'task', entity_id: `T${i}`, event_type: 'task.touched', actor: 'kill-test', payload: { round } }]),
        ),
      );
      for (const a of acks) for (const e of a) say(`ack ${e.event_id}`);
    }
  }
  if (mode === 'append-exit' || mode === 'append-wait') {
    for (let i = 0; i < n; i++) {
      const [e] = await store.append([
        { entity_type: 'task', entity_id: `E${i}`, event_type: 'task.touched', actor: 'child', payload: { i } },
      ]);
      if (e) say(`ack ${e.event_id}`);
    }
    if (mode === 'append-exit') process.exit(0); // no close(): the 'exit' handler must checkpoint
    say('done');
  }
  say('ready');
  process.stdin.resume();
  process.stdin.on('end', () => {
    void store.close().then(() => process.exit(0));
  });
}

void main();
