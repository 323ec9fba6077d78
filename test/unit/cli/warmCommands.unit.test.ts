// Which calls the warm process may serve (src/cli/warmAddress.ts): the store's control
// commands that run briefly, never a host command (the loop, init, repair, logs...), and the
// command is found past `--dir`.
import assert from 'node:assert/strict';
import { CONTROL_COMMANDS } from '../../../src/cli/controlCommands';
import { HOST_COMMANDS } from '../../../src/cli/hostCommands';
import { EXIT } from '../../../src/cli/exitCodes';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { socketFolder, warmTarget } from '../../../src/cli/warmAddress';
import { commandName, WARM_COMMANDS, wantsWarm } from '../../../src/cli/warmCommands';
import { EXIT_MAY_HAVE_BEEN_RECORDED } from '../../../src/cli/warmClient';

describe('warm process address', () => {
  it('serves only control commands, none that a host command shadows', () => {
    const control = new Set(CONTROL_COMMANDS.map((c) => c.name));
    const host = new Set(HOST_COMMANDS.map((c) => c.name));
    for (const name of WARM_COMMANDS) {
      assert.ok(control.has(name), `${name} is not a control command`);
      assert.ok(!host.has(name), `${name} is a host command`);
    }
    // Every control command a host command does not take over is served.
    assert.deepEqual(
      [...control].filter((n) => !host.has(n) && !WARM_COMMANDS.has(n)),
      [],
    );
  });

  it("a call the warm process lost is the exit table's 'may have been recorded' (the client keeps its own copy)", () => {
    assert.equal(EXIT_MAY_HAVE_BEEN_RECORDED, EXIT.applied);
  });

  it('finds the command past --dir in either spelling', () => {
    assert.equal(commandName(['--dir', '/p', 'status']), 'status');
    assert.equal(commandName(['--dir=/p', 'emit-event', 'a']), 'emit-event');
    assert.equal(commandName(['status', '--dir', '/p']), 'status');
    assert.equal(commandName(['--dir', '/p']), undefined);
    assert.equal(commandName([]), undefined);
  });

  it('a store command may go warm, unless RALPH_CLI_SERVER=0 or git tracing; other calls never', () => {
    assert.equal(wantsWarm(['--dir', '/p', 'status'], {}), process.platform !== 'win32');
    assert.equal(wantsWarm(['status'], { RALPH_CLI_SERVER: '0' }), false);
    assert.equal(wantsWarm(['status'], { RALPH_GIT_TRACE: '1' }), false);
    assert.equal(wantsWarm(['start'], {}), false);
    assert.equal(wantsWarm(['help'], {}), false);
  });

  it('keeps its socket only in a private folder under /tmp or /run, and creates nothing elsewhere', function () {
    if (typeof process.getuid !== 'function' || os.tmpdir() !== '/tmp') this.skip();
    const uid = process.getuid();
    const mine = fs.mkdtempSync('/tmp/rw-unit-');
    const shownParent = fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'rw-unit-'));
    try {
      assert.equal(socketFolder({ RALPH_CLI_SERVER_DIR: mine }, uid), mine);
      // Outside the folders agents' sandboxes hide: none, and nothing created there.
      const shown = path.join(shownParent, 'sockets');
      assert.equal(socketFolder({ RALPH_CLI_SERVER_DIR: shown }, uid), undefined);
      assert.equal(fs.existsSync(shown), false);
      assert.equal(socketFolder({ RALPH_CLI_SERVER_DIR: 'relative/sockets' }, uid), undefined);
      // An XDG_RUNTIME_DIR agents can see (WSLg's is under /mnt): /tmp instead.
      assert.equal(socketFolder({ XDG_RUNTIME_DIR: shownParent }, uid), `/tmp/ralph-cli-${uid}`);
      assert.equal(fs.existsSync(path.join(shownParent, `ralph-cli-${uid}`)), false);
      // A folder others may enter is refused.
      fs.chmodSync(mine, 0o755);
      assert.equal(socketFolder({ RALPH_CLI_SERVER_DIR: mine }, uid), undefined);
    } finally {
      fs.rmSync(mine, { recursive: true, force: true });
      fs.rmSync(shownParent, { recursive: true, force: true });
    }
  });

  it('has no address when the sources run: no build to match', () => {
    assert.equal(
      warmTarget(__filename, (t) => t, {}),
      undefined,
    );
  });
});
