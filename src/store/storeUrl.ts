// Which event store a project uses: the embedded one in .ralph (default) or a shared
// PostgreSQL one named by a URL (RALPH_STORE_URL, else `store` in ralph.config.json).
// The URL's password is a secret: it is registered with the redactor as soon as the URL
// is read, and everything that names the store prints redactStoreUrl(url).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { registerSecretValues } from '../shared/redaction';

export const STORE_URL_ENV = 'RALPH_STORE_URL';
const CONFIG_FILE = 'ralph.config.json';
const PG_URL = /^postgres(ql)?:\/\//i;

export type StoreLocation = { readonly kind: 'embedded' } | { readonly kind: 'postgres'; readonly url: string; readonly source: string };

/** A store URL with its password (and any password query parameter) replaced by `***`. */
export function redactStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const k of [...u.searchParams.keys()]) if (/pass|secret|key|token/i.test(k)) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    // Not parseable: hide everything between the scheme and the host part.
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** Checks a store URL's shape; returns a problem or null. Registers its password as a secret. */
export function storeUrlProblem(url: string): string | null {
  if (!PG_URL.test(url)) return 'must start with postgres:// or postgresql://';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (u.password) registerSecretValues([decodeURIComponent(u.password), u.password]);
  if (!u.hostname && !u.searchParams.get('host')) return 'names no host';
  return null;
}

/**
 * The store a project uses. A broken ralph.config.json only matters here when it mentions
 * a store: then guessing "embedded" would silently split the team's history, so it fails.
 */
export function resolveStoreLocation(projectDir: string, env: NodeJS.ProcessEnv = process.env): StoreLocation {
  const fromEnv = env[STORE_URL_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return checked(fromEnv.trim(), STORE_URL_ENV);
  const file = path.join(projectDir, CONFIG_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { kind: 'embedded' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    if (/"store"\s*:/.test(text)) throw new Error(`${file}: cannot read the "store" setting: ${(e as Error).message}`);
    return { kind: 'embedded' };
  }
  const store = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>)['store'] : undefined;
  if (store === undefined || store === null) return { kind: 'embedded' };
  if (typeof store !== 'string') throw new Error(`${file}: "store" must be a postgres:// URL string`);
  return checked(store, `${file} "store"`);
}

function checked(url: string, source: string): StoreLocation {
  const problem = storeUrlProblem(url);
  if (problem !== null) throw new Error(`${source}: the store URL ${redactStoreUrl(url)} ${problem}`);
  return { kind: 'postgres', url, source };
}

/** Variables that carry the team store's credentials (the URL, libpq's password). */
export const STORE_CREDENTIAL_VARIABLES: readonly string[] = [STORE_URL_ENV, 'PGPASSWORD'];

/**
 * libpq's own variables (PGPASSWORD, PGPASSFILE, PGSERVICE, PGHOST, PGUSER, PGSSLKEY…): any of
 * them points a program at the store or its password, so the gates get none.
 */
const LIBPQ_VARIABLE = /^PG[A-Z_]+$/;

/**
 * `env` without the store's credentials: for the gates, which run code an agent wrote,
 * outside the agent's sandbox. Agents never get them (their environment is an allow-list).
 */
export function withoutStoreCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of Object.keys(out)) if (STORE_CREDENTIAL_VARIABLES.includes(name) || LIBPQ_VARIABLE.test(name)) delete out[name];
  return out;
}
