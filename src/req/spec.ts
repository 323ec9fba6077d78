// The project's specification.yaml for REQ mode: read, validated (file, line, REQ, field) and
// ordered (Kahn by layers, priority then id; a cycle with its chain), before anything runs.
// Also the one writer of the file's `status:` fields, which keeps the user's comments and
// layout (the yaml document API edits the node in place) and writes atomically.
import { existsSync, readFileSync } from 'node:fs';
import { isMap, isSeq, parseDocument } from 'yaml';
import { writeFileAtomic } from '../shared/fs';
import { buildOrder, parseSpecification } from '../project/specification';
import type { Requirement, Specification, SpecificationError, DependencyCycleError } from '../project/specification';
import type { Result } from '../project/result';
import { err, ok } from '../project/result';

export interface OrderedSpecification {
  readonly spec: Specification;
  readonly order: readonly Requirement[];
  readonly layers: readonly (readonly Requirement[])[];
}

export type SpecProblem =
  | { readonly kind: 'missing'; readonly message: string }
  | { readonly kind: 'invalid'; readonly error: SpecificationError; readonly message: string }
  | { readonly kind: 'cycle'; readonly spec: Specification; readonly error: DependencyCycleError; readonly message: string };

/** Reads and orders `file` (its name as given is what messages show). */
export function loadSpecification(file: string, shownAs = file): Result<OrderedSpecification, SpecProblem> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return err({
      kind: 'missing',
      message:
        code === 'ENOENT'
          ? `${shownAs}: not found (REQ mode builds specification.requirements from it; see README "REQ mode")`
          : `${shownAs}: cannot be read: ${(e as Error).message}`,
    });
  }
  const parsed = parseSpecification(text, shownAs);
  if (!parsed.ok) return err({ kind: 'invalid', error: parsed.error, message: parsed.error.message });
  const ordered = buildOrder(parsed.value.requirements);
  if (!ordered.ok)
    return err({
      kind: 'cycle',
      spec: parsed.value,
      error: ordered.error,
      message: `${shownAs}: ${ordered.error.chain.join(' → ')}: dependency cycle; nothing runs until it is broken`,
    });
  return ok({ spec: parsed.value, order: ordered.value.order, layers: ordered.value.layers });
}

/** Sets `status:` of the given requirements in the file, leaving everything else as it is. */
export async function writeSpecStatuses(file: string, statuses: ReadonlyMap<string, string>): Promise<void> {
  if (!existsSync(file)) return; // not committed on the branch: the event log alone says it
  const text = readFileSync(file, 'utf8');
  const doc = parseDocument(text);
  const reqs = doc.getIn(['specification', 'requirements'], true);
  if (!isSeq(reqs)) return;
  let changed = false;
  for (const item of reqs.items) {
    if (!isMap(item)) continue;
    const id = item.get('id');
    if (typeof id !== 'string') continue;
    const next = statuses.get(id);
    if (next === undefined || item.get('status') === next) continue;
    item.set('status', next);
    changed = true;
  }
  if (changed) await writeFileAtomic(file, doc.toString());
}
