// The user's files that hold the team store's credentials, hidden from every confined
// process (agents and the gates, which run the agents' code): libpq reads a password from
// ~/.pgpass or $PGPASSFILE and whole connections (host, user, password) from
// ~/.pg_service.conf, $PGSERVICEFILE or $PGSYSCONFDIR/pg_service.conf, and keeps client
// certificates and keys in ~/.postgresql/. A process that can read them connects to the
// store as the user — writes events, promotes — so the sandbox shows it empty ones instead.
// A gate that runs unconfined (no bubblewrap on this machine) gets a home of its own instead
// (credentialFreeHome): the user's home through links, without these files.
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync, symlinkSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';

export interface HiddenPath {
  readonly path: string;
  /** A folder is covered by an empty tmpfs, a file by /dev/null. */
  readonly kind: 'file' | 'dir';
}

/** Debian's libpq looks here when PGSYSCONFDIR is not set. */
const SYSTEM_SERVICE_FILE = '/etc/postgresql-common/pg_service.conf';

function homes(): string[] {
  const out = [homedir()];
  try {
    out.push(userInfo().homedir);
  } catch {
    // no passwd entry for this user: HOME is all there is
  }
  return [...new Set(out.filter((h) => h.length > 0))];
}

/** The credential files and folders that exist now, by their real paths (a link to one leads there). */
export function storeCredentialPaths(env: Readonly<Record<string, string | undefined>> = process.env): HiddenPath[] {
  const candidates: string[] = [SYSTEM_SERVICE_FILE];
  for (const h of homes()) candidates.push(join(h, '.pgpass'), join(h, '.pg_service.conf'), join(h, '.postgresql'));
  for (const name of ['PGPASSFILE', 'PGSERVICEFILE', 'PGSSLKEY', 'PGSSLCERT']) {
    const v = env[name];
    if (v !== undefined && isAbsolute(v)) candidates.push(v);
  }
  const sysconf = env['PGSYSCONFDIR'];
  if (sysconf !== undefined && isAbsolute(sysconf)) candidates.push(join(sysconf, 'pg_service.conf'));
  const out = new Map<string, HiddenPath>();
  for (const c of candidates) {
    if (!existsSync(c)) continue;
    let kind: HiddenPath['kind'];
    try {
      kind = statSync(c).isDirectory() ? 'dir' : 'file';
    } catch {
      continue;
    }
    const p = realpathSync(c);
    out.set(p, { path: p, kind });
  }
  return [...out.values()];
}

/** The credential files libpq looks for in a home. */
const HOME_CREDENTIALS = ['.pgpass', '.pg_service.conf', '.postgresql'];

/**
 * The environment for a command that runs unconfined as the user (a gate where bubblewrap
 * is missing) when the user's home holds credential files: HOME is a folder in `scratch`
 * that shows every other entry of the home (symbolic links, so caches and tool settings
 * still work) and not those files, and libpq's password, service and system files point at
 * files that do not exist. `cat ~/.pgpass` and a libpq client then find nothing. A path
 * spelled out to the real file still reads it: only confinement closes that. Empty (the
 * environment stays as it is) when the home holds none of them.
 */
export function credentialFreeHome(
  scratch: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const home = env['HOME'] !== undefined && isAbsolute(env['HOME']) ? env['HOME'] : homedir();
  if (!HOME_CREDENTIALS.some((n) => existsSync(join(home, n)))) return {};
  const shadow = join(scratch, 'home');
  const none = join(scratch, 'no-pg');
  mkdirSync(shadow, { recursive: true });
  mkdirSync(none, { recursive: true });
  let entries: string[] = [];
  try {
    entries = readdirSync(home);
  } catch {
    // an unreadable home: the command gets an empty one
  }
  for (const name of entries) {
    if (HOME_CREDENTIALS.includes(name)) continue;
    try {
      symlinkSync(join(home, name), join(shadow, name));
    } catch {
      // there already (an earlier run's link, or the command's own file)
    }
  }
  return { HOME: shadow, PGPASSFILE: join(none, 'pgpass'), PGSERVICEFILE: join(none, 'pg_service.conf'), PGSYSCONFDIR: none };
}
