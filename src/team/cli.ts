// Team mode's command-line verbs: `ralph worker` (claims, works and hands over tasks from the
// shared store) and `ralph start` when the project's store is PostgreSQL (stands for
// election and, once elected, promotes; the others wait to take over). Output goes through
// the given io; exit codes follow the CLI's (0 ok, 1 failed, 2 usage).
import { formatPreflight, PreflightFailedError } from '../preflight/preflight';
import { formatLoopEvent } from '../loop/host';
import { errorText } from '../loop/context';
import { runGit } from '../git/exec';
import { PromoterLock } from './promoterLock';
import { TeamPromoter } from './promoter';
import { publishBranch } from './remoteBranch';
import { openTeamHost, teamStoreUrl, type TeamHost } from './teamHost';
import { TeamWorker } from './worker';

export interface TeamCliIo {
  out(text: string): void;
  err(text: string): void;
}

export class TeamUsageError extends Error {
  override readonly name = 'TeamUsageError';
}

export interface WorkerArgs {
  readonly store?: string;
  readonly count: number;
  readonly remote: string;
  readonly leaseTtlMs: number;
  readonly exitWhenIdle: boolean;
  readonly quiet: boolean;
}

const WORKER_USAGE = 'ralph worker [--store URL] [--count N] [--remote R] [--lease-ttl S] [--exit-when-idle] [--quiet]';

function valueOf(argv: readonly string[], i: number, name: string): [string, number] {
  const a = argv[i] as string;
  if (a.startsWith(`${name}=`)) return [a.slice(name.length + 1), i];
  const v = argv[i + 1];
  if (v === undefined) throw new TeamUsageError(`${name} needs a value`);
  return [v, i + 1];
}

export function parseWorkerArgs(argv: readonly string[]): WorkerArgs {
  let store: string | undefined;
  let count = 1;
  let remote = 'origin';
  let leaseTtlMs = 30_000;
  let exitWhenIdle = false;
  let quiet = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const flag = a.split('=')[0] ?? a;
    if (a === '--exit-when-idle') exitWhenIdle = true;
    else if (a === '--quiet' || a === '-q') quiet = true;
    else if (flag === '--store') [store, i] = valueOf(argv, i, '--store');
    else if (flag === '--remote') [remote, i] = valueOf(argv, i, '--remote');
    else if (flag === '--count' || flag === '--lease-ttl') {
      let v: string;
      [v, i] = valueOf(argv, i, flag);
      const n = Number(v);
      if (flag === '--count') {
        if (!Number.isInteger(n) || n < 1 || n > 16) throw new TeamUsageError(`--count needs an integer 1..16, got ${v}`);
        count = n;
      } else {
        if (!Number.isFinite(n) || n < 1 || n > 3600) throw new TeamUsageError(`--lease-ttl needs seconds 1..3600, got ${v}`);
        leaseTtlMs = Math.round(n * 1000);
      }
    } else throw new TeamUsageError(`ralph worker: unknown argument '${a}' (usage: ${WORKER_USAGE})`);
  }
  if (remote === '' || remote.startsWith('-')) throw new TeamUsageError(`--remote: '${remote}' is not a git remote`);
  return { ...(store !== undefined ? { store } : {}), count, remote, leaseTtlMs, exitWhenIdle, quiet };
}

