// The exthost suites' one wait: a probe of the extension's state, polled until it holds
// (the views and sessions update on their own events, which a test cannot await directly).

/** Resolves once `probe` holds; throws naming `what` after `timeoutMs`. */
export async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
