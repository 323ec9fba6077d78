// The machine a team process names itself by: RALPH_MACHINE (validated), else the hostname;
// and agent names split back into their name and machine.
import * as assert from 'node:assert/strict';
import { agentFileStem, machineAgentName, splitAgentName } from '../../../src/domain/agentName';
import { agentScratchDir } from '../../../src/git/repoCache';
import { idFileName } from '../../../src/domain/ids';
import { InvalidMachineNameError, resolveMachine } from '../../../src/team/machine';

describe('team/machine', () => {
  it('given RALPH_MACHINE, then it names the machine, not the hostname', () => {
    assert.equal(
      resolveMachine({ RALPH_MACHINE: 'ci-runner_7.eu' }, () => 'box'),
      'ci-runner_7.eu',
    );
  });

  it('given no RALPH_MACHINE, then the hostname, with characters a name cannot carry replaced', () => {
    assert.equal(
      resolveMachine({}, () => 'dev-box.local'),
      'dev-box.local',
    );
    assert.equal(
      resolveMachine({}, () => 'pod@ns:1 x'),
      'pod-ns-1-x',
    );
    assert.equal(
      resolveMachine({}, () => ''),
      'localhost',
    );
  });

  it('given an empty or ill-formed RALPH_MACHINE, then a typed error says what is wrong', () => {
    for (const [value, re] of [
      ['', /RALPH_MACHINE="" is empty/],
      ['a@b', /may hold only letters, digits/],
      ['host:1', /may hold only letters/],
      ['two words', /may hold only letters/],
      ['x'.repeat(129), /longer than 128/],
    ] as const) {
      assert.throws(
        () => resolveMachine({ RALPH_MACHINE: value }, () => 'box'),
        (e: unknown) => e instanceof InvalidMachineNameError && e.value === value && re.test(e.message),
        value,
      );
    }
  });

  it('given a qualified name or a lease owner, then the split gives the name and the machine', () => {
    assert.equal(machineAgentName('worker-1', 'machine-a'), 'worker-1@machine-a');
    assert.deepEqual(splitAgentName('worker-1@machine-a'), { local: 'worker-1', machine: 'machine-a' });
    assert.deepEqual(splitAgentName('worker-2@machine-b:4242'), { local: 'worker-2', machine: 'machine-b' });
    assert.deepEqual(splitAgentName('primary'), { local: 'primary', machine: null });
    assert.deepEqual(splitAgentName('@x'), { local: '@x', machine: null });
    assert.deepEqual(splitAgentName('odd@'), { local: 'odd@', machine: null });
    assert.deepEqual(splitAgentName('w@:12'), { local: 'w@:12', machine: null });
  });

  it("given a team agent's name, then its files on this machine are named without the machine", async () => {
    assert.equal(agentFileStem('worker-1@machine-a'), 'worker-1');
    assert.equal(agentFileStem('primary'), 'primary');
    assert.equal(idFileName([['agent', agentFileStem('worker-1@machine-a')], 1], '.log'), 'worker-1_1.log');
    assert.throws(() => idFileName([['agent', 'worker-1@machine-a']], '.log'), /invalid agent id/);
    assert.match(await agentScratchDir(process.cwd(), 'worker-1@machine-a'), /[\\/]agents[\\/]worker-1$/);
  });
});
