// A loop run (`ralph start --once` in miniature, openLoopHost with the project's config)
// that kills itself with SIGKILL at one chosen instant: the k-th time it reaches a named
// point. Points are hooks on what the run really does, installed around Node's own
// primitives (fs, child_process, the process relay) and the store, so the product code runs
// unchanged:
//
//   append.before / append.after    a store command starts / is acknowledged (durable)
//   journal.write / journal.sync    the journal's bytes are written / about to be fsynced
//   checkpoint.temp                 ralph.db's temp file is being written
//   checkpoint.rename / .renamed    ralph.db is about to be / was just replaced
//   journal.trim                    the journal is about to be replaced by its trimmed tail
//   derived.rename                  STATE.json or BACKLOG.md is about to be replaced
//   patch.capture / patch.captured  a patch file in commits/pending/ is about to be / was written
//   patch.captured.late             the late re-verification's patch file was written, not yet queued
//   patch.archive / patch.archived  a closed patch's file is about to be / was moved out of pending/
//   git.<sub>.start / git.<sub>.done   a git process (commit-tree, update-ref, read-tree, apply,
//                                   checkout-index, worktree) is spawned / has exited (forked
//                                   here or through the process relay: spawnHook.ts)
//   checkout.update                 `git read-tree -m -u` in the user's checkout has exited
//   agent.running / gate.running    an agent's or a gate's process group runs (ledger record written)
//   judge.started / judge.finished  the judge is about to start / has answered
//   inbox.take / inbox.taken        an inbox command file is about to be / was moved
//   event.<type>                    the loop emitted this event (patch.queued, patch.promoted, ...)
//
// Protocol on stdout, one line each: `ack <event_id> <event_type> <entity_id> <commit|->` when
// a command's events are durable, `point <name> <n>` as points are passed, `kill <name> <n>`
// just before the SIGKILL, `event <json>` for loop events, `done <stopReason>` at a clean end.
// Usage: faultChild <projectDir> <point> <k>   (point `none`: run to the end)
import { createRequire } from 'node:module';
import type * as Fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { openLoopHost } from '../../../src/loop/host';
import { ProcessLedger } from '../../../src/shared/processLedger';
import { hookSpawns, type SpawnSeen } from './spawnHook';
import type { EventStore, StoredEvent } from '../../../src/store/types';

const req = createRequire(__filename);
const fs = req('node:fs') as typeof Fs;

const [projectDir, killPoint = 'none', killAtText = '1'] = process.argv.slice(2);
if (projectDir === undefined) throw new Error('usage: faultChild <projectDir> <point> <k>');
const killAt = Number(killAtText);
const counts = new Map<string, number>();
const say = (line: string): void => void fs.writeSync(1, `${line}\n`);

/** Passes a point: counts it, and dies there if it is the chosen instant. */
function point(name: string): void {
  const n = (counts.get(name) ?? 0) + 1;
  counts.set(name, n);
  if (name === killPoint && n === killAt) {
    say(`kill ${name} ${n}`);
    process.kill(process.pid, 'SIGKILL');
  }
}

const isDb = (p: string): boolean => /[/\\]ralph\.db$/.test(p);
const isJournal = (p: string): boolean => /[/\\]ralph\.events\.journal$/.test(p);
const isDerived = (p: string): boolean => /[/\\](STATE\.json|BACKLOG\.md)$/.test(p);
const isPatch = (p: string): boolean => /[/\\]commits[/\\]pending[/\\][^/\\]+\.patch$/.test(p);
const isArchive = (from: string, to: string): boolean => isPatch(from) && /[/\\]commits[/\\](applied|discarded)[/\\][^/\\]+$/.test(to);
const isInbox = (p: string): boolean => /[/\\]\.ralph[/\\]inbox[/\\][^/\\]+$/.test(p);

