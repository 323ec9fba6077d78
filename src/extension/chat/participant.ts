// The `@ralph` chat participant: /status, /add <title> [wave N] [effort S|M|L|XL], /why <task>,
// /approve <task> [note], /reject <task> <note>, /modify <task> <instruction>, /pause, /resume,
// /stop. It answers from the store through the same operations as the MCP server, with command
// links that reveal tasks, open diffs and stories; every decision is the person's (actor
// `human`), relayed by `vscode-chat`, and goes through the folder's inbox like the sidebar's.
// The destructive ones (/stop ends the agents' work in flight, /reject discards a patch) are
// asked back first and run only on the person's confirmation (a follow-up in the chat). In a
// window with several Ralph folders the request goes to the folder folders.ts chooses, and
// when nothing says which the answer is that question, each folder a follow-up.
import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import { RalphOperations, type OperationResult, type RalphPort } from '../../mcp/operations';
import { taskIdSchema } from '../../mcp/tools';
import { Commands } from '../ids';
import { CHAT_ACTORS, ChatIds, type ParticipantCommand } from './chatIds';
import { chooseFolder, folderToken, takeFolder, type ChatFolder } from './folders';
import { commandLinks, trustedMarkdown } from './links';

export interface ChatAnswer {
  readonly command: ParticipantCommand | 'help';
  readonly ok: boolean;
  /** The folder that answered (by name), when one did. */
  readonly folder?: string;
  /** What the person can send next: the folder to pick, the confirmation to give. */
  readonly followups?: readonly vscode.ChatFollowup[];
  /** Set when the answer asks for a confirmation before it acts. */
  readonly confirm?: string;
}

/** A folder the chat can address: its session's port. */
export interface ChatProject extends ChatFolder {
  readonly port: RalphPort;
}

export interface ChatProjects {
  list(): readonly ChatProject[];
  /** The file of the active editor, if any (a hint for which folder is meant). */
  activeFile(): string | undefined;
}

/** How long an asked-back confirmation stays valid. */
export const CONFIRM_TTL_MS = 10 * 60_000;

const HELP = [
  'Ask the Ralph loop of this folder:',
  '',
  '- `/status` — phase, tasks, patches, what waits for a decision',
  '- `/add <title> [wave N] [effort S|M|L|XL]` — propose a task (the backlog policy decides)',
  "- `/why <task>` — the task's story: every attempt, gate, verdict and decision",
  '- `/approve <task> [note]` — approve its deferred patch (overrides the judge)',
  '- `/reject <task> <note>` — reject its deferred patch; the next attempt reads the note (asks you to confirm)',
  '- `/modify <task> <instruction>` — send its deferred patch back; the next attempt starts from it and makes the change',
  '- `/pause`, `/resume` — the running loop',
  '- `/stop [reason]` — stop the running loop (asks you to confirm)',
  '',
  'With several folders in the window, add `folder:<name>` to say which.',
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
  if (!id.success) return { note: '', error: `\`${first.slice(0, 80).replace(/`/g, "'")}\` is not a task id.` };
  return { taskId: id.data, note: rest.join(' ') };
}

const TASK_COMMANDS: ReadonlySet<string> = new Set(['why', 'approve', 'reject', 'modify']);
const LOOP_COMMANDS: ReadonlySet<string> = new Set(['pause', 'resume', 'stop']);
const CONFIRM = /^confirm\s+([0-9a-f]{8})$/i;

interface Pending {
  readonly command: ParticipantCommand;
  readonly folder: string;
  readonly expires: number;
  run(): Promise<OperationResult>;
}

