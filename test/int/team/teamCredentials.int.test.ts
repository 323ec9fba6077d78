// The team store's credentials stay out of reach of what a worker runs: a gate command (the
// agent's code) and an agent process, both in the real bubblewrap sandbox, try to read
// ~/.pgpass, ~/.pg_service.conf, ~/.postgresql/, $PGPASSFILE and $PGSERVICEFILE and print
// $PGPASSWORD and $RALPH_STORE_URL: they see empty files and no variables. The same command
// outside the sandbox reads every secret, so the test fails if the hiding goes.
// The files live under /var/tmp: /tmp is hidden by the sandbox anyway and would prove nothing.
// Where no bubblewrap runs, a gate gets a home of its own without the files (the user's home
// through links otherwise): `cat ~/.pgpass` finds nothing there either.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { allowListedEnv, confineSpawn, detectConfinement, type Confinement } from '../../../src/agents/sandbox';
import { runGate } from '../../../src/loop/gates';

const SECRETS = ['pgpass-secret', 'service-secret', 'passfile-secret', 'servicefile-secret', 'key-secret', 'pw-secret', 'url-secret'];
const leaked = (out: string): string[] => SECRETS.filter((s) => out.includes(s));

describe("team: the store's credentials are hidden from a worker's gates and agents (real bubblewrap)", function () {
  this.timeout(60_000);
  let root: string | undefined;
  let confinement: Confinement;
  const saved: Record<string, string | undefined> = {};
  const vars = ['HOME', 'PGPASSFILE', 'PGSERVICEFILE', 'PGPASSWORD', 'PGUSER', 'RALPH_STORE_URL'];

  before(function () {
    confinement = detectConfinement('claude');
    if (confinement.kind !== 'bwrap') {
      console.log(`      skipped: no working bubblewrap here (${confinement.summary})`);
      this.skip();
    }
    root = fs.mkdtempSync(path.join('/var/tmp', 'ralph-team-creds-'));
    const home = path.join(root, 'home');
    fs.mkdirSync(path.join(home, '.postgresql'), { recursive: true });
    fs.writeFileSync(path.join(home, '.pgpass'), '127.0.0.1:5432:*:w:pgpass-secret\n', { mode: 0o600 });
    fs.writeFileSync(path.join(home, '.pg_service.conf'), '[team]\npassword=service-secret\n');
    fs.writeFileSync(path.join(home, '.postgresql', 'postgresql.key'), 'key-secret\n');
    fs.writeFileSync(path.join(root, 'other.pass'), '*:*:*:*:passfile-secret\n', { mode: 0o600 });
    fs.writeFileSync(path.join(root, 'other.service'), '[x]\npassword=servicefile-secret\n');
    fs.mkdirSync(path.join(root, 'worktree'));
    fs.mkdirSync(path.join(root, 'scratch'));
    for (const v of vars) saved[v] = process.env[v];
    Object.assign(process.env, {
      HOME: home,
      PGPASSFILE: path.join(root, 'other.pass'),
      PGSERVICEFILE: path.join(root, 'other.service'),
      PGPASSWORD: 'pw-secret',
      PGUSER: 'w',
      RALPH_STORE_URL: 'postgres://w:url-secret@127.0.0.1:5432/ralph',
    });
  });
  after(() => {
    for (const v of vars) {
      if (saved[v] === undefined) delete process.env[v];
      else process.env[v] = saved[v];
    }
    if (root !== undefined) fs.rmSync(root, { recursive: true, force: true });
  });

  const peek = (): string => {
    const r = root as string;
    const files = ['home/.pgpass', 'home/.pg_service.conf', 'home/.postgresql/postgresql.key', 'other.pass', 'other.service'];
    return [
      ...files.map((f) => `cat ${path.join(r, f)} 2>&1; ls ${path.dirname(path.join(r, f))} >/dev/null 2>&1`),
      'echo "pw=[$PGPASSWORD] url=[$RALPH_STORE_URL]"',
      "env | grep '^PG' || true",
      'echo peeked',
    ].join('; ');
  };

  it('given the secrets readable by the user, then the same command outside the sandbox reads them all (the control)', () => {
    const r = spawnSync('sh', ['-c', peek()], { encoding: 'utf8', env: process.env });
    assert.deepEqual(leaked(r.stdout), SECRETS, r.stdout);
  });

  it('given a gate command that reads the credential files and prints the variables, then it sees nothing of them', async () => {
    const r = root as string;
    const result = await runGate(
      { name: 'peek', command: peek(), timeoutMs: 30_000 },
      { cwd: path.join(r, 'worktree'), confinement, scratch: path.join(r, 'scratch') },
    );
    assert.match(result.outputTail, /pw=\[\] url=\[\]\npeeked$/, result.outputTail);
    assert.deepEqual(leaked(result.outputTail), [], result.outputTail);
  });

  it('given an agent process in the sandbox with its allow-listed environment, then it sees nothing of them either', () => {
    const r = root as string;
    const spawn = confineSpawn(confinement, 'sh', ['-c', peek()], {
      cwd: path.join(r, 'worktree'),
      scratch: path.join(r, 'scratch'),
      path: process.env['PATH'],
    });
    const out = spawnSync(spawn.file, [...spawn.args], {
      cwd: path.join(r, 'worktree'),
      encoding: 'utf8',
      env: { ...allowListedEnv('claude', process.env), HOME: path.join(r, 'scratch') },
    });
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /pw=\[\] url=\[\]\npeeked\n$/, out.stdout);
    assert.deepEqual(leaked(out.stdout + out.stderr), [], out.stdout);
  });
});

