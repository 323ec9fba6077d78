// The team store's credentials stay out of reach of what a worker runs: a gate command (the
// agent's code) and an agent process, both in the real bubblewrap sandbox, try to read
// ~/.pgpass, ~/.pg_service.conf, ~/.postgresql/, $PGPASSFILE and $PGSERVICEFILE and print
// $PGPASSWORD and $RALPH_STORE_URL: they see empty files and no variables. The same command
// outside the sandbox reads every secret, so the test fails if the hiding goes.
// The files live under /var/tmp: /tmp is hidden by the sandbox anyway and would prove nothing.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { allowListedEnv, confineSpawn, detectConfinement, type Confinement } from '../../../src/agents/sandbox';
import { runGate } from '../../../src/loop/gates';

const SECRETS = ['pgpass-secret', 'service-secret', 'passfile-secret', 'servicefile-secret', 'key-secret', 'pw-secret', 'url-secret'];

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
  const leaked = (out: string): string[] => SECRETS.filter((s) => out.includes(s));

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
