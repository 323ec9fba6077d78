// `ralph status` without opening the store: when the status image its last writer kept
// (domain/statusImage.ts) describes the store's files exactly as they are now, and can answer
// for this moment, the facts come from it through the same statusFactsFrom as the store's.
// No sql.js, no journal, no schema library: this is what `ralph status` loads first.
import * as path from 'node:path';
import type { SafetyFacts } from '../domain/safetyFacts';
import { statusFactsFrom } from '../domain/statusFacts';
import { imageSource } from '../domain/statusImage';
import { loopPositionFrom, type StatusFacts } from '../domain/views';
import { resolveStoreLocation } from '../store/storeUrl';
import { perDayBudgetOf } from './forecast';
import { readStateJson } from './stateJson';
import { currentStatusImage } from './statusImageFile';

// What prints the facts, whichever way they were found.
export { renderStatus } from '../domain/views';
export { safetyLines } from '../domain/safetyFacts';

export interface QuickStatus {
  readonly facts: StatusFacts;
  readonly safety: SafetyFacts;
}

/** The status of the project in `projectDir` as of `now` from its image; undefined when status must open the store. */
export function quickStatus(projectDir: string, now: Date, env: NodeJS.ProcessEnv = process.env): QuickStatus | undefined {
  // A project on a team store keeps its log elsewhere: an embedded image left from before is not its status.
  if (resolveStoreLocation(projectDir, env).kind !== 'embedded') return undefined;
  const ralphDir = path.join(projectDir, '.ralph');
  const image = currentStatusImage(ralphDir);
  const src = image && imageSource(image, now);
  if (image === undefined || src === undefined) return undefined;
  const facts = statusFactsFrom(src, loopPositionFrom(readStateJson(ralphDir)), now, () => perDayBudgetOf(projectDir));
  return { facts, safety: image.safety };
}
