// The `ralph` shebang and NODE_EXTRA_CA_CERTS (src/shared/extraCaCerts.ts), on the built CLI
// run as a user runs it: Node starts without the variable (it would parse those certificates
// before anything runs), while the processes the CLI starts get the user's value back.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const CLI = path.resolve(__dirname, '../../../dist/cli.js');

describe('ralph and NODE_EXTRA_CA_CERTS (built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} missing: npm run build`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-ca-'));
    repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    const r = spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: repo, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const init = spawnSync(CLI, ['init'], { cwd: repo, encoding: 'utf8' });
    assert.equal(init.status, 0, init.stderr);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given NODE_EXTRA_CA_CERTS, then Node starts without it and the processes the CLI starts get it back', () => {
    const missing = path.join(dir, 'no-such-bundle.pem');
    // Node itself warns about a certificate file it cannot load: proof that it read the variable.
    const viaNode = spawnSync(process.execPath, [CLI, 'help'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: missing },
    });
    assert.match(viaNode.stderr, /Ignoring extra certs/);
    // The doctor runs the configured Claude binary: a script that says what it was given.
    const seen = path.join(dir, 'seen.txt');
    const fake = path.join(dir, 'fake-claude.sh');
    fs.writeFileSync(
      fake,
      `#!/bin/sh\necho "\${NODE_EXTRA_CA_CERTS-unset}|\${RALPH_EXTRA_CA_CERTS-unset}" >> '${seen}'\necho '2.1.332 (Claude Code)'\n`,
      { mode: 0o755 },
    );
    const configFile = path.join(repo, 'ralph.config.json');
    const config = fs.readFileSync(configFile, 'utf8');
    try {
      const c = JSON.parse(config) as { backends: Record<string, unknown> };
      c.backends['claude'] = { binary: fake };
      fs.writeFileSync(configFile, JSON.stringify(c));
      const doctor = spawnSync(CLI, ['doctor'], { cwd: repo, encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: missing } });
      assert.doesNotMatch(doctor.stderr, /Ignoring extra certs/);
      assert.equal(fs.readFileSync(seen, 'utf8').split('\n')[0], `${missing}|unset`);
      fs.rmSync(seen);
      const { NODE_EXTRA_CA_CERTS: _none, ...without } = process.env;
      const r = spawnSync(CLI, ['doctor'], { cwd: repo, encoding: 'utf8', env: without });
      assert.doesNotMatch(r.stderr, /Ignoring extra certs/);
      assert.equal(fs.readFileSync(seen, 'utf8').split('\n')[0], 'unset|unset');
    } finally {
      fs.writeFileSync(configFile, config);
    }
  });
});
