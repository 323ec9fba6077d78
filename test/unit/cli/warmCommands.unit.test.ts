// Which calls the warm process may serve (src/cli/warmAddress.ts): the store's control
// commands that run briefly, never a host command (the loop, init, repair, logs...), and the
// command is found past `--dir`.
import assert from 'node:assert/strict';
import { CONTROL_COMMANDS } from '../../../src/cli/controlCommands';
import { HOST_COMMANDS } from '../../../src/cli/hostCommands';
import { EXIT } from '../../../src/cli/exitCodes';
import { warmTarget } from '../../../src/cli/warmAddress';
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

  it('has no address when the sources run: no build to match', () => {
    assert.equal(
      warmTarget(__filename, (t) => t, {}),
      undefined,
    );
  });
});
