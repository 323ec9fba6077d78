// Ralph in VS Code's chat: the `@ralph` participant, the language-model tools, the story
// documents and — where VS Code has the API — the MCP server definition. Registered once by
// the composition; each piece only where this VS Code offers its API. VS Code knows the
// participant and the tools from package.json before anything runs; what answers them
// (chatSession.ts and the MCP operations behind it) loads on the first request or call.
import * as vscode from 'vscode';
import type { Engine } from '../engine';
import { ChatIds } from './chatIds';
import type * as ChatSessionModule from './chatSession';
import type { ChatSession } from './chatSession';
import type { RalphLmTool } from './lmTools';
import { registerMcpDefinitions } from './mcpDefinitions';
import { registerStoryDocuments } from './storyDocument';

/** What tests reach through the extension's API. */
export interface RalphChat {
  readonly handler: vscode.ChatRequestHandler;
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
  /** The session the chat talks to (the focused folder's). */
  readonly engine: () => Engine | undefined;
  /** Every Ralph folder, each offered as an MCP server. */
  readonly folders: () => readonly string[];
  readonly log: vscode.LogOutputChannel;
}): {
  readonly chat: RalphChat;
  readonly disposables: vscode.Disposable[];
} {
  const sessions = new WeakMap<Engine, Promise<ChatSession>>();
  const load = (): Promise<ChatSession> => {
    const engine = o.engine();
    if (!engine) return Promise.reject(new Error('Ralph needs an open folder (a git repository).'));
    let s = sessions.get(engine);
    if (!s) sessions.set(engine, (s = loadChatSession().then((m) => m.createChatSession(engine))));
    return s;
  };
  const handler: vscode.ChatRequestHandler = async (request, context, response, token) =>
    (await load()).handler(request, context, response, token);
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

  const disposables: vscode.Disposable[] = [...registerStoryDocuments(o.engine)];
  const participant = typeof vscode.chat?.createChatParticipant === 'function';
  if (participant) {
    const p = vscode.chat.createChatParticipant(ChatIds.participant, handler);
    p.iconPath = vscode.Uri.joinPath(o.extension.extensionUri, 'media', 'ralph.svg');
    disposables.push(p);
  }
  const lm = typeof vscode.lm?.registerTool === 'function';
  if (lm) for (const [name, t] of tools) disposables.push(vscode.lm.registerTool(name, t));
  const mcp = registerMcpDefinitions(o.extension, o.folders, o.log);
  disposables.push(...mcp);
  return { chat: { handler, tools, registered: { participant, tools: lm, mcpServer: mcp.length > 0 } }, disposables };
}
