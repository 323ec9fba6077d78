// Given/when/then for the domain's deciders, in the shape of emmett's DeciderSpecification:
// the given events are stamped as the store would and folded into state with the
// aggregates' evolve functions, the command decides on that state, and the test states the
// whole events it expects (types, entities, actors and data), compared deep-equal.
import assert from 'node:assert/strict';
import type { DomainEvent, RecordedEvent } from '../../src/domain/events';

export interface DeciderSpecification<S> {
  given(events: readonly DomainEvent[]): When<S>;
}

export interface When<S> {
  /** The command: reads the state folded from the given events, returns the events it decides. */
  when(decide: (state: S) => readonly DomainEvent[]): Then<S>;
}

export interface Then<S> {
  /** The decided events are exactly these; returns the state with them folded in. */
  then(expected: readonly DomainEvent[]): S;
  /** The command decides nothing. */
  thenNothing(): void;
  /** The command refuses with this error (matched as node:assert's `throws` does). */
  thenThrows(expected: assert.AssertPredicate): void;
}

export interface DeciderSpecOptions<S> {
  /** A fresh state for each test. */
  readonly initial: () => S;
  readonly evolve: (state: S, event: RecordedEvent) => S;
  /** The time the store stamps the events with; default 2026-11-29T10:00:00.000Z. */
  readonly ts?: string;
}

let seq = 0;

/** Stamps events as the store does (id, time, run). */
export function recordEvents(events: readonly DomainEvent[], ts = '2026-11-29T10:00:00.000Z'): RecordedEvent[] {
  return events.map((e) => ({ ...e, event_id: `evt_${String(++seq).padStart(8, '0')}`, ts, run_id: 'run_test' }) as RecordedEvent);
}

export function deciderSpecification<S>(options: DeciderSpecOptions<S>): DeciderSpecification<S> {
  const fold = (state: S, events: readonly DomainEvent[]): S => recordEvents(events, options.ts).reduce(options.evolve, state);
  return {
    given: (history) => ({
      when: (decide) => {
        const state = fold(options.initial(), history);
        return {
          then(expected) {
            const decided = decide(state);
            assert.deepEqual(decided, expected);
            return fold(state, decided);
          },
          thenNothing() {
            assert.deepEqual(decide(state), []);
          },
          thenThrows(expected) {
            assert.throws(() => decide(state), expected);
          },
        };
      },
    }),
  };
}
