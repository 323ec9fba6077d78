// The time slider: a range over the log's events (1..total); moving it asks the host for the
// project as it was after that many events, and "Live" returns to the present. While the user
// drags, at most one request is in flight: the newest position is sent when the last answer
// arrives, so a fast drag never queues up replays.
import type { Timeline } from '../src/protocol/monitor.js';
import { fill, h } from './dom.js';
import { clock } from './format.js';
import { icon } from './icons.js';

export interface TimelineActions {
  /** Asks for the moment (null = live); `done` runs when the host answered. */
  travel(index: number | null, done: (ok: boolean) => void): void;
}

export interface TimelineSection {
  readonly root: HTMLElement;
  render(t: Timeline): void;
}

export function buildTimeline(actions: TimelineActions): TimelineSection {
  const slider = h('input', {
    type: 'range',
    id: 'time-slider',
    min: '1',
    max: '1',
    step: '1',
    value: '1',
    'aria-label': 'Time travel: show the project after this many events of the log',
  });
  const label = h('span', { className: 'time-label', id: 'time-label', 'aria-live': 'polite' }, 'live');
  const live = h('vscode-button', { id: 'time-live', secondary: true, title: 'Back to the live state' }, 'Live');
  const root = h(
    'div',
    { className: 'timeline', id: 'timeline', role: 'group', 'aria-label': 'Time travel' },
    icon('history'),
    slider,
    label,
    live,
  );
  let inFlight = false;
  let queued: number | null | undefined;
  let current: Timeline = { total: 0, firstTs: null, lastTs: null, at: null };

  const send = (index: number | null): void => {
    if (inFlight) {
      queued = index;
      return;
    }
    inFlight = true;
    actions.travel(index, () => {
      inFlight = false;
      const next = queued;
      queued = undefined;
      if (next !== undefined) send(next);
    });
  };
  slider.addEventListener('input', () => {
    const v = Number(slider.value);
    // The right end is the present: following it keeps the page live.
    send(v >= current.total ? null : v);
  });
  live.addEventListener('click', () => send(null));

  return {
    root,
    render(t: Timeline): void {
      current = t;
      root.classList.toggle('past', t.at !== null);
      slider.max = String(Math.max(1, t.total));
      slider.disabled = t.total < 2;
      // Leave the thumb where the user drags it until the answers catch up.
      if (!inFlight && queued === undefined) slider.value = String(t.at?.index ?? Math.max(1, t.total));
      live.toggleAttribute('disabled', t.at === null);
      fill(
        label,
        t.at === null
          ? `live · ${t.total} event${t.total === 1 ? '' : 's'}`
          : h('span', {}, 'as it was at ', h('strong', { title: t.at.ts }, clock(t.at.ts)), ` · event ${t.at.index} of ${t.total}`),
      );
    },
  };
}
