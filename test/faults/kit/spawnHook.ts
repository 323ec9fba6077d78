// Sees every child process the code under test starts, however it starts it: forked by this
// process (node:child_process.spawn, replaced) or through the process relay
// (SpawnRelay.prototype.spawn, replaced). The fault tests time their instants by these
// starts and exits, and a running loop sends its children through the relay.
import { createRequire } from 'node:module';
import type * as Cp from 'node:child_process';
import { SpawnRelay } from '../../../src/shared/spawnRelay';

const cp = createRequire(__filename)('node:child_process') as typeof Cp;

export interface SpawnSeen {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
}

export interface SpawnHooks {
  /** Before the child is started. */
  readonly starting?: (s: SpawnSeen) => void;
  /** The child has exited; called before any listener of the code that started it. */
  readonly exited?: (s: SpawnSeen) => void;
}

/** Installs the hooks; returns what takes them away again. */
export function hookSpawns(hooks: SpawnHooks): () => void {
  const spawn = cp.spawn;
  cp.spawn = ((command: string, args?: readonly string[], options?: Cp.SpawnOptions) => {
    const seen = { command, args: args ?? [], cwd: String(options?.cwd ?? '') };
    hooks.starting?.(seen);
    const child = spawn(command, args ?? [], options ?? {});
    if (hooks.exited !== undefined) child.once('exit', () => hooks.exited?.(seen));
    return child;
  }) as typeof cp.spawn;
  const relaySpawn = SpawnRelay.prototype.spawn;
  SpawnRelay.prototype.spawn = function (this: SpawnRelay, req) {
    const seen = { command: req.file, args: req.args, cwd: req.cwd };
    hooks.starting?.(seen);
    const started = relaySpawn.call(this, req);
    // This continuation is the promise's first, so the listener comes before the caller's.
    void started.then((child) => {
      if (child.pid !== undefined && hooks.exited !== undefined) child.once('exit', () => hooks.exited?.(seen));
    });
    return started;
  };
  return () => {
    cp.spawn = spawn;
    SpawnRelay.prototype.spawn = relaySpawn;
  };
}
