// What this run remembers about the patches it queued, between queueing and promotion: the
// commit their gates ran on, the gate results, which were approved, and which wait on the
// user's checkout. The store has the durable part (the `patch.gates` and `patch.waiting`
// notes); these maps answer for patches queued by this run without a store read.
import type { GateResult } from './gates';

export interface WaitingPromotion {
  readonly taskId: string;
  readonly patchPath: string;
  readonly reason: string;
}

export class PatchRecords {
  /** The commit each queued patch's gates ran on (also in its `patch.gates` note as `base_commit`). */
  readonly bases = new Map<string, string>();
  /** Gate results of queued patches, for the judge (patchId -> results). */
  readonly gates = new Map<string, readonly GateResult[]>();
  /** Patches a judge or a human approved (and their re-based successors), for the failure wording. */
  readonly approved = new Set<string>();
  /** Patches whose promotion waits on the user's checkout (patchId -> task). */
  readonly waiting = new Map<string, WaitingPromotion>();
}
