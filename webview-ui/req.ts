// The monitor's REQ section (REQ mode): progress by topological level, the REQ being built
// with its round and verification layers, recent learnings, blocked REQs and why. Shown only
// when the project has a specification.yaml (the snapshot's `req` is null otherwise).
import type { ReqSection } from '../src/protocol/monitor.js';
import { fill, h } from './dom.js';
import { int } from './format.js';

/** A hidden block until a snapshot has a REQ section. */
export function buildReqBlock(): HTMLElement {
  return h(
    'section',
    { className: 'card req', id: 'req', hidden: true, 'aria-labelledby': 'req-title' },
    h('h2', { className: 'card-title', id: 'req-title' }, 'Requirements'),
    h('div', { className: 'block-body' }),
  );
}

/** The agent's part of the round: writing, done (a layer ran), or the round failed before any layer. */
function agentState(c: NonNullable<ReqSection['current']>): string {
  if (c.step === 'agent') return 'running';
  return c.step === 'commit' || c.layers.some((l) => l.state !== 'waiting') ? 'passed' : 'failed';
}

export function renderReq(block: HTMLElement, r: ReqSection | null): void {
  block.hidden = r === null;
  const el = block.lastElementChild;
  if (r === null || !el) return;
  if (r.problem !== null) return fill(el, h('p', { className: 'bad', id: 'req-problem' }, r.problem));
  const c = r.current;
  fill(
    el,
    h(
      'div',
      { className: 'big-row' },
      h(
        'div',
        { className: 'big' },
        h('span', { className: 'big-value', id: 'req-done' }, `${int(r.done)}/${int(r.total)}`),
        h('span', { className: 'big-label' }, 'REQs done'),
      ),
      h(
        'span',
        { className: 'share' },
        h('span', { id: 'req-state' }, r.state),
        h('span', { className: 'muted', id: 'req-iteration' }, ` · iteration ${int(r.iteration)}/${int(r.maxIterations)}`),
      ),
    ),
    h('vscode-progress-bar', { 'aria-label': 'REQs done', max: String(Math.max(1, r.total)), value: String(r.done) }),
    h(
      'ul',
      { className: 'legend', 'aria-label': 'REQs done by level', id: 'req-levels' },
      ...r.levels.map((l, i) =>
        h('li', { className: l.done === l.total ? 'good' : '' }, `Level ${i} `, h('span', { className: 'n' }, `${l.done}/${l.total}`)),
      ),
      h('li', {}, `${int(r.pending)} pending · ${int(r.blocked)} blocked · ${int(r.skipped)} skipped`),
    ),
    r.cycle ? h('p', { className: 'bad', id: 'req-cycle' }, `Dependency cycle: ${r.cycle.join(' → ')}`) : null,
    c
      ? h(
          'div',
          { className: 'req-current', id: 'req-current' },
          h('strong', {}, c.id),
          ` ${c.title} · round ${c.round}/${c.rounds} · `,
          h(
            'span',
            { className: 'req-layers', 'aria-label': `step ${c.step}` },
            h('span', { className: `req-layer ${agentState(c)}` }, 'agent'),
            ...c.layers.map((l) => h('span', { className: `req-layer ${l.state}`, title: l.state, 'data-layer': l.layer }, l.layer)),
          ),
          c.lastFailure
            ? h('div', { className: 'muted', title: c.lastFailure }, `previous round: ${c.lastFailure.split('\n')[0] ?? ''}`)
            : null,
        )
      : null,
    r.blockedReqs.length > 0
      ? h(
          'ul',
          { className: 'req-blocked', id: 'req-blocked', 'aria-label': 'Blocked REQs' },
          ...r.blockedReqs.map((b) =>
            h(
              'li',
              { 'data-req': b.id },
              h('strong', { className: 'bad' }, b.auto ? 'blocked(auto)' : 'blocked'),
              ` ${b.id} ${b.title}: ${b.why}`,
              b.options.length > 0 ? h('span', { className: 'muted' }, ` — decide: ${b.options.join(' / ')}`) : null,
            ),
          ),
        )
      : null,
    r.learnings.length > 0
      ? h(
          'ul',
          { className: 'req-learnings', id: 'req-learnings', 'aria-label': `Recent learnings (${r.permanentLearnings} permanent)` },
          ...r.learnings.map((l) => h('li', {}, h('span', { className: 'muted' }, `${l.kind} · ${l.source}: `), l.text)),
        )
      : null,
  );
}