async function hookFiles(): Promise<void> {
  const paths = new WeakMap<FileHandle, string>();
  const fsp = fs.promises;
  const open = fsp.open.bind(fsp);
  fsp.open = (async (p: Fs.PathLike, ...rest: unknown[]) => {
    const h = await (open as (p: Fs.PathLike, ...r: unknown[]) => Promise<FileHandle>)(p, ...rest);
    paths.set(h, String(p));
    return h;
  }) as typeof fsp.open;
  const rename = fsp.rename.bind(fsp);
  fsp.rename = async (from: Fs.PathLike, to: Fs.PathLike): Promise<void> => {
    const t = String(to);
    const archive = isArchive(String(from), t);
    if (isDb(t)) point('checkpoint.rename');
    else if (isJournal(t)) point('journal.trim');
    else if (isPatch(t)) point('patch.capture');
    else if (isDerived(t)) point('derived.rename');
    else if (archive) point('patch.archive');
    await rename(from, to);
    if (isDb(t)) point('checkpoint.renamed');
    else if (isPatch(t)) {
      point('patch.captured');
      // The late re-verification's capture (its name carries the harness as the agent): the
      // window between writing it and queueing its patch.
      if (/_harness_\d{17}_\d+\.patch$/.test(t)) point('patch.captured.late');
    } else if (archive) point('patch.archived');
  };
  const renameSync = fs.renameSync.bind(fs);
  fs.renameSync = (from: Fs.PathLike, to: Fs.PathLike): void => {
    const f = String(from);
    const t = String(to);
    if (isDerived(t)) point('derived.rename');
    else if (isDb(t)) point('checkpoint.rename');
    else if (isInbox(f)) point('inbox.take');
    renameSync(from, to);
    if (isInbox(f)) point('inbox.taken');
  };
  // The FileHandle prototype, reached through a handle on a file that surely exists.
  {
    const h = await open(process.execPath, 'r');
    const proto = Object.getPrototypeOf(h) as FileHandle;
    await h.close();
    const write = proto.write;
    const datasync = proto.datasync;
    proto.write = function (this: FileHandle, ...args: unknown[]) {
      const p = paths.get(this) ?? '';
      if (isJournal(p)) point('journal.write');
      else if (/[/\\]ralph\.db\.tmp-/.test(p)) point('checkpoint.temp');
      return (write as (...a: unknown[]) => ReturnType<FileHandle['write']>).apply(this, args);
    } as FileHandle['write'];
    proto.datasync = function (this: FileHandle) {
      if (isJournal(paths.get(this) ?? '')) point('journal.sync');
      return datasync.apply(this);
    };
  }
}

const GIT_POINTS = new Set(['commit-tree', 'update-ref', 'read-tree', 'apply', 'checkout-index', 'worktree']);

function hookGit(): void {
  const gitSub = (s: SpawnSeen): string | undefined => (s.command === 'git' ? s.args.find((a) => GIT_POINTS.has(a)) : undefined);
  hookSpawns({
    starting: (s) => {
      const sub = gitSub(s);
      if (sub !== undefined) point(`git.${sub}.start`);
    },
    // The process has exited, Ralph has not heard yet.
    exited: (s) => {
      const sub = gitSub(s);
      if (sub === undefined) return;
      point(`git.${sub}.done`);
      if (sub === 'read-tree' && s.args.includes('-u') && s.cwd === projectDir) point('checkout.update');
    },
  });
}

function hookLedger(): void {
  const started = ProcessLedger.prototype.started;
  ProcessLedger.prototype.started = function (this: ProcessLedger, pid: number, what: string, cwd: string): void {
    started.call(this, pid, what, cwd);
    point(what.startsWith('sh -c ') ? 'gate.running' : 'agent.running');
  };
}

function hookStore(store: EventStore): void {
  const ack = (events: readonly StoredEvent[]): void => {
    for (const e of events) {
      const commit = typeof e.payload['commit_hash'] === 'string' ? e.payload['commit_hash'] : '-';
      say(`ack ${e.event_id} ${e.event_type} ${e.entity_id} ${commit}`);
    }
  };
  const execute = store.execute.bind(store);
  // The options go through: an inbox command's stamp (its command.applied marker) is one.
  store.execute = async (decide, options) => {
    point('append.before');
    const r = await execute(decide, options);
    ack(r.events);
    point('append.after');
    return r;
  };
  const append = store.append.bind(store);
  store.append = async (events, options) => {
    point('append.before');
    const r = await append(events, options);
    ack(r);
    point('append.after');
    return r;
  };
}

async function main(): Promise<void> {
  await hookFiles();
  hookGit();
  hookLedger();
  const host = await openLoopHost({ projectDir: projectDir as string, once: true });
  hookStore(host.store);
  host.loop.events.on((e) => {
    if (e.type === 'gate.progress') return;
    say(`event ${JSON.stringify(e)}`);
    if (e.type === 'agent.started' && e.agent === 'judge') point('judge.started');
    if (e.type === 'agent.finished' && e.agent === 'judge') point('judge.finished');
    if (e.type !== 'log' && e.type !== 'summary') point(`event.${e.type}`);
  });
  const summary = await host.loop.run();
  await host.close();
  say(`done ${summary.stopReason}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
