// An event as the store keeps it: the row shape of the public `events` table. The domain's
// typed events (events.ts) convert to and from these rows; the store's port (store/types.ts)
// re-exports them, so the domain depends on nothing below it.

/** An event as a command produces it, before the store stamps id, time and run. */
export interface NewEvent {
  readonly entity_type: string;
  readonly entity_id: string;
  readonly event_type: string;
  readonly actor: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** An event as stored: the row of the public `events` table, payload parsed. */
export interface StoredEvent extends NewEvent {
  /** Unique and sortable in append order at any rate. */
  readonly event_id: string;
  /** ISO 8601 UTC with milliseconds, e.g. 2026-11-29T17:26:33.123Z. */
  readonly ts: string;
  readonly run_id: string;
}
