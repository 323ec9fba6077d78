// The scenario format: validation with messages naming the place, defaults, selection by
// prompt text and agent, and turn playback.
import { strict as assert } from 'node:assert';
import { applyPatchText, loadScenario, parseScenario, selectScript, turnAt } from '../../../src/agents/scripted/scenario.cjs';

describe('test kit scenario format', () => {
  it('given a single script, then it becomes a one-script scenario with defaults', () => {
    const s = parseScenario({ turns: [{ text: 'hi' }] });
    assert.equal(s.scripts.length, 1);
    const script = s.scripts[0];
    assert.equal(script?.model, 'claude-sonnet-4-5-20250929');
    assert.equal(script?.after, 'end');
    assert.deepEqual(script?.turns[0], { text: 'hi', tools: [], hang: false, delayMs: 0 });
  });

  it('given a bad tool call, then the error names the source and the place', () => {
    assert.throws(
      () => parseScenario({ scripts: [{ turns: [{ tools: [{ tool: 'write', path: 'a' }] }] }] }, 'demo.json'),
      /demo\.json: invalid scenario: scripts\.0\.turns\.0\.tools\.0\.content/,
    );
    assert.throws(() => parseScenario({ turns: [{ hang: true, error: { status: 500 } }] }), /cannot both hang and fail/);
    assert.throws(() => parseScenario({ turns: [{ text: 'x', typo: 1 }] }), /typo/);
    assert.throws(() => loadScenario('{ not json'), /inline scenario: not JSON/);
  });

  it('selects by matching prompt text, then the unmatched default, per agent', () => {
    const s = parseScenario({
      scripts: [
        { name: 'judge', match: '## Judge', turns: [{ text: 'j' }] },
        { name: 'codex-only', agent: 'codex', turns: [{ text: 'c' }] },
        { name: 'default', turns: [{ text: 'd' }] },
      ],
    });
    assert.equal(selectScript(s, 'blah ## Judge blah', 'claude')?.name, 'judge');
    assert.equal(selectScript(s, 'plan the work', 'claude')?.name, 'default');
    assert.equal(selectScript(s, 'plan the work', 'codex')?.name, 'codex-only');
    assert.equal(selectScript(parseScenario({ match: 'X', turns: [{ text: 'x' }] }), 'no match', 'claude'), undefined);
  });

  it('plays turns, then ends or repeats the last', () => {
    const end = parseScenario({ turns: [{ text: 'a' }] }).scripts[0];
    const rep = parseScenario({ turns: [{ text: 'a' }, { text: 'b' }], after: 'repeat' }).scripts[0];
    assert.ok(end !== undefined && rep !== undefined);
    assert.equal(turnAt(end, 5).text, 'Done.');
    assert.equal(turnAt(rep, 5).text, 'b');
  });

  it('turns write and edit calls into apply_patch bodies', () => {
    assert.equal(
      applyPatchText({ tool: 'write', path: 'a.txt', content: 'x\ny\n' }),
      '*** Begin Patch\n*** Add File: a.txt\n+x\n+y\n*** End Patch\n',
    );
    assert.equal(
      applyPatchText({ tool: 'edit', path: 'a.txt', old: 'x', new: 'z' }),
      '*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+z\n*** End Patch\n',
    );
  });
});
