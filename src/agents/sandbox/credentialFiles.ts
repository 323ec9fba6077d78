// The user's files that hold the team store's credentials, hidden from every confined
// process (agents and the gates, which run the agents' code): libpq reads a password from
// ~/.pgpass or $PGPASSFILE and whole connections (host, user, password) from
// ~/.pg_service.conf, $PGSERVICEFILE or $PGSYSCONFDIR/pg_service.conf, and keeps client
// certificates and keys in ~/.postgresql/. A process that can read them connects to the
// store as the user — writes events, promotes — so the sandbox shows it empty ones instead.
import { existsSync, realpathSync, statSync } from 'node:fs';
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
