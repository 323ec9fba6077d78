// The chat operations as VS Code language-model tools (`ralph_<name>`, contributed in
// package.json), so agent mode can call them. Input is validated again here (VS Code checks
// the schema, but the model and other extensions are still untrusted); the deciding tools
// ask the person first (confirmationMessages), and their decisions are recorded with actor
// `lm-tool`, relayed by VS Code. A failed operation throws, which VS Code hands the model.
// With several Ralph folders a call goes to the one folders.ts chooses (the task's, the one
// with a loop to pause, the active editor's); when nothing says which, it is refused with the
// folders named, and the confirmation of a deciding tool names the folder it will act in.
import * as vscode from 'vscode';
import { RalphOperations, type RalphPort } from '../../mcp/operations';
import { parseToolInput, TOOLS, vscodeToolName, type ToolSpec } from '../../mcp/tools';
import { CHAT_ACTORS } from './chatIds';
import { chooseFolder } from './folders';
import type { ChatProject, ChatProjects } from './participant';

export type RalphLmTool = vscode.LanguageModelTool<Record<string, unknown>>;

const LOOP_TOOLS: ReadonlySet<string> = new Set(['pause', 'resume', 'stop']);

/** The folder a call addresses, or an error that says why none could be chosen. */
async function folderFor(spec: ToolSpec, projects: ChatProjects, args: Record<string, unknown>): Promise<ChatProject> {
  const taskId = typeof args['task_id'] === 'string' ? args['task_id'] : undefined;
  const active = projects.activeFile();
  const choice = await chooseFolder(projects.list(), {
    ...(taskId !== undefined ? { taskId } : {}),
    ...(LOOP_TOOLS.has(spec.name) ? { verb: spec.name as 'pause' | 'resume' | 'stop' } : {}),
    ...(active !== undefined ? { activeDir: active } : {}),
  });
  if (choice.kind === 'folder') return choice.folder;
  if (choice.kind === 'none') throw new Error(choice.message);
  throw new Error(
    `Ralph has ${choice.folders.length} folders in this window that could be meant (${choice.folders.map((f) => f.name).join(', ')}) and the call does not say which: open a file of the folder you mean and call again, or ask @ralph with folder:<name>.`,
  );
}

function toolFor(spec: ToolSpec, projects: ChatProjects, opsOf: (p: RalphPort) => RalphOperations): RalphLmTool {
  return {
    async prepareInvocation(options): Promise<vscode.PreparedToolInvocation> {
      const invocationMessage = `Ralph: ${spec.title.replace(/^Ralph /, '').toLowerCase()}`;
      if (!spec.decides || !spec.confirm) return { invocationMessage };
      const parsed = parseToolInput(spec, options.input);
      // Invalid input is refused by invoke(); the confirmation still names what was asked.
      const c = parsed.ok ? spec.confirm(parsed.args as never) : { title: spec.title, message: `Input: ${JSON.stringify(options.input)}` };
      let where = '';
      if (parsed.ok && projects.list().length > 1) {
        const f = await folderFor(spec, projects, parsed.args).catch(() => undefined);
        where = f ? ` (folder ${f.name})` : '';
      }
      return { invocationMessage, confirmationMessages: { title: c.title, message: new vscode.MarkdownString(`${c.message}${where}`) } };
    },
    async invoke(options): Promise<vscode.LanguageModelToolResult> {
      const parsed = parseToolInput(spec, options.input);
      if (!parsed.ok) throw new Error(`${vscodeToolName(spec)}: invalid input: ${parsed.error}`);
      const project = await folderFor(spec, projects, parsed.args);
      const r = await spec.run(opsOf(project.port), parsed.args as never);
      if (r.isError) throw new Error(r.text.trim());
      const text = projects.list().length > 1 ? `Folder ${project.name}:\n${r.text}` : r.text;
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
    },
  };
}

/** Every tool of the catalogue over the window's folders, by its VS Code name. */
export function createLmTools(projects: ChatProjects): Map<string, RalphLmTool> {
  const ops = new WeakMap<RalphPort, RalphOperations>();
  const opsOf = (port: RalphPort): RalphOperations => {
    let o = ops.get(port);
    if (!o) {
      o = new RalphOperations(port, {
        actor: CHAT_ACTORS.tool,
        client: () => ({ name: 'vscode', version: vscode.version }),
        source: 'vscode-chat',
      });
      ops.set(port, o);
    }
    return o;
  };
  return new Map(TOOLS.map((t) => [vscodeToolName(t), toolFor(t, projects, opsOf)]));
}
