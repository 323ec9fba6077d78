// The harness: the machinery the primary and the workers share, built once per run from
// one context. It keeps no record of its own that the store could answer: what it knows
// about queued patches is in promotion_view. Each part is a module named for what it owns:
//   invocation.ts     agent runs under the budget guards, metrics, agent.* notifications
//   verification.ts   the harness's gates and the captured patch
//   promotion.ts      capture -> patch.queued -> risk -> policy -> promote | defer | decompose, rebase
//   latePromotion.ts  approved or waiting patches, re-verified on a moved branch (lateVerify.ts)
//   judge.ts          the independent review of deferred patches
//   decomposition.ts  tier 3: smaller tasks proposed instead of the patch
import { harnessContext } from './context';
import type { HarnessContext, HarnessDeps } from './context';
import { Decomposition } from './decomposition';
import { Invocation } from './invocation';
import { Judge } from './judge';
import { LatePromotion } from './latePromotion';
import { Promotion } from './promotion';
import { Verification } from './verification';

export type { HarnessDeps, HarnessTotals } from './context';

export class Harness {
  readonly ctx: HarnessContext;
  readonly invocation: Invocation;
  readonly verification: Verification;
  readonly decomposition: Decomposition;
  readonly promotion: Promotion;
  readonly late: LatePromotion;
  readonly judge: Judge;

  constructor(deps: HarnessDeps) {
    this.ctx = harnessContext(deps);
    this.invocation = new Invocation(this.ctx);
    this.verification = new Verification(this.ctx);
    this.decomposition = new Decomposition(this.ctx, this.invocation);
    this.promotion = new Promotion(this.ctx, this.verification, this.decomposition);
    this.late = new LatePromotion(this.ctx, this.promotion, this.verification);
    this.judge = new Judge(this.ctx, this.invocation, this.late);
  }
}
