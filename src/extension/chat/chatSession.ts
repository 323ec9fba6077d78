// The chat surfaces' implementation over this window's engine session: the participant's
// handler and the language-model tools, sharing one port. index.ts loads this module (its own
// chunk, with the MCP operations and the tool catalogue) on the first chat request or tool call.
import * as vscode from 'vscode';
import type { Engine } from '../engine';
import { enginePort } from './enginePort';
import { createLmTools, type RalphLmTool } from './lmTools';
import { createChatHandler } from './participant';

export interface ChatSession {
  readonly handler: vscode.ChatRequestHandler;
  readonly tools: ReadonlyMap<string, RalphLmTool>;
}

export function createChatSession(engine: Engine): ChatSession {
  const port = enginePort(engine);
  return {
    handler: createChatHandler(port, () => ({ name: 'vscode-chat', version: vscode.version })),
    tools: createLmTools(port),
  };
}
