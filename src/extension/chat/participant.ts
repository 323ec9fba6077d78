// The `@ralph` chat participant: /status, /add <title> [wave N] [effort S|M|L|XL], /why <task>,
// /approve <task> [note], /reject <task> <note>. It answers from the store through the same
// operations as the MCP server, with command links that reveal tasks, open diffs and stories;
// decisions are the person's (actor `human`), relayed by `vscode-chat`.
import type * as vscode from 'vscode';
import { RalphOperations, type OperationResult } from '../../mcp/operations';
import { taskIdSchema } from '../../mcp/tools';
import { Commands } from '../ids';
import { CHAT_ACTORS, ChatIds, type ParticipantCommand } from './chatIds';
import type { RalphPort } from '../../mcp/operations';
import { commandLinks, trustedMarkdown } from './links';

export interface ChatAnswer {
  readonly command: ParticipantCommand | 'help';
  readonly ok: boolean;
}

const HELP = [
  'Ask the Ralph loop of this folder:',
  '',
  '- `/status` — phase, tasks, patches, what waits for a decision',
  '- `/add <title> [wave N] [effort S|M|L|XL]` — propose a task (the backlog policy decides)',
  "- `/why <task>` — the task's story: every attempt, gate, verdict and decision",
  '- `/approve <task> [note]` — approve its deferred patch (overrides the judge)',
  '- `/reject <task> <note>` — reject its deferred patch; the next attempt reads the note',
].join('\n');

/** `/add` text: the title, with `wave N` / `effort X` (also `--wave N`, `in wave N`) taken out. */
export function parseAddPrompt(prompt: string): { title: string; wave?: number; effort?: 'S' | 'M' | 'L' | 'XL' } {
  let rest = ` ${prompt} `;
  let wave: number | undefined;
  let effort: 'S' | 'M' | 'L' | 'XL' | undefined;
  rest = rest.replace(/\s(?:--wave[= ]|in wave |wave )(\d{1,4})(?=[\s,.;]|$)/i, (_m, n: string) => {
    wave = Number(n);
    return ' ';
  });
  rest = rest.replace(/\s(?:--effort[= ]|effort )(XL|S|M|L)(?=[\s,.;]|$)/i, (_m, e: string) => {
    effort = e.toUpperCase() as 'S' | 'M' | 'L' | 'XL';
    return ' ';
  });
  const title = rest
    .replace(/\s+/g, ' ')
    .replace(/[\s,;]+$/, '')
    .trim();
  return { title, ...(wave !== undefined ? { wave } : {}), ...(effort ? { effort } : {}) };
}

/** The first word as a task id, the rest as the note. */
function taskAndNote(prompt: string): { taskId?: string; note: string; error?: string } {
  const [first = '', ...rest] = prompt.trim().split(/\s+/);
  if (first === '') return { note: '', error: 'Name the task, e.g. `W1-003`.' };
  const id = taskIdSchema().safeParse(first);
  if (!id.success) return { note: '', error: `\`${first.slice(0, 80)}\` is not a task id.` };
  return { taskId: id.data, note: rest.join(' ') };
}

export function createChatHandler(port: RalphPort, client: () => { name: string; version?: string }): vscode.ChatRequestHandler {
  const ops = new RalphOperations(port, {
    actor: CHAT_ACTORS.participant,
    client,
    links: commandLinks(),
    source: 'vscode-chat',
  });
  return async (request, _context, response): Promise<vscode.ChatResult> => {
    const say = (r: OperationResult): void => response.markdown(trustedMarkdown(r.text));
    const command = request.command as ParticipantCommand | undefined;
    const done = (c: ChatAnswer['command'], ok: boolean): vscode.ChatResult => ({ metadata: { command: c, ok } satisfies ChatAnswer });
    try {
      switch (command) {
        case 'status': {
          const r = await ops.status();
          say(r);
          response.button({ command: Commands.showMonitor, title: 'Show Monitor' });
          return done('status', !r.isError);
        }
        case 'why': {
          const t = taskAndNote(request.prompt);
          if (!t.taskId) {
            response.markdown(t.error ?? HELP);
            return done('why', false);
          }
          const r = await ops.showTask(t.taskId);
          say(r);
          if (!r.isError) {
            response.button({ command: ChatIds.showTaskStory, title: 'Open the Story', arguments: [t.taskId] });
            response.button({ command: Commands.revealTask, title: 'Reveal in Backlog', arguments: [t.taskId] });
            const patch = (r.data['story'] as { patches?: { patchId: string }[] } | undefined)?.patches?.at(-1)?.patchId;
            if (patch) response.button({ command: Commands.openPatchDiff, title: 'Open the Diff', arguments: [patch] });
          }
          return done('why', !r.isError);
        }
        case 'approve':
        case 'reject': {
          const t = taskAndNote(request.prompt);
          if (!t.taskId) {
            response.markdown(t.error ?? HELP);
            return done(command, false);
          }
          const r = await ops.decide(t.taskId, command, t.note);
          say(r);
          return done(command, !r.isError);
        }
        case 'add': {
          const a = parseAddPrompt(request.prompt);
          if (a.title === '') {
            response.markdown('Say what the task is, e.g. `/add validate emails wave 1 effort S`.');
            return done('add', false);
          }
          const r = await ops.addTask(a);
          say(r);
          return done('add', !r.isError);
        }
        default: {
          response.markdown(trustedMarkdown(`${HELP}\n\n---\n\n${(await ops.status()).text}`));
          return done('help', true);
        }
      }
    } catch (e) {
      response.markdown(`Ralph: ${e instanceof Error ? e.message : String(e)}`);
      return done(command ?? 'help', false);
    }
  };
}
