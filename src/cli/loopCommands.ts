// The loop's command-line verbs, ready for src/cli to dispatch: `ralph start [--once]
// [--workers N] [--quiet]`, `ralph stop|pause|resume [reason...]` (beside a running loop,
// through the inbox) and `ralph demo [--req] [--scripted]`. Output goes through the given io; exit codes follow
// the CLI's (0 ok, 1 failed, 2 usage).
import { formatPreflight, PreflightFailedError } from '../preflight/preflight';
import { formatLoopEvent, openLoopHost, requestLoopCommand } from '../loop/host';
import { runDemo } from './demo';
import { runReqDemo } from './reqDemo';

export interface LoopCliIo {
  out(text: string): void;
  err(text: string): void;
}

export class LoopUsageError extends Error {
  override readonly name = 'LoopUsageError';
}

export interface StartArgs {
  readonly once: boolean;
  readonly workers?: number;
  readonly quiet: boolean;
}

export function parseStartArgs(argv: readonly string[]): StartArgs {
  let once = false;
  let quiet = false;
  let workers: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--once') once = true;
    else if (a === '--quiet' || a === '-q') quiet = true;
    else if (a === '--workers' || a.startsWith('--workers=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      const n = Number(v);
      if (v === undefined || !Number.isInteger(n) || n < 0 || n > 16)
        throw new LoopUsageError(`--workers needs an integer 0..16, got ${v ?? 'nothing'}`);
      workers = n;
    } else throw new LoopUsageError(`ralph start: unknown argument '${a}' (usage: ralph start [--once] [--workers N] [--quiet])`);
  }
  return { once, quiet, ...(workers !== undefined ? { workers } : {}) };
}

/**
 * `ralph start`: runs the loop in this process until stopped (Ctrl-C, `ralph stop`, or with
 * --once when the backlog is empty or blocked), printing one line per event and a summary.
 */
export async function startCommand(projectDir: string, argv: readonly string[], io: LoopCliIo): Promise<number> {
  const args = parseStartArgs(argv);
  let host: Awaited<ReturnType<typeof openLoopHost>>;
  try {
    host = await openLoopHost({
      projectDir,
      once: args.once,
      ...(args.workers !== undefined ? { settings: { workers: args.workers } } : {}),
    });
  } catch (e) {
    if (!(e instanceof PreflightFailedError)) throw e;
    io.err(`ralph start: agents cannot start:\n${formatPreflight(e.report)}\n(ralph doctor shows every check)\n`);
    return 1;
  }
  // Said before any agent starts: warnings (an unconfined agent above all) and the confinement.
  if (host.preflight !== null) {
    const notes = formatPreflight(host.preflight);
    if (notes.length > 0) io.err(`${notes}\n`);
    if (host.preflight.unconfined) {
      io.err('WARNING: agents run UNCONFINED (agents.unconfined: true): they can write anything your user can.\n');
    }
    if (!args.quiet) for (const r of host.preflight.confinement) io.out(`agents: ${r.role} (${r.backend}) ${r.kind}: ${r.summary}\n`);
  }
  const sub = host.loop.events.on((e) => {
    if (args.quiet && e.type !== 'summary' && e.type !== 'task.blocked' && e.type !== 'budget') return;
    const line = formatLoopEvent(e);
    if (line !== null) io.out(`${line}\n`);
  });
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      io.err(`\n${sig}: stopping the loop (agents are being terminated)…\n`);
      void host.loop.stop(`${sig} received`).catch(() => undefined);
    } else {
      io.err('second signal: exiting now; the next start recovers\n');
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const summary = await host.loop.run();
    return /crashed/.test(summary.stopReason) ? 1 : 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    sub.dispose();
    await host.close();
  }
}

/** `ralph stop|pause|resume [reason...]`: a command for the running loop, via the inbox. */
export function loopRequestCommand(projectDir: string, verb: 'stop' | 'pause' | 'resume', argv: readonly string[], io: LoopCliIo): number {
  const reason = argv.join(' ').trim();
  const file = requestLoopCommand(projectDir, verb, `cli:${process.env.USER ?? 'user'}`, reason.length > 0 ? reason : undefined);
  io.out(`${verb} requested (${file}); the running loop picks it up within a second\n`);
  return 0;
}

/** Parses `ralph demo [--req] [--scripted]`. */
export function parseDemoArgs(argv: readonly string[]): { scripted: boolean; req: boolean } {
  let scripted = false;
  let req = false;
  for (const a of argv) {
    if (a === '--scripted') scripted = true;
    else if (a === '--req') req = true;
    else throw new LoopUsageError(`ralph demo: unknown argument '${a}' (usage: ralph demo [--req] [--scripted])`);
  }
  return { scripted, req };
}

/**
 * `ralph demo [--req] [--scripted]`: the sample project run end to end with the scripted model
 * (--req: REQ mode on a specification.yaml),
 * through the real claude CLI when installed in .tools/ (--scripted: the stand-in always).
 */
export async function demoCommand(io: LoopCliIo, argv: readonly string[] = []): Promise<number> {
  let args: { scripted: boolean; req: boolean };
  try {
    args = parseDemoArgs(argv);
  } catch (e) {
    if (!(e instanceof LoopUsageError)) throw e;
    io.err(`${e.message}\n`);
    return 2;
  }
  const t0 = Date.now();
  if (args.req) {
    // REQ mode's demo: specification.yaml built requirement by requirement (reqDemo.ts).
    const r = await runReqDemo((line) => io.out(`${line}\n`), { scripted: args.scripted });
    io.out(
      `REQ demo finished in ${((Date.now() - t0) / 1000).toFixed(1)} s (${r.backend.kind === 'claude' ? `real claude ${r.backend.version}` : 'scripted executable'})\n`,
    );
    return r.testsPass && r.report.status === 'COMPLETE' ? 0 : 1;
  }
  const r = await runDemo((line) => io.out(`${line}\n`), { scripted: args.scripted });
  io.out(
    `Demo finished in ${((Date.now() - t0) / 1000).toFixed(1)} s (${r.backend.kind === 'claude' ? `real claude ${r.backend.version}` : 'scripted executable'})\n`,
  );
  return r.testsPass && r.summary.promoted > 0 ? 0 : 1;
}