/** SIGINT/SIGTERM abort the returned signal; a second one exits at once. */
function stopOnSignals(io: TeamCliIo, what: string): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  let n = 0;
  const on = (sig: NodeJS.Signals): void => {
    n++;
    if (n === 1) {
      io.err(`\n${sig}: stopping the ${what} (agents are being terminated)…\n`);
      ac.abort(new Error(`${sig} received`));
    } else process.exit(130);
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

function printEvents(host: TeamHost, io: TeamCliIo, quiet: boolean): { dispose(): void } {
  return host.emitter.on((e) => {
    if (quiet && e.type !== 'task.blocked' && e.type !== 'budget' && e.type !== 'incident') return;
    const line = formatLoopEvent(e);
    if (line !== null) io.out(`${line}\n`);
  });
}

/** `ralph worker`: N workers in this clone on the team's store, until stopped (or idle). */
export async function workerCommand(projectDir: string, argv: readonly string[], io: TeamCliIo): Promise<number> {
  const args = parseWorkerArgs(argv);
  const url = teamStoreUrl(projectDir, 'ralph worker', args.store);
  const stop = stopOnSignals(io, 'worker');
  let host: TeamHost;
  try {
    host = await openTeamHost({ projectDir, url, signal: stop.signal });
  } catch (e) {
    stop.dispose();
    if (!(e instanceof PreflightFailedError)) throw e;
    io.err(`ralph worker: agents cannot start:\n${formatPreflight(e.report)}\n(ralph doctor shows every check)\n`);
    return 1;
  }
  const sub = printEvents(host, io, args.quiet);
  try {
    if (host.preflight !== null) {
      const notes = formatPreflight(host.preflight);
      if (notes.length > 0) io.err(`${notes}\n`);
      const r = host.preflight.confinement.find((c) => c.role === 'worker');
      if (r !== undefined && !args.quiet) io.out(`agents: worker (${r.backend}) ${r.kind}: ${r.summary}\n`);
    }
    io.out(`ralph worker: ${args.count} worker(s) on machine ${host.host}, store ${host.where}, branch ${host.branch} of ${args.remote}\n`);
    const workers = Array.from(
      { length: args.count },
      (_, i) =>
        new TeamWorker(host, {
          name: `worker-${i + 1}`,
          remote: args.remote,
          leaseTtlMs: args.leaseTtlMs,
          exitWhenIdle: args.exitWhenIdle,
          idlePollMs: 1000,
          log: (l) => io.out(`${l}\n`),
        }),
    );
    const tallies = await Promise.all(workers.map((w) => w.run(stop.signal)));
    const sum = (k: keyof (typeof tallies)[number]): number => tallies.reduce((n, t) => n + t[k], 0);
    io.out(
      `ralph worker: ${sum('queued')} patch(es) queued, ${sum('refused')} refused, ${sum('released')} released, ${sum('blocked')} blocked\n`,
    );
    return 0;
  } finally {
    sub.dispose();
    stop.dispose();
    await host.close();
  }
}

export interface TeamStartArgs {
  readonly once: boolean;
  /** Leased workers in this process besides the promoter (default 0: workers run with `ralph worker`). */
  readonly workers: number;
  readonly quiet: boolean;
  readonly remote: string;
  /** The elected promoter judges deferred (tier-2) patches itself; --no-judge leaves them to a human. */
  readonly judge: boolean;
}

export function parseTeamStartArgs(argv: readonly string[]): TeamStartArgs {
  let once = false;
  let quiet = false;
  let remote = 'origin';
  let workers = 0;
  let judge = true;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const flag = a.split('=')[0] ?? a;
    if (a === '--once') once = true;
    else if (a === '--no-judge') judge = false;
    else if (a === '--quiet' || a === '-q') quiet = true;
    else if (flag === '--remote') [remote, i] = valueOf(argv, i, '--remote');
    else if (flag === '--workers') {
      let v: string;
      [v, i] = valueOf(argv, i, '--workers');
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 16) throw new TeamUsageError(`--workers needs an integer 0..16, got ${v}`);
      workers = n;
    } else
      throw new TeamUsageError(
        `ralph start: unknown argument '${a}' (usage on a team store: ralph start [--once] [--workers N] [--remote R] [--no-judge] [--quiet])`,
      );
  }
  if (remote === '' || remote.startsWith('-')) throw new TeamUsageError(`--remote: '${remote}' is not a git remote`);
  return { once, quiet, remote, workers, judge };
}

/**
 * Whether `ralph start` on a PostgreSQL store is the team's promoter: only with the shared
 * git remote (`--remote`, default origin) to fetch patches from and push the branch to.
 * Without one, a single machine runs the loop itself on the store and promotes locally.
 */
export async function hasTeamRemote(projectDir: string, argv: readonly string[]): Promise<boolean> {
  let remote = 'origin';
  argv.forEach((a, i) => {
    if (a.startsWith('--remote=')) remote = a.slice('--remote='.length);
    else if (a === '--remote' && argv[i + 1] !== undefined) remote = argv[i + 1] as string;
  });
  if (remote === '' || remote.startsWith('-')) return true; // parseTeamStartArgs names the mistake
  const r = await runGit(projectDir, ['remote', 'get-url', remote], { allowExitCodes: [1, 2, 128] });
  return r.exitCode === 0 && r.stdout.trim() !== '';
}

