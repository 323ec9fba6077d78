// A throwaway PostgreSQL cluster for team-mode tests: initdb into a temp dir, a free port on
// 127.0.0.1, password (scram) auth over TCP, fsync off (safe against a killed server, which
// is all the tests do; synchronous_commit stays on, or a kill would lose acknowledged commits). PostgreSQL refuses to run as root,
// so as root (CI, this machine) it runs as the `postgres` user Debian's package creates
// (runuser), with the temp dir handed to that user. `startPgCluster()` returns undefined
// with the reason when no server can start here: the caller skips, saying why.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface PgCluster {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** postgres://ralph:<password>@127.0.0.1:<port>/<db> */
  url(db?: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): string;
  /** pg_ctl stop -m immediate (a crash, as far as clients can tell); start() brings it back. */
  stop(): void;
  start(): void;
  /** Stops the server and removes its files. */
  destroy(): void;
}

const PASSWORD = 'team-test-pw-7f3a9c';

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A suite's cluster from its `before` hook: started, or the suite skipped with the reason
 * (mocha then counts its tests as pending, which `npm test`'s table shows).
 */
export async function startPgClusterOrSkip(ctx: Mocha.Context): Promise<PgCluster> {
  const got = await startPgCluster();
  if ('skip' in got) {
    console.log(`      skipped: ${got.skip}`);
    ctx.skip();
  }
  return got;
}

/**
 * A temp dir the server's user can reach: TMPDIR unless one of its folders shuts others out
 * (a code-server harness gives each run a private one), then /tmp.
 */
function reachableTmp(): string {
  const tmp = fs.realpathSync(os.tmpdir());
  for (let d = tmp; ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return '/tmp';
    if (path.dirname(d) === d) return tmp;
  }
}

/** Starts a cluster, or says why none can start here. */
export async function startPgCluster(): Promise<PgCluster | { skip: string }> {
  const bin = binDir();
  if (!bin) return { skip: 'no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)' };
  const isRoot = process.getuid?.() === 0;
  let asUser: string[] = [];
  let uid: number | undefined;
  let gid: number | undefined;
  if (isRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) return { skip: 'running as root and there is no `postgres` user to run the server as' };
    uid = Number(id.stdout.trim());
    gid = Number(g.stdout.trim());
    asUser = ['runuser', '-u', 'postgres', '--'];
  }
  const dir = fs.mkdtempSync(path.join(uid === undefined ? os.tmpdir() : reachableTmp(), 'ralph-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  fs.writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (uid !== undefined && gid !== undefined) {
    fs.chownSync(dir, uid, gid);
    fs.chownSync(pwfile, uid, gid);
  }
  const run = (cmd: string, args: string[]): void => {
    const [exe, ...rest] = [...asUser, path.join(bin, cmd), ...args];
    execFileSync(exe as string, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  try {
    run('initdb', [
      '-D',
      data,
      '-U',
      'ralph',
      `--pwfile=${pwfile}`,
      '--auth-host=scram-sha-256',
      '--auth-local=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { skip: `initdb failed: ${String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim()}` };
  }
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`;
  const start = (): void => run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '60', 'start']);
  const stop = (): void => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  try {
    start();
  } catch (e) {
    const log = fs.existsSync(path.join(dir, 'log')) ? fs.readFileSync(path.join(dir, 'log'), 'utf8').slice(-500) : '';
    fs.rmSync(dir, { recursive: true, force: true });
    return { skip: `the PostgreSQL server did not start: ${String((e as { stderr?: Buffer }).stderr ?? '').trim()} ${log}` };
  }
  const url = (db = 'postgres'): string => `postgres://ralph:${PASSWORD}@127.0.0.1:${port}/${db}`;
  let running = true;
  return {
    port,
    user: 'ralph',
    password: PASSWORD,
    url,
    createDatabase(name: string): string {
      const [exe, ...rest] = [...asUser, path.join(bin, 'createdb'), '-h', dir, '-p', String(port), '-U', 'ralph', name];
      execFileSync(exe as string, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
      return url(name);
    },
    stop(): void {
      stop();
      running = false;
    },
    start(): void {
      start();
      running = true;
    },
    destroy(): void {
      try {
        if (running) stop();
      } catch {
        // already down
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
