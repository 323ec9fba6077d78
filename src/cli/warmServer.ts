// The warm `ralph` process (warmAddress.ts says why it exists): started detached by the
// first call that found none, it loads the dispatcher, the engine and SQLite once, then
// runs the calls sent to its socket one at a time, each in the caller's folder, environment
// and umask, exactly as `runCli` runs them in a process of their own; it writes their
// output back as it comes. A call that arrives while another runs is told it is busy, and a
// writer that finds the store locked is handed back before it waits: both run in the
// caller's own process instead, so a call here never waits in line for the store. A caller
// that goes away during its call (Ctrl-C, a timeout) takes this process and its children
// with it, as it would have taken the process it ran in alone: the call stops where it was,
// the store's writes being all or nothing, and a lock it held is free again. It exits after
// `idleMs` without calls, or as soon as its socket's name points elsewhere (a newer process
// of the same build took it over).
import * as fs from 'node:fs';
import * as net from 'node:net';
import { z } from 'zod';
import { resetProcessRedactor } from '../shared/redaction';
import { defaultRunId } from '../store/eventIds';
import type { CliIo } from './commandSpec';
import type { WarmReply, WarmRequest } from './warmClient';

export { warmTarget } from './warmAddress';

const requestSchema = z.object({
  key: z.string(),
  pid: z.number().int().positive(),
  argv: z.array(z.string()),
  cwd: z.string().min(1),
  env: z.record(z.string(), z.string()),
  umask: z.number().int().min(0).max(0o777),
});

/** Requests are a few KB (the caller's environment); anything far larger is not one. */
const MAX_REQUEST_BYTES = 1 << 20;

/** How long the warm process waits for its next call before it exits (RALPH_CLI_SERVER_IDLE_MS overrides). */
const DEFAULT_IDLE_MS = 60_000;

export interface WarmServerOptions {
  readonly socket: string;
  readonly key: string;
  /** Default: RALPH_CLI_SERVER_IDLE_MS, or a minute. */
  readonly idleMs?: number;
  readonly runCli: (
    argv: readonly string[],
    options: { readonly io: CliIo; readonly handBackWhenLocked: true; readonly runId: string },
  ) => Promise<number>;
  /**
   * What happens when a caller goes away during its call. Default: this process and its
   * children (its process group: it was started detached) end at once.
   */
  readonly abandon?: () => void;
}

/**
 * Closes the files this process inherited from the call that started it (a descriptor a
 * shell or a test harness left open, which its reader would otherwise wait on for as long as
 * this process lives). Node opens its own close-on-exec, so an open descriptor above 2
 * without that flag came from the parent. Linux only (/proc). Called first thing in the warm
 * process, before it opens anything of its own.
 */
export function closeInheritedFiles(): void {
  let fds: string[];
  try {
    fds = fs.readdirSync('/proc/self/fd');
  } catch {
    return;
  }
  for (const name of fds) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      // O_CLOEXEC is 02000000 in the flags /proc reports.
      if (flags !== undefined && (parseInt(flags, 8) & 0o2000000) === 0) fs.closeSync(fd);
    } catch {
      // gone already (the directory listing's own descriptor)
    }
  }
}

/** Puts `next` in place of the whole environment (the same object, which child processes read). */
function replaceEnv(next: Readonly<Record<string, string | undefined>>): void {
  for (const k of Object.keys(process.env)) if (!(k in next)) delete process.env[k];
  for (const [k, v] of Object.entries(next)) if (v !== undefined) process.env[k] = v;
}

