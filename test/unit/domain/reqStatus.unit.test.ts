// REQ mode's pure state: the fold of req.* events over a specification, blocked(auto) for
// dependents, the seed's status contract and its invariants, learnings and their promotion.
import assert from 'node:assert/strict';
import { domainEvent } from '../../../src/domain/events';
import type { DomainEvent } from '../../../src/domain/events';
import { REQ_RUN_ENTITY } from '../../../src/domain/reqEvents';
import { foldReqView, reqStatusProblems, reqStatusReport, reqSummaryLine } from '../../../src/domain/reqStatus';
import type { ReqItem } from '../../../src/domain/reqStatus';
import { classifyLearnings, contextualWindow, touchesInterface } from '../../../src/domain/reqLearnings';
import type { Learning } from '../../../src/domain/reqLearnings';
import { markLearningPermanent } from '../../../src/domain/reqDecide';
import { record } from './given';

const req = (id: string, deps: string[] = [], priority = 1): ReqItem => ({
  id,
  description: `Build ${id}`,
  acceptance_criteria: [{ id: `AC-${id.slice(4)}-01`, criteria: 'works' }],
  priority,
  depends_on: deps,
  status: 'pending',
});

// A <- B <- C, D independent
const REQS = [req('REQ-001'), req('REQ-002', ['REQ-001']), req('REQ-003', ['REQ-002']), req('REQ-004')];
const BUILD = { order: ['REQ-001', 'REQ-004', 'REQ-002', 'REQ-003'], layers: [['REQ-001', 'REQ-004'], ['REQ-002'], ['REQ-003']] };

const started = (id: string, iteration: number, round = 1): DomainEvent =>
  domainEvent('req.started', id, 'req', { iteration, round, title: id, worktree: '/wt' });
const runStarted = (resume = false): DomainEvent =>
  domainEvent('req.run_started', REQ_RUN_ENTITY, 'req', {
    spec_file: 'specification.yaml',
    order: BUILD.order,
    layers: BUILD.layers,
    max_iterations: 15,
    resume,
  });

function view(events: DomainEvent[]) {
  return foldReqView(REQS, BUILD, record(events), 15);
}

describe('domain/reqStatus', () => {
  it('given no events, then every REQ is pending, the run idle and the contract holds', () => {
    const r = reqStatusReport(view([]));
    assert.deepEqual(r.requirements, { total: 4, done: 0, pending: 4, blocked: 0, skipped: 0 });
    assert.equal(r.status, 'idle');
    assert.equal(r.skill_name, 'ralph-loop');
    assert.equal(r.version, '2.0.0');
    assert.deepEqual(r.order, BUILD.order);
    assert.deepEqual(reqStatusProblems(r), []);
  });

  it('given REQ-001 blocked, then REQ-002 and REQ-003 are blocked(auto) by it and REQ-004 stays pending', () => {
    const v = view([
      runStarted(),
      started('REQ-001', 1),
      domainEvent('req.blocked', 'REQ-001', 'req', {
        kind: 'retries',
        reason: '3 rounds failed',
        options: ['skip', 'manual', 'stop', 'rollback'],
        rounds: 3,
      }),
    ]);
    const byId = Object.fromEntries(v.rows.map((r) => [r.id, r]));
    assert.equal(byId['REQ-001']?.status, 'blocked');
    assert.equal(byId['REQ-002']?.status, 'blocked_auto');
    assert.equal(byId['REQ-002']?.blockedBy, 'REQ-001');
    assert.equal(byId['REQ-003']?.status, 'blocked_auto');
    assert.equal(byId['REQ-003']?.blockedBy, 'REQ-001', 'transitively: the REQ that is really blocked');
    assert.equal(byId['REQ-004']?.status, 'pending');
    const r = reqStatusReport(v);
    assert.deepEqual(r.requirements, { total: 4, done: 0, pending: 1, blocked: 3, skipped: 0 });
    assert.deepEqual(reqStatusProblems(r), []);
  });

  it('given done, skipped, reset and a finished run, then counts, iteration and terminal state follow', () => {
    const events = [
      runStarted(),
      started('REQ-001', 1),
      domainEvent('req.done', 'REQ-001', 'req', { commit: 'abcdef1234', patch_id: 'p1', title: 'x', round: 1 }),
      started('REQ-004', 2),
      domainEvent('req.skipped', 'REQ-004', 'req', { reason: 'user' }),
      started('REQ-002', 3),
      started('REQ-002', 3, 2),
      domainEvent('req.run_finished', REQ_RUN_ENTITY, 'req', { state: 'PARTIAL', iteration: 3, summary: '' }),
    ];
    const v = view(events);
    const r = reqStatusReport(v);
    assert.deepEqual(r.requirements, { total: 4, done: 1, pending: 2, blocked: 0, skipped: 1 });
    assert.equal(r.iteration, 3, 'a retry round is not a new iteration');
    assert.equal(r.status, 'PARTIAL');
    assert.equal(reqSummaryLine(r), '1/4 done, 0 blocked, 1 skipped, 2 pending');
    assert.equal(r.reqs.find((q) => q.id === 'REQ-001')?.commit, 'abcdef1234');
    // a resume keeps the iteration count; a fresh run starts again at 0
    assert.equal(reqStatusReport(view([...events, runStarted(true)])).iteration, 3);
    assert.equal(reqStatusReport(view([...events, runStarted(false)])).iteration, 0);
  });

  it('given a broken count or an iteration past the limit, then the invariants name it', () => {
    const r = reqStatusReport(view([]));
    assert.match(reqStatusProblems({ ...r, requirements: { ...r.requirements, done: 1 } }).join(), /!= total 4/);
    assert.match(reqStatusProblems({ ...r, iteration: 16 }).join(), /iteration 16 > max_iterations 15/);
  });

  it('given a req event with an id that breaks the grammar, then the event is refused', () => {
    assert.throws(() => domainEvent('req.skipped', '../x', 'req', { reason: 'x' }), /invalid requirement id '..\/x'/);
  });
});

