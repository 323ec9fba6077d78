// The tests' one polling wait, for state that changes on its own (a process exiting, a
// store's timer, a view updating) where there is no event a test can await.

/** Resolves once `cond` holds (checked every `everyMs`); throws naming `what` after `timeoutMs`. */
export async function waitUntil(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
