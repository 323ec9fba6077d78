import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { redactText } from '../../../src/shared/redaction';
import { redactStoreUrl, resolveStoreLocation } from '../../../src/store/storeUrl';

describe('store/storeUrl', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-url-'));
  });

  it('redacts the password and password-like query parameters, keeps the rest', () => {
    assert.equal(
      redactStoreUrl('postgres://ralph:s3cret-pw@db.example:5432/team?sslmode=require'),
      'postgres://ralph:***@db.example:5432/team?sslmode=require',
    );
    assert.equal(redactStoreUrl('postgresql://db/team?password=hunter22x'), 'postgresql://db/team?password=***');
    assert.equal(redactStoreUrl('postgres://ralph@db/team'), 'postgres://ralph@db/team');
    assert.equal(redactStoreUrl('postgres://u:p w@[bad'), 'postgres://***@[bad');
  });

  it('given no URL anywhere, then the project uses the embedded store', () => {
    assert.deepEqual(resolveStoreLocation(dir, {}), { kind: 'embedded' });
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), '{"name": "x"}');
    assert.deepEqual(resolveStoreLocation(dir, {}), { kind: 'embedded' });
  });

  it('given RALPH_STORE_URL, then it wins over the config, and its password is registered as a secret', () => {
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), '{"name": "x", "store": "postgres://cfg@db/a"}');
    assert.deepEqual(resolveStoreLocation(dir, {}), {
      kind: 'postgres',
      url: 'postgres://cfg@db/a',
      source: `${path.join(dir, 'ralph.config.json')} "store"`,
    });
    const env = { RALPH_STORE_URL: 'postgres://ralph:Zq8-unguessable-pw@db/b' };
    assert.equal(resolveStoreLocation(dir, env).kind, 'postgres');
    assert.equal(redactText('dsn was postgres://ralph:Zq8-unguessable-pw@db/b'), 'dsn was postgres://ralph:[REDACTED]@db/b');
  });

  it('given a bad URL or a broken config that names a store, then it fails naming the place, never guessing embedded', () => {
    assert.throws(
      () => resolveStoreLocation(dir, { RALPH_STORE_URL: 'mysql://u:pw12345678@db/x' }),
      /RALPH_STORE_URL: the store URL mysql:\/\/u:\*\*\*@db\/x must start with postgres:\/\//,
    );
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), '{"name": "x", "store": "postgres://db/a",,}');
    assert.throws(() => resolveStoreLocation(dir, {}), /ralph\.config\.json: cannot read the "store" setting/);
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), '{"name": "x",,}');
    assert.deepEqual(resolveStoreLocation(dir, {}), { kind: 'embedded' });
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), '{"name": "x", "store": 5}');
    assert.throws(() => resolveStoreLocation(dir, {}), /"store" must be a postgres:\/\/ URL string/);
  });
});
