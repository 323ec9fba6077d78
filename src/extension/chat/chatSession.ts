// The chat surfaces' implementation over this window's engine sessions: the participant's
// handler and the language-model tools, sharing one port per folder. index.ts loads this
// module (its own chunk, with the MCP operations and the tool catalogue) on the first chat
// request or tool call.
import * as vscode from 'vscode';
import type { RalphPort } from '../../mcp/operations';
import type { Engine } from '../../session/engine';
import { enginePort } from './enginePort';
import { createLmTools, type RalphLmTool } from './lmTools';
import { createChatHandler, type ChatProject, type ChatProjects } from './participant';

export interface ChatSession {
  readonly handler: vscode.ChatRequestHandler;
  readonly tools: ReadonlyMap<string, RalphLmTool>;
}

export function createChatSession(engines: () => readonly Engine[], activeFile: () => string | undefined): ChatSession {
  const ports = new WeakMap<Engine, RalphPort>();
  const project = (e: Engine): ChatProject => {
    let port = ports.get(e);
    if (!port) ports.set(e, (port = enginePort(e)));
    return {
      name: e.name,
      projectDir: e.projectDir,
      initialized: e.isInitialized(),
      port,
      loopState: () => e.loopState(),
      hasTask: async (id) => (await e.open()) !== undefined && e.task(id) !== undefined,
    };
  };
  const projects: ChatProjects = { list: () => engines().map(project), activeFile };
  return {
    handler: createChatHandler(projects, () => ({ name: 'vscode-chat', version: vscode.version })),
    tools: createLmTools(projects),
  };
}
