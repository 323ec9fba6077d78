import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import fc from 'fast-check';
import { checkId, idFileName, idProblem, InvalidIdError, isId, quoteId } from '../../../src/domain/ids';
import { domainEvent } from '../../../src/domain/events';
import { idFilePath } from '../../../src/shared/idFiles';

describe('domain/ids: one id grammar', () => {
  it('accepts the ids the product, the demo, the tests and the reference use', () => {
    for (const id of [
      'W1-005',
      'W3-035',
      'CALC-4',
      'T-1',
      'T1',
      'A',
      'REQ-001',
      'AC-001-01',
      'patch_W1-005_20261129100000123',
      'patch_W1-005_20261129100000123_2',
      'prop_001.json',
      'worker-1',
      'v1.2_rc',
    ]) {
      assert.equal(idProblem(id), null, id);
    }
  });

  it('refuses ../, /, NUL, control characters and the rest with a message naming the input', () => {
    const cases: Array<[string, RegExp]> = [
      ['../../../../elsewhere/x', /path separator/],
      ['a/b', /path separator/],
      ['a\\b', /path separator/],
      ['W1\u0000', /NUL/],
      ['W1\nW2', /control character/],
      ['W1\u001b[31m', /control character/],
      ['.hidden', /start with a letter or a digit/],
      ['-flag', /start with a letter or a digit/],
      ['', /empty/],
      ['has space', /" " is not allowed/],
      ['x'.repeat(129), /longer than 128/],
    ];
    for (const [input, why] of cases) {
      const e = (() => {
        try {
          checkId('task', input, 'BACKLOG.md:7');
        } catch (err) {
          return err as InvalidIdError;
        }
        assert.fail(`accepted ${JSON.stringify(input)}`);
      })();
      assert.ok(e instanceof InvalidIdError);
      assert.match(e.message, why);
      assert.ok(e.message.startsWith(`BACKLOG.md:7: invalid task id ${quoteId(input)}`), e.message);
    }
    assert.equal(idProblem('patch_' + 'x'.repeat(150), 'patch'), null, 'patch ids carry their task id and a stamp');
  });

  it('property: whatever an id is, the file named after it stays directly in its folder; a non-id is refused', () => {
    const dir = path.join('/tmp', 'ralph', '.ralph', 'commits', 'pending');
    // Half ids, half anything (separators, dots, NUL, unicode), so both branches are exercised.
    const anyText = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,30}$/),
      fc.string({ maxLength: 40, unit: 'binary' }),
      fc.constantFrom('..', '.', '../x', 'a/../b', 'x\0', 'C:\\x', '/abs'),
    );
    fc.assert(
      fc.property(anyText, anyText, (task, agent) => {
        const ok = isId(task, 'task') && isId(agent, 'agent');
        let file: string | null = null;
        try {
          file = idFilePath(dir, [['task', task], ['agent', agent], ['part', '20261129'], 3], '.patch');
        } catch (e) {
          assert.ok(e instanceof InvalidIdError);
        }
        assert.equal(file !== null, ok);
        if (file !== null) {
          assert.equal(path.dirname(file), dir);
          assert.equal(path.basename(file), `${task}_${agent}_20261129_3.patch`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('given a task or patch event with an id that is not one, then domainEvent refuses it', () => {
    assert.throws(
      () => domainEvent('task.claimed', '../x', 'a', { old_status: 'pending', new_status: 'claimed' }),
      (e: unknown) => e instanceof InvalidIdError && e.kind === 'task',
    );
    assert.throws(
      () => domainEvent('patch.queued', 'patch_ok_1', 'a', { task_id: 'a/b', patch_path: 'p', created_by: 'w' }),
      (e: unknown) => e instanceof InvalidIdError && e.input === 'a/b',
    );
    assert.equal(idFileName([['part', 'prop'], ['task', 'W1-005'], 2], '.json'), 'prop_W1-005_2.json');
  });
});