describe('team: a gate that runs unconfined (no bubblewrap) finds no credential file in its home', function () {
  this.timeout(60_000);
  let root: string;
  let savedHome: string | undefined;

  before(() => {
    root = fs.mkdtempSync(path.join('/var/tmp', 'ralph-team-creds-open-'));
    const home = path.join(root, 'home');
    fs.mkdirSync(path.join(home, '.postgresql'), { recursive: true });
    fs.writeFileSync(path.join(home, '.pgpass'), '127.0.0.1:5432:*:w:pgpass-secret\n', { mode: 0o600 });
    fs.writeFileSync(path.join(home, '.pg_service.conf'), '[team]\npassword=service-secret\n');
    fs.writeFileSync(path.join(home, '.postgresql', 'postgresql.key'), 'key-secret\n');
    fs.writeFileSync(path.join(home, '.npmrc'), 'cache-setting=kept\n');
    fs.mkdirSync(path.join(root, 'worktree'));
    savedHome = process.env['HOME'];
    process.env['HOME'] = home;
  });
  after(() => {
    if (savedHome === undefined) delete process.env['HOME'];
    else process.env['HOME'] = savedHome;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('given ~/.pgpass, ~/.pg_service.conf and ~/.postgresql/, then `cat ~/.pgpass` finds nothing, libpq is pointed at nothing, and the rest of the home is there', async () => {
    const command = [
      'cat ~/.pgpass 2>&1',
      'cat ~/.pg_service.conf 2>&1',
      'cat ~/.postgresql/postgresql.key 2>&1',
      'cat "${PGPASSFILE:-/dev/null}" "${PGSERVICEFILE:-/dev/null}" 2>&1',
      'ls "$PGSYSCONFDIR" 2>&1',
      'cat ~/.npmrc',
      'echo peeked',
    ].join('; ');
    const result = await runGate(
      { name: 'peek', command, timeoutMs: 30_000 },
      { cwd: path.join(root, 'worktree'), scratch: path.join(root, 'scratch') },
    );
    assert.deepEqual(leaked(result.outputTail), [], result.outputTail);
    assert.match(result.outputTail, /\.pgpass: No such file/, result.outputTail);
    assert.match(result.outputTail, /cache-setting=kept\npeeked$/, result.outputTail);
    // The user's own files are untouched.
    assert.match(fs.readFileSync(path.join(root, 'home', '.pgpass'), 'utf8'), /pgpass-secret/);
  });

  it('given a home without credential files, then an unconfined gate keeps the home it has', async () => {
    const plain = path.join(root, 'plain');
    fs.mkdirSync(plain);
    process.env['HOME'] = plain;
    try {
      const result = await runGate(
        { name: 'home', command: 'echo "home=$HOME"', timeoutMs: 30_000 },
        { cwd: path.join(root, 'worktree'), scratch: path.join(root, 'scratch2') },
      );
      assert.equal(result.outputTail, `home=${plain}`);
    } finally {
      process.env['HOME'] = path.join(root, 'home');
    }
  });
});
