// The view commands of `ralph`: render the state and the backlog, sync BACKLOG.md, status,
// show one entity, and rebuild the projections from the event log.
import type { SafetyFacts } from '../domain/safetyFacts';
import type { StatusFacts } from '../domain/views';
import { opt, type ParsedArgs } from './args';
import type { CliIo, CommandSpec } from './commandSpec';
import { J, json, noMore } from './commandSpec';
import {
  loadCommitFiles,
  loadConfigVerdict,
  loadControl,
  loadProjectConfig,
  loadSafetyStatus,
  loadStatusPath,
  loadStatusQuick,
} from './lazy';

/**
 * What `status` prints, from the store or from its image alike. A broken ralph.config.json
 * is what `ralph start` would stop on: said here too, in the same file:line:col words
 * (stderr, so the reference's status text stays as it was). The verdict is cached per config
 * text and build (configVerdict.ts): the schema is most of what status would cost.
 */
async function printStatus(
  projectDir: string,
  a: ParsedArgs,
  io: CliIo,
  f: StatusFacts,
  safety: SafetyFacts,
  asOf?: string,
): Promise<void> {
  const { configProblem } = await loadConfigVerdict();
  const configError = (await configProblem(projectDir, loadProjectConfig)) ?? null;
  if (configError !== null) io.err(`ralph: warning: ${configError}\n`);
  if (asOf !== undefined) io.err(`${asOf}\n`);
  if (json(a)) {
    io.out(
      `${JSON.stringify({ ...f, taskCounts: Object.fromEntries(f.taskCounts), patchCounts: Object.fromEntries(f.patchCounts), configError, safety })}\n`,
    );
    return;
  }
  const { renderStatus, safetyLines } = await loadStatusQuick();
  io.out(renderStatus(f) + (asOf !== undefined ? '' : safetyLines(safety)));
}

export const VIEW_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'render-state',
    arity: [0, 0],
    usage: 'render-state',
    summary: 'regenerate STATE.json from the event log',
    store: 'observer',
    async run(ctx, a) {
      const { renderState } = await loadControl();
      noMore(a, 0, this.usage);
      renderState(ctx);
      return 0;
    },
  },
  {
    name: 'render-backlog',
    arity: [0, 0],
    usage: 'render-backlog',
    summary: 'regenerate BACKLOG.md from the event log',
    store: 'observer',
    async run(ctx, a) {
      const { renderBacklogFile } = await loadControl();
      noMore(a, 0, this.usage);
      renderBacklogFile(ctx);
      return 0;
    },
  },
  {
    name: 'sync-backlog',
    arity: [0, 0],
    usage: 'sync-backlog',
    summary: 'import new BACKLOG.md rows; report done marks without a promoted patch',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { formatSync, syncBacklog } = await loadControl();
      noMore(a, 0, this.usage);
      const r = await syncBacklog(ctx);
      const f = formatSync(r);
      io.err(f.err);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : f.out);
      return 0;
    },
  },
  {
    name: 'status',
    arity: [0, 0],
    usage: 'status [--at <time|evt_id>] [--json]',
    summary: 'summary of phase, tasks, patches, events and deferrals (--at: as it was then)',
    store: 'observer',
    switches: J,
    values: ['at'],
    async quick(projectDir, a, io, now) {
      if (opt(a, 'at') !== undefined) return undefined;
      noMore(a, 0, this.usage);
      const q = (await loadStatusQuick()).quickStatus(projectDir, now());
      if (q === undefined) return undefined;
      await printStatus(projectDir, a, io, q.facts, q.safety);
      return 0;
    },
    async run(ctx, a, io) {
      const { statusFacts, statusFactsAt, parseMoment } = await loadStatusPath();
      const { safetyFacts } = await loadSafetyStatus();
      noMore(a, 0, this.usage);
      const at = opt(a, 'at');
      const past = at === undefined ? undefined : await statusFactsAt(ctx, parseMoment(at));
      const asOf = past && `as of ${past.at} (${past.lastEventId === null ? 'no event yet' : `up to ${past.lastEventId}`})`;
      await printStatus(ctx.projectDir, a, io, past ?? statusFacts(ctx), safetyFacts(ctx.store), asOf);
      return 0;
    },
  },
  {
    name: 'show',
    arity: [1, 1],
    usage: 'show <task> [--json]',
    summary: "a task's story: every event, attempt, gate, patch, verdict, the commit, time and cost",
    store: 'observer',
    switches: J,
    ids: (a) => [['task', a.positionals[0], '<task>']],
    async run(ctx, a, io) {
      const { readTaskStory, renderTaskStory, withCommitFiles } = await loadControl();
      const taskId = a.positionals[0] as string;
      const read = readTaskStory(ctx.store, taskId);
      if (read === undefined) {
        io.err(`ralph: no task '${taskId}' in the event log\n`);
        return 1;
      }
      // The commit it landed as, with the files it changed (from git, beside the log).
      const { commitFiles } = await loadCommitFiles();
      const story = await withCommitFiles(read, (hash) => commitFiles(ctx.projectDir, hash));
      io.out(json(a) ? `${JSON.stringify(story)}\n` : renderTaskStory(story));
      return 0;
    },
  },
  {
    name: 'rebuild',
    arity: [0, 0],
    usage: 'rebuild',
    summary: 'replay every event into fresh task_view and patch_view',
    store: 'writer',
    async run(ctx, a, io) {
      const { rebuildViews } = await loadControl();
      noMore(a, 0, this.usage);
      const n = await rebuildViews(ctx);
      io.out(`Rebuilt task_view and patch_view from ${n} events\n`);
      return 0;
    },
  },
];
