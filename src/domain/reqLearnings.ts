// REQ-mode learnings (seed 001's table): permanent ones (architecture decisions, interface
// conventions) are always passed on; contextual ones (implementation details, one-off
// gotchas) travel in a sliding window of the last 3 and age out, unless they qualify as
// permanent: referenced by at least 2 REQs, touching an interface or data structure, or
// marked by the user. Pure.
import type { LearningKind } from './reqEvents';

export interface Learning {
  readonly text: string;
  readonly kind: LearningKind;
  /** The REQ that recorded it. */
  readonly source: string;
  readonly why: string | null;
}

/** How many contextual learnings a REQ's context carries. */
export const CONTEXTUAL_WINDOW = 3;

/** The contextual learnings passed on: the last 3 that are still contextual. */
export function contextualWindow(all: readonly Learning[]): Learning[] {
  return all.filter((l) => l.kind === 'contextual').slice(-CONTEXTUAL_WINDOW);
}

// Interfaces and data structures, in the words learnings use (English and the seed's Chinese).
const INTERFACE_WORDS =
  /\b(interface|interfaces|api|apis|schema|schemas|type|types|data structure|data model|contract|signature|endpoint|table|column|field|fields|export|exports)\b|接口|数据结构/i;

/** Whether a learning is about an interface or a data structure. */
export function touchesInterface(text: string): boolean {
  return INTERFACE_WORDS.test(text);
}

const norm = (s: string): string => s.toLowerCase().replace(/\s+/g, ' ').trim();

export interface ClassifiedLearning {
  readonly text: string;
  readonly kind: LearningKind;
  readonly why: string | null;
}

/**
 * The learnings of one REQ's answer as they are recorded: tagged permanent stays permanent,
 * contextual becomes permanent when it touches an interface or data structure, or when an
 * earlier REQ recorded the same learning (referenced by 2 REQs). `promote` lists earlier
 * contextual learnings this answer referenced (by their text), which become permanent now.
 */
export function classifyLearnings(
  reqId: string,
  answer: readonly { readonly text: string; readonly kind: LearningKind }[],
  referenced: readonly string[],
  earlier: readonly Learning[],
): { record: ClassifiedLearning[]; promote: { text: string; why: string }[] } {
  const record: ClassifiedLearning[] = [];
  const promote: { text: string; why: string }[] = [];
  const promoted = new Set<string>();
  const promoteEarlier = (l: Learning, why: string): void => {
    if (l.kind !== 'contextual' || promoted.has(l.text)) return;
    promoted.add(l.text);
    promote.push({ text: l.text, why });
  };
  for (const a of answer) {
    const text = a.text.trim();
    if (text === '') continue;
    const same = earlier.find((l) => norm(l.text) === norm(text) && l.source !== reqId);
    if (same) {
      // Already known: a second REQ recording it is a reference, not a new learning.
      promoteEarlier(same, `referenced by ${same.source} and ${reqId}`);
      continue;
    }
    if (a.kind === 'permanent') record.push({ text, kind: 'permanent', why: 'tagged permanent' });
    else if (touchesInterface(text)) record.push({ text, kind: 'permanent', why: 'touches an interface or data structure' });
    else record.push({ text, kind: 'contextual', why: null });
  }
  for (const r of referenced) {
    const l = earlier.find((x) => norm(x.text) === norm(r) && x.source !== reqId);
    if (l) promoteEarlier(l, `referenced by ${l.source} and ${reqId}`);
  }
  return { record, promote };
}
