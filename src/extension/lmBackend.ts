// The VS Code Language Model API as an agent backend: vscode.lm chat models adapted to the
// agents package's ChatModelPort; the in-process agent loop (src/agents/inProcess.ts) runs
// the file and shell tools confined to the agent's worktree, counts tokens with the
// model's own counter and times the run (the API reports no usage or cost).
import * as vscode from 'vscode';
import type { AgentBackend, AgentRequest } from '../agents/types';
import type { ChatMessage, ChatModelPort, ChatPart } from '../agents/inProcess';
import { createInProcessBackend } from '../agents/inProcess';
import type { ToolSpec } from '../agents/localTools';

export interface LmSelector {
  readonly vendor?: string;
  readonly family?: string;
}

export class NoLanguageModelError extends Error {
  override readonly name = 'NoLanguageModelError';
  constructor(readonly selector: vscode.LanguageModelChatSelector) {
    super(
      `no VS Code language model matches ${JSON.stringify(selector)}; install a provider (e.g. GitHub Copilot Chat) or change backends['vscode-lm'] in ralph.config.json`,
    );
  }
}

/** A LanguageModelError (NoPermissions | Blocked | NotFound) as a plain error message. */
export function describeLmError(e: unknown): Error {
  if (e instanceof vscode.LanguageModelError) {
    const hint =
      e.code === vscode.LanguageModelError.NoPermissions().code
        ? ' (allow Ralph to use the model when VS Code asks)'
        : e.code === vscode.LanguageModelError.Blocked().code
          ? ' (the request was blocked, e.g. by quota)'
          : e.code === vscode.LanguageModelError.NotFound().code
            ? ' (the model is gone)'
            : '';
    return new Error(`LanguageModelError ${e.code}: ${e.message}${hint}`);
  }
  return e instanceof Error ? e : new Error(String(e));
}

export function toLmMessages(messages: readonly ChatMessage[]): vscode.LanguageModelChatMessage[] {
  return messages.map((m) => {
    if (m.role === 'user') return vscode.LanguageModelChatMessage.User(m.text);
    if (m.role === 'assistant') {
      return vscode.LanguageModelChatMessage.Assistant(
        m.parts.map((p) =>
          p.type === 'text'
            ? new vscode.LanguageModelTextPart(p.text)
            : new vscode.LanguageModelToolCallPart(p.id, p.name, (p.input ?? {}) as object),
        ),
      );
    }
    return vscode.LanguageModelChatMessage.User(
      m.results.map(
        (r) =>
          new vscode.LanguageModelToolResultPart(r.id, [new vscode.LanguageModelTextPart(r.isError ? `ERROR: ${r.output}` : r.output)]),
      ),
    );
  });
}

function tokenFor(signal: AbortSignal): vscode.CancellationTokenSource {
  const cts = new vscode.CancellationTokenSource();
  if (signal.aborted) cts.cancel();
  else signal.addEventListener('abort', () => cts.cancel(), { once: true });
  return cts;
}

/** Adapts one vscode.lm chat model to the in-process loop's port. */
export function chatModelPort(model: vscode.LanguageModelChat): ChatModelPort {
  return {
    id: model.id,
    async *send(messages: readonly ChatMessage[], tools: readonly ToolSpec[], signal: AbortSignal): AsyncIterable<ChatPart> {
      const cts = tokenFor(signal);
      try {
        const response = await model
          .sendRequest(
            toLmMessages(messages),
            {
              tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as object })),
              toolMode: vscode.LanguageModelChatToolMode.Auto,
              justification: 'Ralph Loop runs an agent on a task of your backlog.',
            },
            cts.token,
          )
          .then(undefined, (e: unknown) => {
            throw describeLmError(e);
          });
        for await (const part of response.stream) {
          if (part instanceof vscode.LanguageModelTextPart) yield { type: 'text', text: part.value };
          else if (part instanceof vscode.LanguageModelToolCallPart)
            yield { type: 'tool_call', id: part.callId, name: part.name, input: part.input };
        }
      } catch (e) {
        throw describeLmError(e);
      } finally {
        cts.dispose();
      }
    },
    async countTokens(text: string, signal: AbortSignal): Promise<number> {
      const cts = tokenFor(signal);
      try {
        return await model.countTokens(text, cts.token);
      } finally {
        cts.dispose();
      }
    },
  };
}

/** The `vscode-lm` backend: picks a model per request (request.model as the family when no family is configured). */
export function createLmBackend(selector: LmSelector = {}): AgentBackend {
  return createInProcessBackend({
    id: 'vscode-lm',
    model: async (request: AgentRequest) => {
      const sel: vscode.LanguageModelChatSelector = {
        ...(selector.vendor ? { vendor: selector.vendor } : {}),
        ...(selector.family ? { family: selector.family } : {}),
      };
      let models = await vscode.lm.selectChatModels(sel);
      if (models.length === 0 && !selector.family && request.model)
        models = await vscode.lm.selectChatModels({ ...sel, family: request.model });
      const model = models[0];
      if (!model) throw new NoLanguageModelError(sel);
      return chatModelPort(model);
    },
  });
}
