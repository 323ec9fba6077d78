// The chat operations' port over this window's engine session: reads from the store as the
// window sees it (refreshed first), writes through the engine's one command path (the inbox,
// applied at once by a short-lived writer when nobody runs the loop), and — when a loop
// (here or in another process) holds the writer lock — waits, bounded, for it to apply the
// command, so the answer says what became of it.
import { controlContext, type ControlContext } from '../../control/context';
import type { InboxCommand } from '../../control/inbox';
import type { RalphPort } from '../../mcp/operations';
import { inboxOutcome, NotInitializedError, type WriteOutcome } from '../../mcp/storeAccess';
import type { LockHolder } from '../../store';
import type { Engine } from '../../session/engine';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function enginePort(engine: Engine, opts: { waitMs?: number } = {}): RalphPort {
  const refresh = async (): Promise<void> => {
    engine.scheduleRefresh();
    await engine.settled();
  };
  return {
    get projectDir(): string {
      return engine.projectDir;
    },
    async read(): Promise<ControlContext> {
      const store = await engine.open();
      if (store === undefined) throw new NotInitializedError(engine.ralphDir);
      await refresh();
      const view = engine.view ?? store;
      return controlContext(view, { ralphDir: engine.ralphDir, projectDir: engine.projectDir });
    },
    async write(cmd: InboxCommand): Promise<WriteOutcome> {
      let o;
      try {
        o = await engine.submit(cmd);
      } catch (e) {
        if (e instanceof Error && e.name === 'CommandFailedError') {
          const reason = (e as Error & { reason?: string }).reason ?? e.message;
          return { state: 'failed', file: '', error: reason };
        }
        throw e;
      }
      if (o.via === 'applied') {
        await refresh();
        return { state: 'applied', file: o.file, by: 'here' };
      }
      const deadline = Date.now() + (opts.waitMs ?? 10_000);
      for (;;) {
        const done = inboxOutcome(engine.ralphDir, o.file);
        if (done) {
          await refresh();
          return done;
        }
        if (Date.now() >= deadline) return { state: 'queued', file: o.file, writer: o.writer === 'this-window' ? undefined : o.writer };
        await sleep(100);
      }
    },
    writer(): LockHolder | 'here' | undefined {
      const role = engine.role();
      if (role === 'writer') return 'here';
      return engine.externalWriter();
    },
  };
}
