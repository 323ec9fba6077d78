// Ralph in VS Code's chat: the `@ralph` participant, the language-model tools, the story
// documents and — where VS Code has the API — the MCP server definition. Registered once by
// the composition; each piece only where this VS Code offers its API. VS Code knows the
// participant and the tools from package.json before anything runs; what answers them
// (chatSession.ts and the MCP operations behind it) loads on the first request or call.
import * as vscode from 'vscode';
import type { Engine } from '../../session/engine';
import { ChatIds } from './chatIds';
import type * as ChatSessionModule from './chatSession';
import type { ChatSession } from './chatSession';
import type { RalphLmTool } from './lmTools';
import type { ChatAnswer } from './participant';
import { registerMcpDefinitions } from './mcpDefinitions';
import { registerStoryDocuments } from './storyDocument';

/** What tests reach through the extension's API. */
export interface RalphChat {
  readonly handler: vscode.ChatRequestHandler;
  /** The participant's follow-up provider. */
  readonly followups: (result: vscode.ChatResult) => vscode.ChatFollowup[];
  readonly tools: ReadonlyMap<string, RalphLmTool>;
  readonly registered: { readonly participant: boolean; readonly tools: boolean; readonly mcpServer: boolean };
}

const loadChatSession = (): Promise<typeof ChatSessionModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./chatSession.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./chatSession') as typeof ChatSessionModule);

/** The tool names package.json contributes (scripts/generate-chat-tools.ts writes them from the catalogue). */
function contributedToolNames(extension: vscode.ExtensionContext): string[] {
  const pkg = extension.extension.packageJSON as { contributes?: { languageModelTools?: { name?: unknown }[] } };
  return (pkg.contributes?.languageModelTools ?? []).map((t) => t.name).filter((n): n is string => typeof n === 'string');
}

export function registerChat(o: {
  readonly extension: vscode.ExtensionContext;
  /** Every folder's session, in workspace order (each also offered as an MCP server). */
  readonly engines: () => readonly Engine[];
  /** The active editor's file: a hint for which folder a chat request means. */
  readonly activeFile: () => string | undefined;
  readonly log: vscode.LogOutputChannel;
}): {
  readonly chat: RalphChat;
  readonly disposables: vscode.Disposable[];
} {
  let session: Promise<ChatSession> | undefined;
  const load = (): Promise<ChatSession> => (session ??= loadChatSession().then((m) => m.createChatSession(o.engines, o.activeFile)));
  const handler: vscode.ChatRequestHandler = async (request, context, response, token) =>
    (await load()).handler(request, context, response, token);
  // What the answer offers next (the folder to pick, the confirmation to give) rides in its metadata.
  const followups = (result: vscode.ChatResult): vscode.ChatFollowup[] => [
    ...((result.metadata as ChatAnswer | undefined)?.followups ?? []),
  ];
  const tool = (name: string): RalphLmTool => {
    const real = async (): Promise<RalphLmTool> => {
      const t = (await load()).tools.get(name);
      if (!t) throw new Error(`Ralph has no tool ${name}`);
      return t;
    };
    return {
      prepareInvocation: async (options, token) => (await real()).prepareInvocation?.(options, token),
      invoke: async (options, token) => (await real()).invoke(options, token),
    };
  };
  const tools = new Map(contributedToolNames(o.extension).map((n) => [n, tool(n)]));

  // A story names its folder; one that does not is told by a folder that has the task (else
  // the active editor's, else the first). The command asks when several folders have it.
  const fallback = async (taskId: string): Promise<Engine | undefined> => {
    const all = o.engines();
    for (const e of all) if ((await e.open()) && e.task(taskId)) return e;
    const file = o.activeFile();
    return all.find((e) => file !== undefined && (file === e.projectDir || file.startsWith(`${e.projectDir}/`))) ?? all[0];
  };
  const disposables: vscode.Disposable[] = [...registerStoryDocuments({ all: o.engines, fallback })];
  const participant = typeof vscode.chat?.createChatParticipant === 'function';
  if (participant) {
    const p = vscode.chat.createChatParticipant(ChatIds.participant, handler);
    p.iconPath = vscode.Uri.joinPath(o.extension.extensionUri, 'media', 'ralph.svg');
    p.followupProvider = { provideFollowups: followups };
    disposables.push(p);
  }
  const lm = typeof vscode.lm?.registerTool === 'function';
  if (lm) for (const [name, t] of tools) disposables.push(vscode.lm.registerTool(name, t));
  const mcp = registerMcpDefinitions(o.extension, () => o.engines().map((e) => ({ dir: e.projectDir, name: e.name })), o.log);
  disposables.push(...mcp);
  return { chat: { handler, followups, tools, registered: { participant, tools: lm, mcpServer: mcp.length > 0 } }, disposables };
}