describe('domain/reqLearnings', () => {
  const L = (text: string, source: string, kind: 'permanent' | 'contextual' = 'contextual'): Learning => ({
    text,
    kind,
    source,
    why: null,
  });

  it('given five contextual learnings, then the window passes on the last 3', () => {
    const all = ['a', 'b', 'c', 'd', 'e'].map((t) => L(`gotcha ${t}`, 'REQ-001'));
    assert.deepEqual(
      contextualWindow([...all, L('perm', 'REQ-001', 'permanent')]).map((l) => l.text),
      ['gotcha c', 'gotcha d', 'gotcha e'],
    );
  });

  it('given a tagged, an interface and a plain learning, then two are permanent and one contextual', () => {
    const { record: rec } = classifyLearnings(
      'REQ-002',
      [
        { text: 'Auth middleware must run before validation', kind: 'permanent' },
        { text: 'The User interface has email and password_hash', kind: 'contextual' },
        { text: 'migration files must be in src/migrations/', kind: 'contextual' },
      ],
      [],
      [],
    );
    assert.deepEqual(
      rec.map((l) => l.kind),
      ['permanent', 'permanent', 'contextual'],
    );
    assert.ok(touchesInterface('改变接口') && touchesInterface('数据结构') && !touchesInterface('run npm ci first'));
  });

  it('given a contextual learning referenced by a second REQ, then it is promoted, not recorded twice', () => {
    const earlier = [L('migration files must be in src/migrations/', 'REQ-001')];
    const same = classifyLearnings('REQ-002', [{ text: 'Migration files must be in  src/migrations/', kind: 'contextual' }], [], earlier);
    assert.deepEqual(same.record, []);
    assert.deepEqual(same.promote, [{ text: earlier[0]!.text, why: 'referenced by REQ-001 and REQ-002' }]);
    const ref = classifyLearnings('REQ-003', [], ['migration files must be in src/migrations/'], earlier);
    assert.equal(ref.promote.length, 1);
    assert.deepEqual(classifyLearnings('REQ-001', [], [earlier[0]!.text], earlier).promote, [], 'its own REQ is not a second one');
  });

  it('given learning events, then the view moves a promoted one to permanent', () => {
    const v = view([
      domainEvent('req.learning', 'REQ-001', 'req', { kind: 'contextual', text: 'gotcha' }),
      domainEvent('req.learning_promoted', 'REQ-002', 'req', { text: 'gotcha', why: 'referenced by REQ-001 and REQ-002' }),
    ]);
    const r = reqStatusReport(v);
    assert.deepEqual(r.learnings, { permanent: ['gotcha'], contextual: [] });
  });

  it('given the user marks a learning by a unique part of its text, then it is promoted with who marked it; unknown, ambiguous or permanent ones are refused', () => {
    const v = view([
      domainEvent('req.learning', 'REQ-001', 'req', { kind: 'contextual', text: 'tests run in file-name order' }),
      domainEvent('req.learning', 'REQ-002', 'req', { kind: 'contextual', text: 'tests must be small' }),
      domainEvent('req.learning', 'REQ-002', 'req', { kind: 'permanent', text: 'one module per function' }),
    ]);
    const [e] = markLearningPermanent(v, 'FILE-NAME order', 'cli:ann', 'f.json');
    assert.equal(e?.type, 'req.learning_promoted');
    assert.equal(e?.entity_id, 'REQ-001', 'the REQ that recorded it');
    assert.deepEqual(e?.data, { text: 'tests run in file-name order', why: 'marked permanent by cli:ann', file: 'f.json' });
    const after = reqStatusReport(
      foldReqView(
        REQS,
        BUILD,
        record([...v.learnings.map((l) => domainEvent('req.learning', l.source, 'req', { kind: l.kind, text: l.text })), e!]),
        15,
      ),
    );
    assert.deepEqual(after.learnings.contextual, ['tests must be small']);
    assert.throws(() => markLearningPermanent(v, 'nothing like it', 'u'), /no learning matches 'nothing like it'/);
    assert.throws(() => markLearningPermanent(v, 'tests', 'u'), /matches 2 learnings: give more of the text/);
    assert.throws(() => markLearningPermanent(v, 'one module per function', 'u'), /is permanent already/);
    assert.throws(() => markLearningPermanent(v, '  ', 'u'), /no learning text given/);
  });
});
