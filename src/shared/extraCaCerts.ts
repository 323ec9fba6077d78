// NODE_EXTRA_CA_CERTS for the `ralph` command line. Node 20 builds its whole root
// certificate store and parses every certificate that variable names at start-up, before
// any JavaScript runs, whether or not the process ever opens a TLS connection: with a
// system bundle that is some 35 ms and 400 M instructions per call, most of what `ralph
// status` costs. The CLI's own commands open no TLS connection except team mode's
// PostgreSQL, so its launchers (the shebang of dist/cli.js, the VS Code terminal's
// launcher) start Node with the variable emptied and its value moved to
// RALPH_EXTRA_CA_CERTS; the CLI puts it back first thing, so every process it starts
// (agents, gates, git) inherits the user's environment as it was, and a PostgreSQL
// connection that uses TLS trusts those certificates explicitly (store/postgres/pgConfig.ts).

/** Where the launchers keep NODE_EXTRA_CA_CERTS's value while Node starts without it. */
export const DEFERRED_CA_VAR = 'RALPH_EXTRA_CA_CERTS';
const NODE_VAR = 'NODE_EXTRA_CA_CERTS';

let deferred: string | undefined;

/**
 * Puts NODE_EXTRA_CA_CERTS back as the user set it when a launcher moved it aside (an
 * empty value is the same as none to Node), and remembers the file this process started
 * without. Does nothing when the process was started some other way (`node dist/cli.js`).
 */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const moved = env[DEFERRED_CA_VAR];
  if (moved === undefined) return;
  delete env[DEFERRED_CA_VAR];
  if (moved.length > 0) {
    env[NODE_VAR] = moved;
    deferred = moved;
  } else delete env[NODE_VAR];
}

/**
 * The certificate file the user named in NODE_EXTRA_CA_CERTS when this process's Node did
 * not load it (a TLS client must pass it as `ca` itself); undefined when Node loaded it or
 * there is none.
 */
export function deferredExtraCaCerts(): string | undefined {
  return deferred;
}
