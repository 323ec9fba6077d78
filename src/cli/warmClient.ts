// The calling side of the warm `ralph` process (warmAddress.ts says why it exists): sends a
// call's arguments, folder, environment and umask, prints what the process writes, and
// returns its exit code. A call the process never accepted (none listening, busy with
// another call, another build) or handed back (the store was locked) comes back 'run-here'
// and runs in this process as if there were no warm process; once accepted, a call is never
// run twice: a connection lost before the exit code is exit 6 (it may have been recorded).
import * as fs from 'node:fs';
import * as net from 'node:net';
import { DEFERRED_CA_VAR } from '../shared/extraCaCerts';
import { warmTarget, type WarmTarget } from './warmAddress';

/**
 * EXIT.applied (exitCodes.ts): "it may have been recorded, do not retry". Not imported: the
 * exit table would move to a chunk of its own that every call, `ralph help` too, loads.
 */
export const EXIT_MAY_HAVE_BEEN_RECORDED = 6;

/** One line from the warm process. */
export type WarmReply =
  /** Taken, by the process with this pid: from here on the call is never run twice. */
  | { readonly accepted: number }
  /** Not taken (busy with another call, another build, the caller's folder unreachable). */
  | { readonly busy: true }
  /** Taken, but the store was locked: nothing ran; the caller runs it (and waits) itself. */
  | { readonly handBack: true }
  | { readonly out: string }
  | { readonly err: string }
  | { readonly exit: number };

export interface WarmRequest {
  readonly key: string;
  /** The caller's pid: its events' run id is its own, as when it runs alone. */
  readonly pid: number;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly umask: number;
}

/** 'start' when no process listens (the caller may start one), 'run-here' when one would not take the call. */
export type Forwarded = number | 'start' | 'run-here';

export function forwardToWarm(target: WarmTarget, argv: readonly string[]): Promise<Forwarded> {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    return Promise.resolve('run-here');
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const umask = process.umask(0);
  process.umask(umask);
  const request: WarmRequest = { key: target.key, pid: process.pid, argv, cwd, env, umask };
  return new Promise((resolve) => {
    let accepted = false;
    let servedBy = 0;
    let settled = false;
    let pending = '';
    const settle = (f: Forwarded): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(f);
    };
    const socket = net.createConnection(target.socket, () => socket.write(`${JSON.stringify(request)}\n`));
    socket.setEncoding('utf8');
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!accepted) settle(e.code === 'ENOENT' || e.code === 'ECONNREFUSED' ? 'start' : 'run-here');
    });
    socket.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while (!settled && (nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        let reply: WarmReply;
        try {
          reply = JSON.parse(line) as WarmReply;
        } catch {
          reply = { busy: true };
        }
        if ('accepted' in reply) {
          accepted = true;
          servedBy = reply.accepted;
        } else if (!accepted || 'handBack' in reply) settle('run-here');
        else if ('out' in reply) process.stdout.write(reply.out);
        else if ('err' in reply) process.stderr.write(reply.err);
        else if ('exit' in reply) {
          if (process.env['RALPH_DEBUG']) process.stderr.write(`ralph: ran in the warm process (pid ${servedBy})\n`);
          settle(reply.exit);
        }
      }
    });
    socket.on('close', () => {
      if (settled) return;
      if (accepted) {
        process.stderr.write(
          `ralph: the warm ralph process ended before the command finished; it may have been recorded: check before running it again\n`,
        );
        settle(EXIT_MAY_HAVE_BEEN_RECORDED);
      } else settle('run-here');
    });
  });
}

/**
 * Starts the warm process for `target` (Node running `argv`) in the background (detached,
 * no terminal), unless another call started one in the last 10 s that has not begun
 * listening yet.
 */
export async function startWarm(target: WarmTarget, argv: readonly string[]): Promise<void> {
  const marker = `${target.socket}.starting`;
  try {
    const st = fs.statSync(marker);
    if (Date.now() - st.mtimeMs < 10_000) return;
  } catch {
    // none: start one
  }
  try {
    fs.writeFileSync(marker, String(process.pid), { mode: 0o600 });
    const { spawn } = await import('node:child_process');
    // Started as the shebang starts the CLI: without Node loading NODE_EXTRA_CA_CERTS.
    const child = spawn(process.execPath, argv, {
      detached: true,
      stdio: 'ignore',
      cwd: '/',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: '', [DEFERRED_CA_VAR]: process.env['NODE_EXTRA_CA_CERTS'] ?? '' },
    });
    child.on('error', () => fs.rmSync(marker, { force: true }));
    child.unref();
  } catch {
    // A warm process is an optimization: without one every call runs in its own process.
  }
}

export interface WarmCall {
  readonly cliFile: string;
  /** How Node starts a warm process. */
  readonly serve: readonly string[];
  /** Names the socket (warmTarget). */
  readonly hash: (text: string) => string;
}

/**
 * Runs the call in the warm process when it takes it (its exit code), or says to run it here
 * (undefined), having started a warm process when none listens.
 */
export async function runWarm(argv: readonly string[], call: WarmCall): Promise<number | undefined> {
  const target = warmTarget(call.cliFile, call.hash);
  if (target === undefined) return undefined;
  const forwarded = await forwardToWarm(target, argv);
  if (typeof forwarded === 'number') return forwarded;
  if (forwarded === 'start') await startWarm(target, call.serve);
  return undefined;
}
