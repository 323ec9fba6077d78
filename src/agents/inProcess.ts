// The in-process backend: an agent loop around a chat model that runs inside this process
// (the VS Code Language Model API, adapted in src/extension to `ChatModelPort`). The model
// only streams text and tool calls; this loop runs the local tools confined to the
// worktree, enforces max turns, budget, timeout and stop, counts tokens with the model's
// own counter and prices them from the price table (the API reports no usage or cost).
import { executeLocalTool, LOCAL_TOOLS } from './localTools';
import { detectConfinement } from './sandbox';
import { agentProcessEnv } from './sandbox/agentProcess';
import type { Confinement } from './sandbox/confinement';
import type { ToolSpec } from './localTools';
import { DEFAULT_PRICES, priceTokens } from './pricing';
import type { PriceTable } from './pricing';
import { redactText, secretValuesOf } from '../shared/redaction';
import { extractJsonAnswer } from './structured';
import type { AgentBackend, AgentEventListener, AgentRequest, AgentResult, AgentStatus } from './types';
import { validateAgentRequest } from './types';

export type ChatPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly input: unknown };

export type ChatMessage =
  | { readonly role: 'user'; readonly text: string }
  | { readonly role: 'assistant'; readonly parts: readonly ChatPart[] }
  | {
      readonly role: 'tool_results';
      readonly results: readonly { readonly id: string; readonly output: string; readonly isError: boolean }[];
    };

/** What an in-process model must offer; the VS Code adapter maps vscode.lm onto it. */
export interface ChatModelPort {
  /** The model id reported in results and metrics. */
  readonly id: string;
  /** Streams one model turn. Throwing means an API error (the message is kept, redacted). */
  send(messages: readonly ChatMessage[], tools: readonly ToolSpec[], signal: AbortSignal): AsyncIterable<ChatPart>;
  countTokens(text: string, signal: AbortSignal): Promise<number>;
}

export interface InProcessBackendOptions {
  readonly id?: string;
  /** Picks the model for a request (e.g. vscode.lm.selectChatModels by request.model). */
  readonly model: (request: AgentRequest) => ChatModelPort | Promise<ChatModelPort>;
  readonly prices?: PriceTable;
  readonly tools?: readonly ToolSpec[];
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * How its Bash tool's commands are confined (the file tools refuse paths outside the
   * worktree themselves); default: what this machine offers a scripted agent.
   */
  readonly confinement?: Confinement;
}

class StopError extends Error {
  override readonly name = 'StopError';
}

/** Resolves with the promise, or rejects with StopError as soon as the signal aborts (a model that ignores the signal cannot hang the run). */
function raceStop<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new StopError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new StopError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** Serializes the conversation for token counting (what the model is sent, roughly). */
function transcript(messages: readonly ChatMessage[]): string {
  return messages
    .map((m) =>
      m.role === 'user'
        ? m.text
        : m.role === 'assistant'
          ? m.parts.map((p) => (p.type === 'text' ? p.text : `${p.name} ${JSON.stringify(p.input)}`)).join('\n')
          : m.results.map((r) => r.output).join('\n'),
    )
    .join('\n');
}

