// REQ mode's block notifications (src/extension/notificationRules.ts reqBlockToasts, shown
// by ReqBlockNotifier): a REQ that becomes blocked is one warning with its open decisions as
// buttons, once; what was blocked before the window looked is left to the Requirements view.
import * as assert from 'node:assert/strict';
import { reqBlockToasts } from '../../../src/extension/notificationRules';

const SEED = ['skip', 'manual', 'stop', 'rollback'];

describe('extension: REQ block notifications', () => {
  const blocked = new Map([
    ['REQ-003', { reason: '3 rounds failed; last at L3', options: SEED }],
    [
      'REQ-006',
      { reason: 'REQ too large: 2 rounds timed out after 300 s; split it, skip it, or continue', options: ['split', 'skip', 'continue'] },
    ],
  ]);

  it('given the first read, then no toast: the view shows what was blocked already', () => {
    assert.deepEqual(reqBlockToasts(undefined, blocked), []);
  });

  it('given a REQ newly blocked after 3 rounds, then one warning naming it and why, with the four decisions as buttons', () => {
    assert.deepEqual(reqBlockToasts(new Set(), new Map([...blocked].slice(0, 1))), [
      { reqId: 'REQ-003', toast: { kind: 'warn', text: 'Ralph: REQ-003 is blocked: 3 rounds failed; last at L3', actions: SEED } },
    ]);
  });

  it('given one already shown and one too large newly blocked, then only the new one, with split / skip / continue', () => {
    const t = reqBlockToasts(new Set(['REQ-003']), blocked);
    assert.deepEqual(
      t.map((x) => [x.reqId, x.toast.actions]),
      [['REQ-006', ['split', 'skip', 'continue']]],
    );
    assert.match(t[0]?.toast.text ?? '', /^Ralph: REQ-006 is blocked: REQ too large/);
  });
});
