// kill -9 of the writer between an inbox command's events and the move of its file, many
// times (before the fix 8 of 12 kills duplicated the command), and at seeded random
// instants while it drains: every command must be applied exactly once.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { submitToInbox, type InboxCommand } from '../../../src/control/inbox';
import type { StoredEvent } from '../../../src/store/types';
import { count } from '../kit/tally';
import { initialisedProject, seeded, storeEvents, type Seeded } from './storeKit';

const CHILD = path.join(__dirname, 'drainChild.ts');

interface Child {
  readonly proc: ChildProcess;
  readonly lines: string[];
  waitFor(pred: (l: string) => boolean): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function drainChild(args: readonly string[]): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  let partial = '';
  let err = '';
  proc.stdout?.setEncoding('utf8');
  proc.stdout?.on('data', (c: string) => {
    const parts = (partial + c).split('\n');
    partial = parts.pop() ?? '';
    for (const l of parts) {
      lines.push(l);
      for (const w of [...waiters]) {
        if (!w.pred(l)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(l);
      }
    }
  });
  proc.stderr?.on('data', (c: Buffer) => void (err += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    proc,
    lines,
    exited,
    waitFor(pred) {
      const hit = lines.find(pred);
      if (hit !== undefined) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        waiters.push({ pred, resolve });
        void exited.then(() => {
          const late = lines.find(pred);
          if (late !== undefined) resolve(late);
          else reject(new Error(`the child exited first; stdout:\n${lines.join('\n')}\nstderr:\n${err}`));
        });
      });
    },
  };
}

/** A mix of commands, each with an effect that can be counted: one note or one transition per command. */
function commands(n: number, r: Seeded, tag: string): { cmd: InboxCommand; key: string }[] {
  return Array.from({ length: n }, (_, i) => {
    const key = `${tag}${i}`;
    return r.next() < 0.5
      ? {
          key,
          cmd: { command: 'emit-event', entity_type: 'note', entity_id: key, event_type: 'note.added', actor: 'faults' } as InboxCommand,
        }
      : {
          key,
          cmd: {
            command: 'transition-task',
            task_id: `T-${r.int(5)}`,
            status: r.pick(['blocked', 'dropped']),
            actor: 'faults',
            payload: { op: key },
          } as InboxCommand,
        };
  });
}

/** How often each command's effect is in the store. */
function effects(events: readonly StoredEvent[], keys: readonly string[]): Map<string, number> {
  const seen = new Map(keys.map((k) => [k, 0]));
  for (const e of events) {
    const key = e.event_type === 'note.added' ? e.entity_id : e.entity_type === 'task' ? e.payload['op'] : undefined;
    if (typeof key === 'string' && seen.has(key)) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return seen;
}

function submitAll(projectDir: string, list: readonly { cmd: InboxCommand }[]): string[] {
  const start = Date.parse('2026-12-01T00:00:00.000Z');
  // distinct, ordered names (submission time in the name), whatever the clock does
  return list.map(({ cmd }, i) => path.basename(submitToInbox(path.join(projectDir, '.ralph'), cmd, new Date(start + i))));
}

function assertExactlyOnce(events: readonly StoredEvent[], keys: readonly string[], files: readonly string[]): void {
  const e = effects(events, keys);
  const twice = [...e.values()].filter((n) => n > 1).length;
  count('appliedTwice', twice);
  assert.deepEqual(
    [...e.entries()].filter(([, n]) => n !== 1),
    [],
    'every command applied exactly once',
  );
  const markers = events.filter((x) => x.event_type === 'command.applied');
  assert.equal(markers.length, files.length, 'one command.applied marker per command');
  assert.equal(new Set(markers.map((m) => m.entity_id)).size, files.length);
}

describe('faults: kill -9 of the writer while it drains the inbox', function () {
  this.timeout(900_000);

  it('killed between a command’s events and its file move, at every command of a batch: none applied twice', async () => {
    const r = seeded('inbox kill in the window');
    const dir = await initialisedProject();
    const list = commands(12, r, 'w');
    const files = submitAll(dir, list);
    let kills = 0;
    for (const file of files) {
      const child = drainChild(['pause', dir, file]);
      await child.waitFor((l) => l === `applied ${file}`);
      child.proc.kill('SIGKILL');
      const { signal } = await child.exited;
      assert.equal(signal, 'SIGKILL');
      kills++;
      assert.ok(fs.existsSync(path.join(dir, '.ralph', 'inbox', file)), 'killed before the move');
    }
    count('faultsInjected', kills);
    const last = drainChild(['run', dir]);
    await last.waitFor((l) => l === 'done');
    await last.exited;
    assert.deepEqual(
      fs.readdirSync(path.join(dir, '.ralph', 'inbox')).filter((f) => f.endsWith('.json')),
      [],
      'every file moved in the end',
    );
    assertExactlyOnce(
      await storeEvents(dir),
      list.map((x) => x.key),
      files,
    );
    process.stdout.write(`      ${kills} kills in the window, 0 commands applied twice\n`);
  });

  it('killed at random instants while draining 40 commands: none applied twice, none lost', async () => {
    const r = seeded('inbox kill at random instants');
    const dir = await initialisedProject();
    const list = commands(40, r, 'r');
    const files = submitAll(dir, list);
    let kills = 0;
    const inbox = (): number => fs.readdirSync(path.join(dir, '.ralph', 'inbox')).filter((f) => f.endsWith('.json')).length;
    while (inbox() > 0 && kills < 30) {
      const child = drainChild(['run', dir]);
      const after = 1 + r.int(4);
      // The kill lands somewhere after the child announced its n-th applied command: in its
      // move, in the next command's transaction or journal write, or between them.
      await Promise.race([
        child.waitFor((l) => child.lines.filter((x) => x.startsWith('applied ')).length >= after && l.startsWith('applied ')),
        child.exited,
      ]);
      if (child.proc.exitCode === null && child.proc.signalCode === null) {
        child.proc.kill('SIGKILL');
        kills++;
      }
      await child.exited;
    }
    count('faultsInjected', kills);
    const last = drainChild(['run', dir]);
    await last.waitFor((l) => l === 'done');
    await last.exited;
    assert.equal(inbox(), 0);
    assertExactlyOnce(
      await storeEvents(dir),
      list.map((x) => x.key),
      files,
    );
    process.stdout.write(`      ${kills} kills at random instants, 0 commands applied twice\n`);
  });
});
