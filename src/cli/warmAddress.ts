// Where the warm `ralph` process of this build listens (warmCommands.ts: which calls go there).
// Every `ralph` call is a new Node process that loads its chunks and compiles SQLite's wasm
// before it does any work; a store command costs some 120 ms that way where its work takes
// a few. A warm process (warmServer.ts) keeps all that loaded: a call whose command it
// serves sends it its arguments, folder and environment over a Unix socket and prints what
// comes back (warmClient.ts), and the first call that finds none starts one, which exits
// after a minute without calls.
// The socket lives in a folder only this user can enter, under XDG_RUNTIME_DIR or /tmp,
// never in the project: an agent's sandbox shows the project read-only but hides /tmp and
// /run (agents/sandbox/bwrap.ts), and a read-only mount does not stop connect(), so a socket
// in .ralph/ would let a confined agent run commands outside its sandbox. The socket's name
// is a hash of everything that makes two processes differ (the build, Node, the bundle's
// path, NODE_OPTIONS, the certificates Node must trust), so a new build never talks to an old process.
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface WarmTarget {
  /** The Unix socket of the warm process for this build. */
  readonly socket: string;
  /** What a warm process must be to serve this call (compared in full at each call: the socket's name is a 32-bit hash of it). */
  readonly key: string;
}

/**
 * The folder for this user's sockets, created 0700; undefined when it exists but somebody
 * else could enter it (then no warm process is used).
 */
function socketFolder(env: NodeJS.ProcessEnv, uid: number): string | undefined {
  const runtime = env['XDG_RUNTIME_DIR'];
  const dir =
    env['RALPH_CLI_SERVER_DIR'] ||
    path.join(runtime && path.isAbsolute(runtime) && fs.existsSync(runtime) ? runtime : '/tmp', `ralph-cli-${uid}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** What makes a warm process able to serve a call from this process (same for both sides). */
function warmKey(cliFile: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (typeof RALPH_BUILD === 'undefined') return undefined;
  return [RALPH_BUILD, process.version, process.execPath, cliFile, env['NODE_EXTRA_CA_CERTS'] ?? '', env['NODE_OPTIONS'] ?? ''].join('\n');
}

/**
 * Where this process's calls go (warmCommands.ts said the call may go warm), or undefined
 * when they run here: the sources running (no build to match), or no private socket folder.
 * `hash` names the socket: the entry point's (codeCache.ts), passed in because importing it
 * here would move it out of the entry into a chunk every call loads.
 */
export function warmTarget(cliFile: string, hash: (text: string) => string, env: NodeJS.ProcessEnv = process.env): WarmTarget | undefined {
  if (typeof process.getuid !== 'function') return undefined;
  const key = warmKey(cliFile, env);
  if (key === undefined) return undefined;
  const dir = socketFolder(env, process.getuid());
  if (dir === undefined) return undefined;
  const socket = path.join(dir, `${hash(key)}.sock`);
  // sun_path holds 108 bytes.
  return Buffer.byteLength(socket) < 104 ? { socket, key } : undefined;
}