export function createChatHandler(
  projects: ChatProjects,
  client: () => { name: string; version?: string },
  now: () => number = Date.now,
): vscode.ChatRequestHandler {
  const opsByPort = new WeakMap<RalphPort, RalphOperations>();
  const opsOf = (p: ChatProject): RalphOperations => {
    let ops = opsByPort.get(p.port);
    if (!ops) {
      ops = new RalphOperations(p.port, {
        actor: CHAT_ACTORS.participant,
        client,
        links: commandLinks(p.projectDir),
        source: 'vscode-chat',
      });
      opsByPort.set(p.port, ops);
    }
    return ops;
  };
  const pending = new Map<string, Pending>();

  return async (request, _context, response): Promise<vscode.ChatResult> => {
    const command = request.command as ParticipantCommand | undefined;
    const all = projects.list();
    const multi = all.length > 1;
    let answered: string | undefined;
    const say = (r: OperationResult | string): void => {
      const text = typeof r === 'string' ? r : r.text;
      response.markdown(trustedMarkdown(multi && answered ? `Folder **${answered}**:\n\n${text}` : text));
    };
    const done = (c: ChatAnswer['command'], ok: boolean, extra: Partial<ChatAnswer> = {}): vscode.ChatResult => ({
      metadata: { command: c, ok, ...(answered ? { folder: answered } : {}), ...extra } satisfies ChatAnswer,
    });
    const { prompt, named } = takeFolder(request.prompt);
    try {
      // A confirmation asked back earlier: run what was asked, once.
      const confirmed = CONFIRM.exec(prompt.trim());
      if (command && confirmed) {
        const key = (confirmed[1] ?? '').toLowerCase();
        const p = pending.get(key);
        if (!p || p.command !== command || p.expires < now()) {
          if (p && p.expires < now()) pending.delete(key);
          response.markdown(`That confirmation is not open (already used, expired or never asked): send \`/${command}\` again.`);
          return done(command, false);
        }
        pending.delete(key);
        answered = p.folder;
        const r = await p.run();
        say(r);
        return done(command, !r.isError);
      }

      const t = command && TASK_COMMANDS.has(command) ? taskAndNote(prompt) : undefined;
      if (command && t && !t.taskId) {
        response.markdown(t.error ?? HELP);
        return done(command, false);
      }
      const verb = command && LOOP_COMMANDS.has(command) ? (command as 'pause' | 'resume' | 'stop') : undefined;
      const active = projects.activeFile();
      const choice = await chooseFolder(all, {
        ...(named !== undefined ? { named } : {}),
        ...(t?.taskId ? { taskId: t.taskId } : {}),
        ...(verb ? { verb } : {}),
        ...(active !== undefined ? { activeDir: active } : {}),
      });
      if (choice.kind === 'none') {
        response.markdown(choice.message);
        return done(command ?? 'help', false);
      }
      if (choice.kind === 'ask') {
        response.markdown(choice.question);
        const followups: vscode.ChatFollowup[] = choice.folders.map((f) => ({
          prompt: `${prompt} ${folderToken(f.name)}`.trim(),
          label: `${command ? `/${command} ` : ''}in ${f.name}`,
          ...(command ? { command } : {}),
        }));
        return done(command ?? 'help', false, { followups });
      }
      const project = choice.folder;
      answered = multi ? project.name : undefined;
      const ops = opsOf(project);

      const askBack = (what: string, run: () => Promise<OperationResult>, label: string): vscode.ChatResult => {
        const key = randomBytes(4).toString('hex');
        pending.set(key, { command: command as ParticipantCommand, folder: project.name, expires: now() + CONFIRM_TTL_MS, run });
        say(
          `${what}\n\nNothing happens until you confirm: pick **${label}** below (or send \`/${command} confirm ${key}\`) within ${CONFIRM_TTL_MS / 60_000} minutes.`,
        );
        return done(command as ParticipantCommand, true, {
          confirm: key,
          followups: [{ prompt: `confirm ${key}`, label, command: command as string }],
        });
      };

      switch (command) {
        case 'status': {
          const r = await ops.status();
          say(r);
          response.button({ command: Commands.showMonitor, title: 'Show Monitor', arguments: [project.projectDir] });
          return done('status', !r.isError);
        }
        case 'why': {
          const id = t?.taskId as string;
          const r = await ops.showTask(id);
          say(r);
          if (!r.isError) {
            response.button({ command: ChatIds.showTaskStory, title: 'Open the Story', arguments: [id, project.projectDir] });
            response.button({ command: Commands.revealTask, title: 'Reveal in Backlog', arguments: [id, project.projectDir] });
            const patch = (r.data['story'] as { patches?: { patchId: string }[] } | undefined)?.patches?.at(-1)?.patchId;
            if (patch) response.button({ command: Commands.openPatchDiff, title: 'Open the Diff', arguments: [patch, project.projectDir] });
          }
          return done('why', !r.isError);
        }
        case 'approve':
        case 'modify': {
          const r = await ops.decide(t?.taskId as string, command, t?.note);
          say(r);
          return done(command, !r.isError);
        }
        case 'reject': {
          const id = t?.taskId as string;
          const note = t?.note ?? '';
          const refused = await ops.checkDecision(id, 'reject', note);
          if (refused) {
            say(refused);
            return done('reject', false);
          }
          return askBack(
            `Reject the deferred patch of ${id}? The patch is discarded and the task goes back to the agents; the next attempt reads your note: "${note
              .trim()
              .replace(/[\r\n]+/g, ' ')
              .slice(0, 500)}".`,
            () => ops.decide(id, 'reject', note),
            `Reject ${id}`,
          );
        }
        case 'pause':
        case 'resume': {
          const r = await ops.loop(command, prompt.slice(0, 500));
          say(r);
          return done(command, !r.isError);
        }
        case 'stop': {
          const refused = ops.checkLoop('stop');
          if (refused) {
            say(refused);
            return done('stop', false);
          }
          return askBack(
            `Stop the loop${multi ? ` in ${project.name}` : ''}? Its agents are ended within seconds and what they have not proposed yet is lost; the backlog, the deferred patches and every commit stay.`,
            () => ops.loop('stop', prompt.slice(0, 500) || 'stopped from the chat'),
            `Stop the loop${multi ? ` in ${project.name}` : ''}`,
          );
        }
        case 'add': {
          const a = parseAddPrompt(prompt);
          if (a.title === '') {
            response.markdown('Say what the task is, e.g. `/add validate emails wave 1 effort S`.');
            return done('add', false);
          }
          const r = await ops.addTask(a);
          say(r);
          return done('add', !r.isError);
        }
        default: {
          say(`${HELP}\n\n---\n\n${(await ops.status()).text}`);
          return done('help', true);
        }
      }
    } catch (e) {
      response.markdown(`Ralph: ${e instanceof Error ? e.message : String(e)}`);
      return done(command ?? 'help', false);
    }
  };
}
