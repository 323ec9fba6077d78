// How a `ralph` command gets the writer: it waits (bounded, with backoff) while another
// short-lived command holds the lock; beside a running loop it sends the command to the
// loop's inbox and waits to see it applied, printing what the direct command prints (the
// event id for emit-event); if the loop goes away first, it applies its own queued file.
// It never reports success for a command nobody will apply, and a command whose events
// are durable says so even when a later step fails (see exitCodes.ts).
import * as path from 'node:path';
import type { ControlContext } from '../control/context';
import { drainInbox, inboxCommandId, submitToInbox } from '../control/inbox';
import { StoreLockedError, type LockHolder } from '../store/errors';
import { EVENT_COLUMNS, rowToEvent, type EventRow } from '../store/eventRows';
import type { StoreMode, StoredEvent } from '../store/types';
import type { ParsedArgs } from './args';
import type { CliIo, CommandSpec } from './controlCommands';
// Only the type: importing exitCodes.ts at run time would make it a chunk shared with the
// entry point, and `ralph help` would load it; the dispatcher passes its table in.
import type { EXIT as ExitTable } from './exitCodes';

type ExitCodes = typeof ExitTable;

/**
 * How long a command waits for the line of short-lived commands to move (each holds the lock
 * well under a second; a command with others ahead waits for all their turns).
 */
export const LOCK_WAIT_MS = 10_000;
/** How long a command sent to a running loop's inbox waits to see it applied (the loop reads it as a file lands, and every second). */
export const APPLY_WAIT_MS = 30_000;

export type OpenControl = (
  mode: StoreMode,
  opts?: { lockWaitMs?: number; onLockWait?: (waitedMs: number, holder: LockHolder | undefined) => void },
) => Promise<ControlContext>;

/**
 * Thrown instead of waiting for a busy store when the caller asked for it (the warm process,
 * warmServer.ts): nothing was recorded, and the call runs in a process of its own, which
 * waits there, where Ctrl-C stops it. Told apart by name (run.ts, warmServer.ts), as
 * exitCodes.ts tells errors apart.
 */
export class StoreBusyHandBack extends Error {
  override readonly name = 'StoreBusyHandBack';
}

/** After this long waiting for the lock, the command says on stderr what it waits for (once). */
const SAY_WAITING_AFTER_MS = 500;

