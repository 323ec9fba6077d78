// The repair commands of `ralph`: release stale claims back to pending, and drain the inbox
// by hand when no loop runs.
import { opt } from './args';
import type { CommandSpec } from './commandSpec';
import { J, json, noMore } from './commandSpec';
import { loadControl } from './lazy';

export const REPAIR_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'release-claims',
    arity: [0, 0],
    usage: 'release-claims [--owner name] [--except id] [--reason text] [--actor name]',
    summary: 'return claimed tasks to pending, with an event each (repair)',
    store: 'writer',
    ids: (a) => (a.options.get('except') ?? []).map((v) => ['task', v, '--except'] as const),
    values: ['owner', 'except', 'reason', 'actor'],
    switches: J,
    async run(ctx, a, io) {
      const { releaseClaims } = await loadControl();
      const owner = opt(a, 'owner');
      const ids = await releaseClaims(ctx, {
        ...(owner ? { owner } : {}),
        except: a.options.get('except') ?? [],
        actor: opt(a, 'actor') ?? 'control_plane',
        reason: opt(a, 'reason') ?? 'released by release-claims',
      });
      io.out(
        json(a)
          ? `${JSON.stringify({ released: ids })}\n`
          : `Released ${ids.length} claimed tasks${ids.length ? `: ${ids.join(', ')}` : ''}\n`,
      );
      return 0;
    },
  },
  {
    name: 'drain-inbox',
    arity: [0, 0],
    usage: 'drain-inbox',
    summary: 'run the command files observers left in .ralph/inbox/',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { drainInbox } = await loadControl();
      noMore(a, 0, this.usage);
      const r = await drainInbox(ctx);
      for (const x of r) if (!x.ok) io.err(`${x.file}: ${x.error ?? 'failed'}\n`);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `Drained ${r.length} inbox commands (${r.filter((x) => !x.ok).length} failed)\n`);
      return r.some((x) => !x.ok) ? 1 : 0;
    },
  },
];
