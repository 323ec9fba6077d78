// Who may decide what on the team's store, enforced by PostgreSQL itself: every role reads
// the log and appends, but a worker's role may not append a decision — a promotion, a task
// done, dropped or re-prioritized, a deferral resolved, a proposal processed. A worker's
// process (or an agent that got hold of its connection) then cannot promote whatever it
// claims; only the promoter's and the humans' roles can. Row-level security on `events`
// does the checking, so no client, ours or not, gets around it. `ralph store roles` prints
// the SQL for the database owner to run once.

/** Event types a worker's role may not append: the decisions that belong to the promoter and the humans. */
export const WORKER_FORBIDDEN_EVENTS: readonly string[] = [
  'patch.promoted',
  'patch.applied',
  'patch.verified',
  'task.done',
  'task.completed',
  'task.dropped',
  'task.created',
  'task.migrated',
  'task.reprioritized',
  'task.deferral_resolved',
  'task.deferral_expired',
  'proposal.accepted',
  'proposal.deferred',
  'proposal.rejected',
];

const ident = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`'${name.slice(0, 80)}' is not a plain PostgreSQL role or database name`);
  return name;
};

export interface TeamRoleNames {
  readonly database: string;
  readonly worker: string;
  readonly promoter: string;
  readonly viewer: string;
}

export const DEFAULT_ROLES: Omit<TeamRoleNames, 'database'> = {
  worker: 'ralph_worker',
  promoter: 'ralph_promoter',
  viewer: 'ralph_viewer',
};

/**
 * The roles' SQL, for the owner of the tables (they exist once a writer opened the store or
 * `ralph store migrate` ran). Roles are created without a password: set one with
 * `ALTER ROLE … PASSWORD` or use the server's own authentication.
 */
export function teamRolesSql(names: TeamRoleNames): string {
  const db = ident(names.database);
  const w = ident(names.worker);
  const p = ident(names.promoter);
  const v = ident(names.viewer);
  const forbidden = WORKER_FORBIDDEN_EVENTS.map((t) => `'${t}'`).join(', ');
  return [
    `-- Ralph team roles for database ${db}; run as the owner of its tables.`,
    ...[w, p, v].map(
      (r) => `DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${r}') THEN CREATE ROLE ${r} LOGIN; END IF; END $$;`,
    ),
    `GRANT CONNECT ON DATABASE ${db} TO ${w}, ${p}, ${v};`,
    `GRANT SELECT ON events, ralph_head, ralph_meta TO ${w}, ${p}, ${v};`,
    `GRANT INSERT ON events TO ${w}, ${p};                 -- append-only: no UPDATE, no DELETE`,
    `GRANT UPDATE ON ralph_head TO ${w}, ${p};             -- the compare-and-swap`,
    `ALTER TABLE events ENABLE ROW LEVEL SECURITY;         -- the owner is not subject to it`,
    `DROP POLICY IF EXISTS ralph_read ON events;`,
    `CREATE POLICY ralph_read ON events FOR SELECT USING (true);`,
    `DROP POLICY IF EXISTS ralph_append ON events;`,
    `CREATE POLICY ralph_append ON events FOR INSERT WITH CHECK (true);  -- whoever has INSERT`,
    `DROP POLICY IF EXISTS ralph_worker_decides_nothing ON events;`,
    `CREATE POLICY ralph_worker_decides_nothing ON events AS RESTRICTIVE FOR INSERT TO ${w}`,
    `  WITH CHECK (event_type <> ALL (ARRAY[${forbidden}]));`,
    '',
  ].join('\n');
}