function who(h: LockHolder | undefined): string {
  return h ? `pid ${h.pid} on ${h.host}, run ${h.runId}` : 'a writer that is still starting';
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs the command against the writer, and closes it; a failure after durable events is exit 6. */
async function runAsWriter(spec: CommandSpec, ctx: ControlContext, parsed: ParsedArgs, io: CliIo, codes: ExitCodes): Promise<number> {
  const before = ctx.store.stats().eventsAcknowledged;
  let code: number;
  try {
    code = await spec.run(ctx, parsed, io);
  } catch (e) {
    await ctx.store.close().catch(() => undefined);
    return afterDurable(ctx, before, e, io, codes);
  }
  try {
    await ctx.store.close();
  } catch (e) {
    return afterDurable(ctx, before, e, io, codes);
  }
  return code;
}

/** Reports an error; if the command's events were already durable, says so and returns exit 6 (do not retry). */
function afterDurable(ctx: ControlContext, before: number, e: unknown, io: CliIo, codes: ExitCodes): number {
  const msg = e instanceof Error ? e.message : String(e);
  const durable = ctx.store.stats().eventsAcknowledged - before;
  if (durable <= 0) throw e;
  io.err(
    `ralph: the command was recorded (${durable} event(s) durable in .ralph/ralph.events.journal; the next open ` +
      `checkpoints them into ralph.db), then a later step failed: ${msg}\n` +
      'ralph: do not run the command again; fix the cause (`ralph repair` shows what is left)\n',
  );
  return codes.applied;
}

/**
 * Opens the writer for `spec` and runs it; beside a running loop, goes through its inbox.
 * With `handBack`, a store another short-lived writer holds is StoreBusyHandBack instead of
 * a wait in turn (the warm process hands such a call back to its caller).
 */
export async function runWithWriter(
  spec: CommandSpec,
  ralphDir: string,
  parsed: ParsedArgs,
  io: CliIo,
  open: OpenControl,
  codes: ExitCodes,
  handBack = false,
): Promise<number> {
  let ctx: ControlContext;
  let said = false;
  const onLockWait = (waited: number, holder: LockHolder | undefined): void => {
    if (said || waited < SAY_WAITING_AFTER_MS) return;
    said = true;
    io.err(
      `ralph: waiting for the store (locked by ${who(holder)}), in turn; giving up if it does not change hands for ${LOCK_WAIT_MS / 1000} s\n`,
    );
  };
  try {
    ctx = await open('writer', handBack ? { lockWaitMs: 0 } : { lockWaitMs: LOCK_WAIT_MS, onLockWait });
  } catch (e) {
    if (!(e instanceof StoreLockedError)) throw e;
    if (handBack && !e.holder?.drainsInbox) throw new StoreBusyHandBack(e.message);
    if (spec.store === 'prefer-writer') {
      const observer = await open('observer');
      try {
        return await spec.run(observer, parsed, io);
      } finally {
        await observer.store.close();
      }
    }
    if (!e.holder?.drainsInbox) {
      io.err(`ralph: ${e.message}\nralph: nothing was applied; run the command again once that process is done\n`);
      return codes.locked;
    }
    if (!spec.toInbox) {
      io.err(
        `ralph: a running loop holds the store (${who(e.holder)}), and \`ralph ${spec.name}\` cannot go through its inbox; ` +
          'nothing was applied. Stop the loop (`ralph stop`) and run it again.\n',
      );
      return codes.locked;
    }
    return viaInbox(spec, ralphDir, parsed, io, open, e.holder, codes);
  }
  return runAsWriter(spec, ctx, parsed, io, codes);
}

/**
 * Sends the command to the running loop's inbox and waits until it is applied (by that
 * loop, or by this process once the loop has let the lock go), then prints its result.
 */
async function viaInbox(
  spec: CommandSpec,
  ralphDir: string,
  parsed: ParsedArgs,
  io: CliIo,
  open: OpenControl,
  holder: LockHolder | undefined,
  codes: ExitCodes,
): Promise<number> {
  const command = await spec.toInbox?.(parsed);
  if (command === undefined) throw new Error(`${spec.name} has no inbox form`);
  const file = submitToInbox(ralphDir, command);
  const name = path.basename(file);
  const id = inboxCommandId(file);
  io.err(
    `ralph: a running loop (${who(holder)}) holds the store; sent to its inbox as .ralph/inbox/${name}, waiting for it to be applied\n`,
  );
  const deadline = Date.now() + APPLY_WAIT_MS;
  let observer: ControlContext | undefined;
  let pause = 20;
  try {
    for (;;) {
      observer ??= await open('observer');
      await observer.store.refresh();
      const applied = observer.store.appliedCommand(id);
      if (applied) {
        return await report(spec, parsed, io, observer, applied.outcome, eventsById(observer, applied.eventIds), codes);
      }
      // The loop may have stopped before draining: then apply the file ourselves, once.
      let writer: ControlContext | undefined;
      try {
        writer = await open('writer', { lockWaitMs: 0 });
      } catch (e) {
        if (!(e instanceof StoreLockedError)) throw e;
      }
      if (writer) {
        try {
          const prior = writer.store.appliedCommand(id);
          if (!prior) await drainInbox(writer, { only: [name] });
          const done = writer.store.appliedCommand(id);
          if (!done) io.err(`ralph: .ralph/inbox/${name} is gone and was never applied (someone removed it)\n`);
          const code = done ? await report(spec, parsed, io, writer, done.outcome, eventsById(writer, done.eventIds), codes) : codes.failed;
          await writer.store.close();
          return code;
        } catch (e) {
          await writer.store.close().catch(() => undefined);
          throw e;
        }
      }
      if (Date.now() >= deadline) break;
      await delay(Math.min(pause, deadline - Date.now()));
      pause = Math.min(pause * 2, 250);
    }
  } finally {
    await observer?.store.close().catch(() => undefined);
  }
  io.out(`QUEUED ${name}\n`);
  io.err(
    `ralph: the running loop (${who(holder)}) has not applied it within ${APPLY_WAIT_MS / 1000} s; it stays queued in ` +
      `.ralph/inbox/${name} and the loop applies it when it drains its inbox (\`ralph drain-inbox\` applies it once the loop has stopped). ` +
      'Do not send it again.\n',
  );
  return codes.queued;
}

function eventsById(ctx: ControlContext, ids: readonly string[]): StoredEvent[] {
  if (ids.length === 0) return [];
  const rows = ctx.store.all<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE event_id IN (${ids.map(() => '?').join(', ')}) ORDER BY event_id`,
    [...ids],
  );
  return rows.map(rowToEvent);
}

async function report(
  spec: CommandSpec,
  parsed: ParsedArgs,
  io: CliIo,
  ctx: ControlContext,
  outcome: 'applied' | 'failed',
  events: readonly StoredEvent[],
  codes: ExitCodes,
): Promise<number> {
  if (outcome === 'failed') {
    const failed = events.find((e) => e.event_type === 'inbox.failed');
    io.err(`ralph: ${String(failed?.payload['error'] ?? 'the command failed')}\n`);
    return codes.failed;
  }
  const own = events.filter((e) => e.event_type !== 'command.applied');
  io.out(spec.formatApplied ? await spec.formatApplied(own, parsed, ctx) : `APPLIED ${own.map((e) => e.event_id).join(' ')}\n`);
  return codes.ok;
}
