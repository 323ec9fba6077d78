// The exthost suites' one wait: a probe of the extension's state, polled until it holds
// (the views and sessions update on their own events, which a test cannot await directly).
// The kit's wait, with a longer default: a cold extension host is slow to start.
import { waitUntil } from '../../kit/wait';

/** Resolves once `probe` holds; throws naming `what` after `timeoutMs`. */
export function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  return waitUntil(what, probe, timeoutMs, 50);
}
