// A mocha suite whose runChild calls go through a process relay of its own (started before
// the suite, stopped after it), so the runner's tests hold for both ways of starting a child.
import { SpawnRelay, setSpawnRelay } from '../../src/shared/spawnRelay';
import { waitUntil } from './wait';

/** Starts a relay and waits until it is ready. */
export async function startedRelay(): Promise<SpawnRelay> {
  const relay = new SpawnRelay();
  relay.start();
  await waitUntil('the process relay is ready', () => relay.ready, 10000);
  return relay;
}

/** Within the calling describe: runChild uses a fresh relay; the process's own comes back after. */
export function useRelayInSuite(): void {
  let replaced: SpawnRelay | undefined;
  let relay: SpawnRelay | undefined;
  before(async function () {
    this.timeout(15000);
    relay = await startedRelay();
    replaced = setSpawnRelay(relay);
  });
  after(() => {
    setSpawnRelay(replaced);
    relay?.stop();
  });
}
