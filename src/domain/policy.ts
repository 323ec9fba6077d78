// The policy engine: what happens to a verified change of a given risk tier.
// Tier 0/1 promote, tier 2 defer to the independent judge, tier 3 decompose; a change the
// judge already approved is promoted. A change to Ralph's own control files is blocked
// whatever its tier and whoever approved it: no patch may change the rules it is judged by.
import { CONTROL_FILES_REASON, type RiskTier } from './risk';

export type PolicyDecision = 'promote' | 'defer' | 'decompose' | 'block';

export interface PolicyVerdict {
  readonly decision: PolicyDecision;
  readonly reason: string;
  readonly risk_tier: RiskTier;
}

export function decidePolicy(tier: RiskTier, opts: { approvedByJudge?: boolean; controlFiles?: readonly string[] } = {}): PolicyVerdict {
  const control = opts.controlFiles ?? [];
  if (control.length > 0) return { decision: 'block', reason: `${CONTROL_FILES_REASON} (${control.join(', ')})`, risk_tier: tier };
  if (opts.approvedByJudge && tier <= 2) return { decision: 'promote', reason: 'approved by the independent judge', risk_tier: tier };
  switch (tier) {
    case 0:
      return { decision: 'promote', reason: 'tier 0 (trivial): auto-promote after deterministic verification', risk_tier: tier };
    case 1:
      return { decision: 'promote', reason: 'tier 1 (normal): auto-promote after full verification', risk_tier: tier };
    case 2:
      return { decision: 'defer', reason: 'tier 2 (sensitive): defer to the independent judge', risk_tier: tier };
    case 3:
      return { decision: 'decompose', reason: 'tier 3 (restricted): decompose into smaller tier 1-2 tasks', risk_tier: tier };
  }
}