export function createInProcessBackend(options: InProcessBackendOptions): AgentBackend {
  const id = options.id ?? 'in-process';
  const prices = options.prices ?? DEFAULT_PRICES;
  const tools = options.tools ?? LOCAL_TOOLS;
  const confinement = options.confinement ?? detectConfinement('scripted');
  return {
    id,
    confinement,
    async run(request: AgentRequest, onEvent?: AgentEventListener): Promise<AgentResult> {
      validateAgentRequest(request);
      const started = Date.now();
      const env = agentProcessEnv('scripted', options.baseEnv, request);
      const secrets = secretValuesOf(env);
      const stop = new AbortController();
      let stopReason: 'abort' | 'timeout' | undefined;
      const onAbort = (): void => {
        stopReason ??= 'abort';
        stop.abort();
      };
      if (request.signal?.aborted === true) onAbort();
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => {
        stopReason ??= 'timeout';
        stop.abort();
      }, request.timeoutMs);

      const sessionId = `inproc-${started.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
      let model: ChatModelPort | undefined;
      let tokens = { input: 0, output: 0, cacheRead: 0, cacheCreate: 0 };
      let turns = 0;
      let lastText = '';
      const errors: string[] = [];
      const finish = (status: AgentStatus, subtype: string): AgentResult => ({
        status,
        text: lastText,
        structured: status === 'success' ? extractJsonAnswer(lastText) : undefined,
        turns,
        durationMs: Date.now() - started,
        tokens,
        costUsd: priceTokens(prices, model?.id ?? request.model, tokens),
        model: model?.id ?? request.model,
        sessionId,
        exitCode: null,
        stderrTail: '',
        subtype,
        errors: errors.map((e) => redactText(e, secrets)),
        ...(status === 'cancelled' && stopReason !== undefined ? { stopReason } : {}),
      });
      const guard = (): void => {
        if (stop.signal.aborted) throw new StopError();
      };

      try {
        model = await raceStop(Promise.resolve(options.model(request)), stop.signal);
        const schemaNote =
          request.jsonSchema !== undefined
            ? `\n\nEnd your answer with one \`\`\`json block matching this JSON Schema:\n${JSON.stringify(request.jsonSchema)}`
            : '';
        const messages: ChatMessage[] = [
          { role: 'user', text: `${request.appendSystemPrompt ? `${request.appendSystemPrompt}\n\n` : ''}${request.prompt}${schemaNote}` },
        ];
        onEvent?.({ type: 'init', sessionId, model: model.id, cwd: request.cwd, tools: tools.map((t) => t.name) });
        for (;;) {
          guard();
          const input = await raceStop(model.countTokens(transcript(messages), stop.signal), stop.signal);
          const parts: ChatPart[] = [];
          const stream = model.send(messages, tools, stop.signal)[Symbol.asyncIterator]();
          for (;;) {
            const next = await raceStop(stream.next(), stop.signal);
            if (next.done === true) break;
            const part = next.value;
            parts.push(part);
            if (part.type === 'text') onEvent?.({ type: 'text', text: part.text });
            else onEvent?.({ type: 'tool_use', id: part.id, name: part.name, input: part.input });
          }
          guard();
          turns += 1;
          const output = await raceStop(model.countTokens(transcript([{ role: 'assistant', parts }]), stop.signal), stop.signal);
          tokens = { ...tokens, input: tokens.input + input, output: tokens.output + output };
          const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
          if (text.length > 0) lastText = text;
          messages.push({ role: 'assistant', parts });
          const calls = parts.filter((p): p is Extract<ChatPart, { type: 'tool_call' }> => p.type === 'tool_call');
          if (request.budgetUsd !== undefined && priceTokens(prices, model.id, tokens) >= request.budgetUsd)
            return finish('budget', 'error_max_budget_usd');
          if (calls.length === 0) return finish('success', 'success');
          if (turns >= request.maxTurns) return finish('max_turns', 'error_max_turns');
          const results: { id: string; output: string; isError: boolean }[] = [];
          for (const call of calls) {
            guard();
            const r = await executeLocalTool(call.name, call.input, {
              cwd: request.cwd,
              env,
              signal: stop.signal,
              confinement,
              ...(request.scratchDir !== undefined ? { scratchDir: request.scratchDir } : {}),
            });
            results.push({ id: call.id, ...r });
            onEvent?.({ type: 'tool_result', toolUseId: call.id, isError: r.isError, output: r.output });
          }
          messages.push({ role: 'tool_results', results });
        }
      } catch (err) {
        if (err instanceof StopError || stop.signal.aborted) return finish('cancelled', 'cancelled');
        errors.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
        return finish('error', 'error_api');
      } finally {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}
