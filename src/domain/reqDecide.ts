// The user's decision on a blocked REQ (seed 001: skip / manual / stop / rollback; for a REQ
// too large: split / skip / continue), as the events it appends. Pure: the caller gives the
// view (domain/reqStatus.ts) and appends what this returns, or shows the error.
import { domainEvent } from './events';
import type { DomainEvent } from './events';
import { quoteId } from './ids';
import type { ReqDecision } from './reqEvents';
import type { ReqView } from './reqStatus';

export class ReqDecisionError extends Error {
  override readonly name = 'ReqDecisionError';
}

/** What each decision does, for messages and the VS Code actions. */
export const REQ_DECISION_HELP: Record<ReqDecision, string> = {
  skip: 'skip it (and the REQs that depend on it); the run goes on',
  manual: 'fix it by hand in its worktree; the next `ralph req resume` verifies your fix (L1-L3) and commits it',
  stop: 'stop the run after the REQ in progress (PARTIAL)',
  rollback: 'throw its attempt away and return it to pending, as at the checkpoint before it',
  split: 'split it in specification.yaml into smaller REQs; it stays blocked until the file changes',
  continue: 'give it another 3 rounds, from where its worktree is',
};

/** The events of `decision` on `reqId`, or a ReqDecisionError saying why it does not apply. */
export function decideReq(
  view: ReqView,
  reqId: string,
  decision: ReqDecision,
  actor: string,
  opts: { readonly note?: string | null | undefined; readonly file?: string } = {},
): DomainEvent[] {
  const row = view.rows.find((r) => r.id === reqId);
  if (!row) throw new ReqDecisionError(`no requirement ${quoteId(reqId)} in the specification`);
  const decided = domainEvent('req.decided', reqId, actor, { decision, note: opts.note ?? null, file: opts.file ?? null });
  if (decision === 'stop') return [decided];
  if (row.status !== 'blocked' && !(row.status === 'manual' && decision !== 'manual'))
    throw new ReqDecisionError(
      `${reqId} is ${row.status === 'blocked_auto' ? `blocked(auto) by ${row.blockedBy ?? '?'}: decide on that one` : row.status}, not blocked`,
    );
  if (row.options.length > 0 && !row.options.includes(decision) && row.status === 'blocked')
    throw new ReqDecisionError(`${reqId} is blocked (${row.blockKind ?? '?'}); decide one of: ${row.options.join(', ')}`);
  switch (decision) {
    case 'skip': {
      // Skipped with every REQ that (transitively) waits on it: they cannot be built without it.
      const waiting = view.rows.filter((r) => r.status === 'blocked_auto' && r.blockedBy === reqId);
      return [
        decided,
        domainEvent('req.skipped', reqId, actor, { reason: `skipped by ${actor}`, because: null }),
        ...waiting.map((r) =>
          domainEvent('req.skipped', r.id, actor, { reason: `depends on ${reqId}, which was skipped`, because: reqId }),
        ),
      ];
    }
    case 'manual':
      return [decided];
    case 'rollback':
      return [decided, domainEvent('req.reset', reqId, actor, { reason: `rolled back by ${actor}`, keep_worktree: false })];
    case 'continue':
      return [decided, domainEvent('req.reset', reqId, actor, { reason: `continued by ${actor}`, keep_worktree: true })];
    case 'split':
      return [decided];
  }
}

/**
 * The user marks a contextual learning permanent (seed 001's third promotion rule). `text`
 * is the learning's text or a unique part of it; the event's entity is the REQ that recorded it.
 */
export function markLearningPermanent(view: ReqView, text: string, actor: string, file: string | null = null): DomainEvent[] {
  const want = text.replace(/\s+/g, ' ').trim().toLowerCase();
  if (want === '') throw new ReqDecisionError('no learning text given');
  const norm = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();
  const exact = view.learnings.filter((l) => norm(l.text) === want);
  const found = exact.length > 0 ? exact : view.learnings.filter((l) => norm(l.text).includes(want));
  const contextual = found.filter((l) => l.kind === 'contextual');
  if (found.length === 0) throw new ReqDecisionError(`no learning matches '${text.slice(0, 80)}'`);
  if (contextual.length === 0) throw new ReqDecisionError(`'${found[0]?.text.slice(0, 80) ?? text}' is permanent already`);
  if (contextual.length > 1)
    throw new ReqDecisionError(`'${text.slice(0, 80)}' matches ${contextual.length} learnings: give more of the text`);
  const l = contextual[0] as (typeof contextual)[number];
  return [domainEvent('req.learning_promoted', l.source, actor, { text: l.text, why: `marked permanent by ${actor}`, file })];
}
