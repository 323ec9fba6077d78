// Which folder's loop a chat request addresses, in a window with several Ralph folders. A chat
// has no focus of its own, so nothing is guessed silently: a request goes to the folder it
// names (`folder:api`), else the only folder (with a Ralph project), else the one folder that holds the task it names,
// else the one folder whose loop can take the verb (/pause: a running one), else the folder
// of the active editor; otherwise the answer is a question naming the folders. Pure (no
// vscode), so the rules are tested without VS Code.
import type { LoopVerb } from '../../mcp/operations';

/** What the rules need of a folder's engine session. */
export interface ChatFolder {
  readonly name: string;
  readonly projectDir: string;
  /** Has a Ralph project (folders without one are chosen only when no folder has one). */
  readonly initialized: boolean;
  loopState(): 'running' | 'paused' | 'stopped';
  /** Whether this folder's store has the task (opens the store when needed). */
  hasTask(taskId: string): Promise<boolean>;
}

export interface FolderQuery {
  /** A folder the prompt names (`folder:<name>`). */
  readonly named?: string;
  /** A task the request is about. */
  readonly taskId?: string;
  /** A loop verb: only folders whose loop can take it qualify. */
  readonly verb?: LoopVerb;
  /** The folder of the active editor, when there is one. */
  readonly activeDir?: string;
}

export type FolderChoice<F extends ChatFolder> =
  | { readonly kind: 'folder'; readonly folder: F; readonly why: string }
  /** Several folders and nothing says which: ask, offering these. */
  | { readonly kind: 'ask'; readonly folders: readonly F[]; readonly question: string }
  | { readonly kind: 'none'; readonly message: string };

const FOLDER_TOKEN = /(?:^|\s)folder:(?:"([^"]{1,200})"|(\S{1,200}))(?=\s|$)/i;

/** Takes `folder:<name>` (or `folder:"a name"`) out of a prompt. */
export function takeFolder(prompt: string): { prompt: string; named?: string } {
  const m = FOLDER_TOKEN.exec(prompt);
  if (!m) return { prompt };
  const named = (m[1] ?? m[2] ?? '').trim();
  const rest = `${prompt.slice(0, m.index)} ${prompt.slice(m.index + m[0].length)}`.replace(/\s+/g, ' ').trim();
  return { prompt: rest, ...(named ? { named } : {}) };
}

/** How a folder is named in a prompt: bare when it can be, quoted otherwise. */
export function folderToken(name: string): string {
  return /^[^\s"]+$/.test(name) ? `folder:${name}` : `folder:"${name.replace(/"/g, '')}"`;
}

const canTake = (verb: LoopVerb, state: string): boolean =>
  verb === 'resume' ? state === 'paused' : verb === 'pause' ? state === 'running' : state !== 'stopped';

const within = (file: string, dir: string): boolean => file === dir || file.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

export async function chooseFolder<F extends ChatFolder>(folders: readonly F[], q: FolderQuery): Promise<FolderChoice<F>> {
  const names = folders.map((f) => f.name).join(', ');
  if (folders.length === 0) return { kind: 'none', message: 'Ralph needs an open folder (a git repository) in this window.' };
  if (q.named !== undefined) {
    const want = q.named.toLowerCase();
    const f =
      folders.find((x) => x.name.toLowerCase() === want) ?? folders.find((x) => x.projectDir.split('/').pop()?.toLowerCase() === want);
    if (f) return { kind: 'folder', folder: f, why: 'named' };
    return { kind: 'none', message: `This window has no folder named "${q.named.slice(0, 80)}"; its Ralph folders are ${names}.` };
  }
  const ralph = folders.filter((f) => f.initialized);
  let candidates: readonly F[] = ralph.length > 0 ? ralph : folders;
  if (candidates.length === 1) return { kind: 'folder', folder: candidates[0] as F, why: 'only' };
  if (q.taskId !== undefined) {
    const id = q.taskId;
    const has = await Promise.all(candidates.map((f) => f.hasTask(id)));
    const having = candidates.filter((_f, i) => has[i]);
    if (having.length === 1) return { kind: 'folder', folder: having[0] as F, why: 'task' };
    if (having.length === 0) return { kind: 'none', message: `No folder of this window (${names}) has a task ${id}.` };
    candidates = having;
  }
  if (q.verb !== undefined) {
    const verb = q.verb;
    const able = candidates.filter((f) => canTake(verb, f.loopState()));
    if (able.length === 1) return { kind: 'folder', folder: able[0] as F, why: 'loop' };
    if (able.length === 0) {
      const what = verb === 'resume' ? 'paused' : 'running';
      return { kind: 'none', message: `No loop is ${what} in any folder of this window (${names}); there is nothing to ${verb}.` };
    }
    candidates = able;
  }
  const active = q.activeDir;
  if (active !== undefined) {
    const inside = candidates.filter((f) => within(active, f.projectDir)).sort((a, b) => b.projectDir.length - a.projectDir.length);
    if (inside[0]) return { kind: 'folder', folder: inside[0], why: 'active' };
  }
  const which = q.taskId !== undefined ? `hold ${q.taskId}` : q.verb !== undefined ? `have a loop to ${q.verb}` : 'have a Ralph project';
  return {
    kind: 'ask',
    folders: candidates,
    question: `Which folder? ${candidates.length} folders of this window ${which}: ${candidates.map((f) => `**${f.name}**`).join(', ')}. Say it with \`${folderToken(candidates[0]?.name ?? 'name')}\`, or pick one below.`,
  };
}
