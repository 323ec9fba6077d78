// `ralph store …`: the team store's upkeep. `migrate --to URL` copies this project's
// embedded history into PostgreSQL (src/store/postgres/migrate.ts); `where` says which
// store the project uses now. Loaded only by `ralph store` (it brings the PostgreSQL driver);
// it imports nothing the CLI's entry point has (args.ts included), so that module is not
// split out of the entry into a chunk every command would then load.
import * as path from 'node:path';
import type { CliIo } from './controlCommands';
import { migrateToPostgres } from '../store/postgres/migrate';
import { DEFAULT_ROLES, teamRolesSql } from '../team/roles';
import { STORE_URL_ENV, redactStoreUrl, resolveStoreLocation } from '../store/storeUrl';

const USAGE = 'usage: ralph store migrate --to postgres://user@host:5432/db | ralph store where | ralph store roles [--database D]';

export async function storeCommand(dir: string, args: readonly string[], io: CliIo): Promise<number> {
  const [verb, ...rest] = args;
  let to: string | undefined;
  let database: string | undefined;
  let problem: string | undefined;
  if (verb !== 'migrate' && verb !== 'where' && verb !== 'roles') problem = verb === undefined ? 'missing verb' : `unknown verb '${verb}'`;
  for (let i = 0; i < rest.length && problem === undefined; i++) {
    const a = rest[i] ?? '';
    if (verb === 'migrate' && a === '--to' && i + 1 < rest.length) to = rest[++i];
    else if (verb === 'migrate' && a.startsWith('--to=')) to = a.slice(5);
    else if (verb === 'roles' && a === '--database' && i + 1 < rest.length) database = rest[++i];
    else if (verb === 'roles' && a.startsWith('--database=')) database = a.slice(11);
    else problem = a === '--to' ? '--to needs a value' : `unexpected argument '${a}'`;
  }
  if (problem !== undefined) {
    io.err(`ralph: store: ${problem}; ${USAGE}\n`);
    return 2;
  }
  if (verb === 'where') {
    const where = resolveStoreLocation(dir);
    io.out(
      where.kind === 'embedded'
        ? `embedded ${path.join(dir, '.ralph', 'ralph.db')}\n`
        : `postgres ${redactStoreUrl(where.url)} (from ${where.source})\n`,
    );
    return 0;
  }
  if (verb === 'roles') {
    const where = resolveStoreLocation(dir);
    database ??= where.kind === 'postgres' ? decodeURIComponent(new URL(where.url).pathname.slice(1)) : undefined;
    if (!database) {
      io.err(`ralph: store roles: which database? pass --database D (or set ${STORE_URL_ENV}); ${USAGE}\n`);
      return 2;
    }
    io.out(teamRolesSql({ database, ...DEFAULT_ROLES }));
    return 0;
  }
  to ??= process.env[STORE_URL_ENV];
  if (to === undefined) {
    io.err(`ralph: store migrate: --to postgres://… is required; ${USAGE}\n`);
    return 2;
  }
  const r = await migrateToPostgres(path.join(dir, '.ralph'), to, (line) => io.err(`ralph: ${line}\n`));
  io.out(
    `MIGRATED ${r.copied} events to ${r.url} (${r.total - r.copied} were there already); verified ${r.verified}/${r.total} event by event\n` +
      `Use it: set RALPH_STORE_URL=${r.url.replace(/:\*\*\*@/, '@')} (password in PGPASSWORD or ~/.pgpass), or "store" in ralph.config.json.\n`,
  );
  return 0;
}
