// Where the warm `ralph` process of this build listens (warmCommands.ts: which calls go there).
// Every `ralph` call is a new Node process that loads its chunks and compiles SQLite's wasm
// before it does any work; a store command costs some 120 ms that way where its work takes
// a few. A warm process (warmServer.ts) keeps all that loaded: a call whose command it
// serves sends it its arguments, folder and environment over a Unix socket and prints what
// comes back (warmClient.ts), and the first call that finds none starts one, which exits
// after a minute without calls.
// The socket lives in a folder only this user can enter, and only under a folder an agent's
// sandbox hides (/tmp, /run: agents/sandbox/hiddenRoots.ts), whatever XDG_RUNTIME_DIR or
// RALPH_CLI_SERVER_DIR say: the sandbox shows the rest of the host read-only, and a
// read-only mount does not stop connect(), so a socket anywhere else (.ralph/, a WSLg
// runtime folder under /mnt, the home folder) would let a confined agent run commands, and
// its own programs, outside its sandbox. The folder's parent must be the user's own or a
// sticky root folder like /tmp, so nobody else can swap the folder for theirs. The socket's
// name is a hash of everything that makes two processes differ (the build, Node, the
// bundle's path, NODE_OPTIONS, the certificates Node must trust, the user's groups), so a
// new build never talks to an old process, nor a session to one with other rights.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HIDDEN_ROOTS } from '../agents/sandbox/hiddenRoots';

export interface WarmTarget {
  /** The Unix socket of the warm process for this build. */
  readonly socket: string;
  /** What a warm process must be to serve this call (compared in full at each call: the socket's name is a 32-bit hash of it). */
  readonly key: string;
}

/** The folders agents' sandboxes hide, by their real paths (macOS's /tmp is /private/tmp). */
let hiddenRoots: readonly string[] | undefined;

/** Whether `dir` (which exists) is, by its real path, in (or, with `atRoot`, at) a folder agents' sandboxes hide. */
function hiddenFromAgents(dir: string, atRoot = false): boolean {
  hiddenRoots ??= HIDDEN_ROOTS.map((root) => (fs.existsSync(root) ? fs.realpathSync(root) : root));
  try {
    const real = fs.realpathSync(dir);
    return hiddenRoots.some((root) => real.startsWith(`${root}/`) || (atRoot && real === root));
  } catch {
    return false;
  }
}

/** Whether nobody but `uid` (and root) can replace what is in `dir`: it is theirs, or root's and sticky. */
function ownedOrSticky(dir: string, uid: number): boolean {
  try {
    const st = fs.statSync(dir);
    return st.uid === uid || (st.uid === 0 && (st.mode & 0o1000) !== 0);
  } catch {
    return false;
  }
}

/** `dir` created 0700 if missing; itself when it is a folder only `uid` can enter, under a safe parent, hidden from agents. */
function privateFolder(dir: string, uid: number): string | undefined {
  const parent = path.dirname(dir);
  // Checked before anything is created there.
  if (!path.isAbsolute(dir) || !ownedOrSticky(parent, uid) || !hiddenFromAgents(parent, true)) return undefined;
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 && hiddenFromAgents(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The folder for this user's sockets: RALPH_CLI_SERVER_DIR when set (tests; no warm process
 * when it does not qualify), else `ralph-cli-<uid>` in XDG_RUNTIME_DIR when that qualifies,
 * else in /tmp.
 */
export function socketFolder(env: NodeJS.ProcessEnv, uid: number): string | undefined {
  const chosen = env['RALPH_CLI_SERVER_DIR'];
  if (chosen) return privateFolder(chosen, uid);
  const runtime = env['XDG_RUNTIME_DIR'];
  const name = `ralph-cli-${uid}`;
  return (runtime && privateFolder(path.join(runtime, name), uid)) || privateFolder(path.join('/tmp', name), uid);
}

/** What makes a warm process able to serve a call from this process (same for both sides). */
function warmKey(cliFile: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (typeof RALPH_BUILD === 'undefined') return undefined;
  // A call runs with the warm process's credentials: the same user (the folder) and groups.
  const groups = [process.getgid?.(), ...[...(process.getgroups?.() ?? [])].sort((a, b) => a - b)].join(',');
  return [
    RALPH_BUILD,
    process.version,
    process.execPath,
    cliFile,
    env['NODE_EXTRA_CA_CERTS'] ?? '',
    env['NODE_OPTIONS'] ?? '',
    groups,
  ].join('\n');
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