/** Listens on `options.socket` (replacing a dead process's) and serves until idle. */
export async function serveWarm(options: WarmServerOptions): Promise<void> {
  const own = { ...process.env };
  const abandon = options.abandon ?? ((): void => void process.kill(-process.pid, 'SIGKILL'));
  const fromEnv = Number(process.env['RALPH_CLI_SERVER_IDLE_MS']);
  const idleMs = options.idleMs ?? (Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_IDLE_MS);
  let busy = false;
  let closing = false;
  let lastCall = Date.now();

  const run = async (request: WarmRequest, send: (r: WarmReply) => void): Promise<void> => {
    try {
      process.chdir(request.cwd);
    } catch {
      // The caller's folder is gone for us: let it fail in its own process, as it would have.
      send({ busy: true });
      return;
    }
    replaceEnv(request.env);
    // The caller's secrets are redacted from what it writes, not the first caller's.
    resetProcessRedactor();
    const umask = process.umask(request.umask);
    send({ accepted: process.pid });
    try {
      const io: CliIo = { out: (t) => send({ out: t }), err: (t) => send({ err: t }) };
      const runId = defaultRunId(Date.now(), request.pid);
      send({ exit: await options.runCli(request.argv, { io, handBackWhenLocked: true, runId }) });
    } catch (e) {
      // Another writer holds the store: the caller waits for it in a process of its own,
      // where Ctrl-C stops the wait (here it would not stop the call). The writer's open
      // throws this before the command runs: nothing was recorded or printed.
      if (!(e instanceof Error && e.name === 'StoreBusyHandBack')) throw e;
      send({ handBack: true });
    } finally {
      process.umask(umask);
      replaceEnv(own);
      resetProcessRedactor();
      // Not to keep the caller's folder in use (an unmount, a removed temp folder).
      process.chdir('/');
    }
  };

  const server = net.createServer((conn) => {
    let pending = '';
    let running = false;
    conn.setEncoding('utf8');
    conn.on('error', () => conn.destroy());
    conn.on('close', () => {
      if (running) abandon();
    });
    const send = (r: WarmReply): void => {
      if (!conn.destroyed) conn.write(`${JSON.stringify(r)}\n`);
    };
    conn.on('data', (chunk: string) => {
      pending += chunk;
      if (pending.length > MAX_REQUEST_BYTES) return void conn.destroy();
      const nl = pending.indexOf('\n');
      if (nl < 0) return;
      const line = pending.slice(0, nl);
      pending = '';
      conn.removeAllListeners('data');
      let parsed: ReturnType<typeof requestSchema.safeParse>;
      try {
        parsed = requestSchema.safeParse(JSON.parse(line));
      } catch {
        return void conn.end();
      }
      if (!parsed.success || parsed.data.key !== options.key || busy || closing) {
        send({ busy: true });
        return void conn.end();
      }
      busy = true;
      running = true;
      lastCall = Date.now();
      void run(parsed.data, send).finally(() => {
        running = false;
        busy = false;
        lastCall = Date.now();
        conn.end();
      });
    });
  });

  // Two calls can each start one (the second missed the first's marker by a hair): the
  // later to be ready leaves the socket to the one already answering.
  if (await answers(options.socket)) return;
  const inode = await listen(server, options.socket);
  fs.rmSync(`${options.socket}.starting`, { force: true });

  await new Promise<void>((resolve) => {
    const timer = setInterval(
      () => {
        if (busy) return;
        if (Date.now() - lastCall >= idleMs || !stillOurs(options.socket, inode)) {
          clearInterval(timer);
          closing = true;
          server.close();
          if (stillOurs(options.socket, inode)) fs.rmSync(options.socket, { force: true });
          resolve();
        }
      },
      Math.min(1000, idleMs),
    );
  });
}

/** Whether a process listens on `socket` (a dead one's socket file refuses). */
function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createConnection(socket, () => {
      probe.destroy();
      resolve(true);
    });
    probe.on('error', () => resolve(false));
  });
}

function stillOurs(socket: string, inode: number): boolean {
  try {
    return fs.lstatSync(socket).ino === inode;
  } catch {
    return false;
  }
}

/**
 * Binds a fresh name beside `socket` and renames it into place: a process that died left
 * its socket file behind, and of two processes started at once the later one wins (the
 * other sees the name taken and exits). Returns the socket's inode.
 */
function listen(server: net.Server, socket: string): Promise<number> {
  const fresh = `${socket}.${process.pid}`;
  fs.rmSync(fresh, { force: true });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(fresh, () => {
      try {
        fs.chmodSync(fresh, 0o600);
        fs.renameSync(fresh, socket);
        resolve(fs.lstatSync(socket).ino);
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}
