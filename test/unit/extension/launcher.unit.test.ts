// The launcher that puts the shipped CLI on the terminal's PATH (src/extension/launcher.ts):
// run for real by /bin/sh, it hands every argument through unchanged (spaces, quotes, `$`)
// to the CLI under the given runtime with ELECTRON_RUN_AS_NODE=1 and NODE_EXTRA_CA_CERTS moved
// aside (as the CLI's shebang does), from paths with spaces
// and quotes; it is rewritten only when what it points at changes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launcherFiles, writeLaunchers } from '../../../src/extension/launcher';

describe('extension/launcher: ralph on the terminal PATH', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ralph launcher 'q' "));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function fakeCli(name: string): string {
    const file = path.join(dir, name);
    fs.writeFileSync(
      file,
      'const e = process.env;\n' +
        'console.log(JSON.stringify({ argv: process.argv.slice(2), electron: e.ELECTRON_RUN_AS_NODE, ca: [e.NODE_EXTRA_CA_CERTS, e.RALPH_EXTRA_CA_CERTS] }));\n',
    );
    return file;
  }

  it('given a launcher written for a runtime and a CLI, when the shell runs it, then the CLI gets every argument unchanged', async function () {
    if (process.platform === 'win32') this.skip();
    const bin = path.join(dir, 'bin');
    const cli = fakeCli("dist's cli.js");
    assert.equal(await writeLaunchers(bin, process.execPath, cli), true);
    const launcher = path.join(bin, 'ralph');
    assert.ok((fs.statSync(launcher).mode & 0o111) !== 0, 'the launcher is executable');
    const args = ['status', 'a b', "it's", '$HOME', '"quoted"', ''];
    // NODE_EXTRA_CA_CERTS reaches the CLI moved aside (Node starts without it; the CLI puts it back).
    const r = spawnSync(launcher, args, { encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: '/no/such.pem' } });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Ignoring extra certs/);
    assert.deepEqual(JSON.parse(r.stdout), { argv: args, electron: '1', ca: ['', '/no/such.pem'] });
  });

  it('given the same runtime and CLI, then the launcher is left alone; given a moved CLI, then it is rewritten', async () => {
    const bin = path.join(dir, 'bin');
    const a = fakeCli('a.js');
    const b = fakeCli('b.js');
    assert.equal(await writeLaunchers(bin, process.execPath, a), true);
    assert.equal(await writeLaunchers(bin, process.execPath, a), false);
    assert.equal(await writeLaunchers(bin, process.execPath, b), true);
    const [only] = launcherFiles(process.execPath, b);
    assert.ok(only);
    assert.equal(fs.readFileSync(path.join(bin, only.name), 'utf8'), only.text);
    assert.deepEqual(
      fs.readdirSync(bin).filter((f) => f.endsWith('.tmp')),
      [],
    );
  });

  it('given Windows, then a .cmd passes all arguments and keeps ELECTRON_RUN_AS_NODE out of the calling shell', () => {
    const [cmd] = launcherFiles('C:\\VS Code\\Code.exe', 'C:\\ext\\dist\\cli.js', 'win32');
    assert.ok(cmd);
    assert.equal(cmd.name, 'ralph.cmd');
    assert.match(cmd.text, /^@echo off\r\n/);
    assert.match(
      cmd.text,
      /\r\nsetlocal\r\nset "RALPH_EXTRA_CA_CERTS=%NODE_EXTRA_CA_CERTS%"\r\nset NODE_EXTRA_CA_CERTS=\r\nset ELECTRON_RUN_AS_NODE=1\r\n"C:\\VS Code\\Code\.exe" "C:\\ext\\dist\\cli\.js" %\*\r\n$/,
    );
  });
});