/**
 * `ralph start` on a PostgreSQL store: one promoter across hosts. Elected → promotes the
 * workers' patches until stopped (--once: until the backlog is done or blocked); not
 * elected → says who holds the lock and stands by to take over. A lost lock session (the
 * server restarted) stops promoting at once and stands for election again. `--workers N`
 * runs N leased workers in this process too, elected or not. The judge of deferred patches
 * runs confined on the promoter's machine, so the preflight checks its agent CLI unless
 * --no-judge (and no workers) says this process starts no agent.
 */
export async function teamStartCommand(projectDir: string, args: TeamStartArgs, io: TeamCliIo): Promise<number> {
  const url = teamStoreUrl(projectDir, 'ralph start');
  const stop = stopOnSignals(io, 'promoter');
  const remote = args.remote;
  let branch = '';
  let host: TeamHost;
  try {
    host = await openTeamHost({
      projectDir,
      url,
      noAgents: args.workers === 0 && !args.judge,
      signal: stop.signal,
      publish: (commit) => publishBranch(projectDir, remote, branch, commit),
    });
  } catch (e) {
    stop.dispose();
    if (!(e instanceof PreflightFailedError)) throw e;
    io.err(
      `ralph start: agents cannot start:\n${formatPreflight(e.report)}\n(ralph doctor shows every check; --no-judge promotes without running the judge here)\n`,
    );
    return 1;
  }
  branch = host.branch;
  const sub = printEvents(host, io, args.quiet);
  try {
    if (host.preflight !== null && args.judge) {
      const r = host.preflight.confinement.find((c) => c.role === 'judge');
      if (r !== undefined && !args.quiet) io.out(`agents: judge (${r.backend}) ${r.kind}: ${r.summary}\n`);
    }
    const workers = Array.from(
      { length: args.workers },
      (_, i) =>
        new TeamWorker(host, {
          name: `worker-${i + 1}`,
          remote,
          leaseTtlMs: 30_000,
          exitWhenIdle: args.once,
          idlePollMs: 1000,
          log: (l) => io.out(`${l}\n`),
        }),
    );
    const [promoted] = await Promise.all([
      promoteWhileElected(host, url, args, io, stop.signal),
      ...workers.map((w) => w.run(stop.signal)),
    ]);
    io.out(`ralph start: promoted ${promoted} patch(es)\n`);
    return 0;
  } finally {
    sub.dispose();
    stop.dispose();
    await host.close();
  }
}

async function promoteWhileElected(host: TeamHost, url: string, args: TeamStartArgs, io: TeamCliIo, stop: AbortSignal): Promise<number> {
  const actor = `promoter@${host.host}:${process.pid}`;
  let total = 0;
  while (!stop.aborted) {
    let lock = await PromoterLock.tryAcquire(url).catch(() => undefined);
    if (lock === undefined) {
      const holder = await PromoterLock.holder(url).catch(() => undefined);
      io.out(
        holder !== undefined
          ? `ralph start: another promoter holds the team's lock (${holder.application}, server pid ${holder.pid}); standing by to take over. Workers run with \`ralph worker\`.\n`
          : "ralph start: waiting to be elected promoter (the store's server does not answer, or another promoter just took the lock)\n",
      );
      lock = await PromoterLock.waitUntilElected(url, stop);
      if (lock === undefined) break;
    }
    try {
      io.out(`ralph start: elected the team's promoter on ${host.where}; promoting to ${host.branch} of ${args.remote}\n`);
      const promoter = new TeamPromoter(host, {
        remote: args.remote,
        pollMs: 1000,
        exitWhenIdle: args.once,
        log: (l) => io.out(`${l}\n`),
        actor,
        judge: args.judge,
      });
      total += (await promoter.run(AbortSignal.any([stop, lock.lost]))).promoted;
      if (stop.aborted || !lock.lost.aborted) break;
      io.err(`ralph start: ${errorText(lock.lost.reason)}; no longer promoting, standing for election again\n`);
    } finally {
      await lock.release();
    }
  }
  return total;
}
