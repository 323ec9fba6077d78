// How every PostgreSQL client of Ralph is configured from a store URL. One thing beyond the
// URL: a `ralph` process whose launcher deferred NODE_EXTRA_CA_CERTS (shared/extraCaCerts.ts)
// started with Node's default root certificates only, so a TLS connection is given the
// user's extra certificates as `ca` beside the defaults, as Node would have trusted them.
import * as fs from 'node:fs';
import * as tls from 'node:tls';
import type { ClientConfig } from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import { deferredExtraCaCerts } from '../../shared/extraCaCerts';

type SslOption = ClientConfig['ssl'];

/** PGSSLMODE as node-postgres reads it when the URL says nothing about TLS. */
function sslFromEnvironment(env: NodeJS.ProcessEnv): SslOption {
  switch (env['PGSSLMODE']) {
    case 'prefer':
    case 'require':
    case 'verify-ca':
    case 'verify-full':
      return true;
    case 'no-verify':
      return { rejectUnauthorized: false };
    default:
      return undefined;
  }
}

/**
 * The client configuration for `url`. Unchanged (the URL as the connection string) unless
 * this process started without the user's extra certificates and the connection uses TLS
 * without a root certificate of its own (`sslrootcert`).
 */
export function pgClientConfig(
  url: string,
  applicationName?: string,
  extraCaFile: string | undefined = deferredExtraCaCerts(),
  env: NodeJS.ProcessEnv = process.env,
): ClientConfig {
  const plain: ClientConfig = { connectionString: url, ...(applicationName !== undefined ? { application_name: applicationName } : {}) };
  if (extraCaFile === undefined) return plain;
  const parsed = parseIntoClientConfig(url);
  const ssl: SslOption = parsed.ssl ?? sslFromEnvironment(env);
  if (ssl === undefined || ssl === false) return plain;
  const options = ssl === true ? {} : ssl;
  if (options.ca !== undefined) return plain;
  let extra: string;
  try {
    extra = fs.readFileSync(extraCaFile, 'utf8');
  } catch (e) {
    // What Node itself does with an unreadable file: warn, and trust the defaults.
    process.emitWarning(`Ignoring extra certs from \`${extraCaFile}\`: ${e instanceof Error ? e.message : String(e)}`);
    return plain;
  }
  // The URL's own fields win over the name given here, as they do in node-postgres.
  return {
    ...(applicationName !== undefined ? { application_name: applicationName } : {}),
    ...parsed,
    ssl: { ...options, ca: [...tls.rootCertificates, extra] },
  };
}
