// PostgreSQL client configuration from a store URL (src/store/postgres/pgConfig.ts): as the
// URL says, unless this process's Node started without the user's NODE_EXTRA_CA_CERTS and the
// connection uses TLS without a root certificate of its own: then those certificates are
// trusted explicitly, beside Node's defaults, as Node would have trusted them.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { pgClientConfig } from '../../../src/store/postgres/pgConfig';

describe('store/postgres/pgConfig', () => {
  let dir: string;
  let bundle: string;
  const PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-pgconfig-'));
    bundle = path.join(dir, 'extra.pem');
    fs.writeFileSync(bundle, PEM);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given Node loaded its certificates itself, then the URL is the whole configuration', () => {
    const url = 'postgres://u:p@db.example:5433/ralph?sslmode=verify-full';
    assert.deepEqual(pgClientConfig(url, 'ralph x', undefined, {}), { connectionString: url, application_name: 'ralph x' });
  });

  it('given certificates Node did not load and a TLS connection, then they are its ca beside the defaults', () => {
    for (const url of ['postgres://u:p@db.example:5433/ralph?sslmode=verify-full', 'postgres://u@db.example/ralph?ssl=true']) {
      const c = pgClientConfig(url, 'ralph x', bundle, {});
      assert.equal(c.connectionString, undefined, url);
      assert.equal(c.host, 'db.example');
      assert.equal(c.application_name, 'ralph x');
      const ssl = c.ssl as { ca?: string[] };
      assert.ok(Array.isArray(ssl.ca), url);
      assert.equal(ssl.ca.at(-1), PEM);
      assert.equal(ssl.ca.length, tls.rootCertificates.length + 1);
    }
    // PGSSLMODE asks for TLS when the URL says nothing.
    const fromEnv = pgClientConfig('postgres://u@db.example/ralph', undefined, bundle, { PGSSLMODE: 'require' });
    assert.equal((fromEnv.ssl as { ca?: string[] }).ca?.at(-1), PEM);
  });

  it('given no TLS, or a root certificate of its own, then nothing is added', () => {
    for (const url of ['postgres://u@127.0.0.1:5432/ralph', 'postgres://u@db/ralph?sslmode=disable']) {
      assert.deepEqual(pgClientConfig(url, undefined, bundle, {}), { connectionString: url }, url);
    }
    const root = path.join(dir, 'root.pem');
    fs.writeFileSync(root, PEM);
    const own = `postgres://u@db/ralph?sslmode=verify-full&sslrootcert=${encodeURIComponent(root)}`;
    assert.deepEqual(pgClientConfig(own, undefined, bundle, {}), { connectionString: own });
  });
});
