// Policy: tier 0/1 promote, tier 2 defer, tier 3 decompose; an approved change promotes.
import assert from 'node:assert/strict';
import { decidePolicy } from '../../../src/domain/policy';

describe('domain/policy decidePolicy', () => {
  it('maps tiers to decisions', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((t) => decidePolicy(t as 0 | 1 | 2 | 3).decision),
      ['promote', 'promote', 'defer', 'decompose'],
    );
  });
  it('given the judge approved, tier 2 promotes; tier 3 still decomposes', () => {
    assert.equal(decidePolicy(2, { approvedByJudge: true }).decision, 'promote');
    assert.equal(decidePolicy(3, { approvedByJudge: true }).decision, 'decompose');
  });
  it('carries the tier and a reason', () => {
    const v = decidePolicy(2);
    assert.equal(v.risk_tier, 2);
    assert.match(v.reason, /judge/);
  });
  it("given Ralph's control files, then block whatever the tier and whoever approved", () => {
    for (const t of [0, 1, 2, 3] as const) {
      const v = decidePolicy(t, { approvedByJudge: true, controlFiles: ['ralph.config.json'] });
      assert.equal(v.decision, 'block');
      assert.match(v.reason, /agents may not change Ralph's configuration or state; change it yourself \(ralph\.config\.json\)/);
    }
  });
});
