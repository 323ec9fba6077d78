// What the team tests on a real PostgreSQL store share: team child processes (teamChild.ts,
// one per "machine") that report readiness on their first stdout line, killing them, and
// the backlog every scenario seeds.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { domainEvent, toNewEvent } from '../../src/domain/events';
import type { NewEvent } from '../../src/store/types';

const CHILD = path.join(__dirname, '..', 'int', 'team', 'teamChild.ts');

export interface TeamChild {
  proc: ChildProcess;
  /** The child's first stdout line; rejects with its stderr if it exits first. */
  line: Promise<string>;
}

export function spawnTeamChild(args: string[]): TeamChild {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const line = new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    proc.on('exit', (code) => reject(new Error(`child exited ${code}: ${err}`)));
  });
  return { proc, line };
}

/** SIGKILLs the child (as a machine that dies) and resolves once it has exited. */
export function killed(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

/** `task.created` events for a plain backlog of S-sized spec tasks, one per id. */
export function backlogEvents(ids: readonly string[]): NewEvent[] {
  return ids.map((id) =>
    toNewEvent(
      domainEvent('task.created', id, 'test', {
        title: `task ${id}`,
        source: 'ES:1',
        effort: 'S',
        deps: '-',
        wave: 0,
        provenance: 'spec',
      }),
    ),
  );
}
