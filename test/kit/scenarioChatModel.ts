// A ChatModelPort (the in-process backend's model) played from a scenario, so the
// in-process agent loop is tested with the same scenarios as the CLIs. Turn = number of
// assistant messages; tokens are counted as bytes / 4; `hang` never yields (and ignores
// the signal, to prove the loop cannot hang); `error` throws like a LanguageModelError.
import type { ChatMessage, ChatModelPort, ChatPart } from '../../src/agents/inProcess';
import type { ToolSpec } from '../../src/agents/localTools';
import { parseScenario, selectScript, turnAt } from '../../src/agents/scripted/scenario.cjs';

export class ScriptedModelError extends Error {
  override readonly name = 'ScriptedModelError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function scenarioChatModel(scenarioInput: unknown, id = 'copilot-gpt-test'): ChatModelPort & { readonly calls: ChatMessage[][] } {
  const scenario = parseScenario(scenarioInput, 'chat model scenario');
  const calls: ChatMessage[][] = [];
  const failures = new Map<number, number>();
  return {
    id,
    calls,
    countTokens(text: string): Promise<number> {
      return Promise.resolve(Math.ceil(Buffer.byteLength(text) / 4));
    },
    async *send(messages: readonly ChatMessage[], _tools: readonly ToolSpec[]): AsyncIterable<ChatPart> {
      calls.push([...messages]);
      const first = messages[0];
      const prompt = first?.role === 'user' ? first.text : '';
      const script = selectScript(scenario, prompt, 'claude');
      if (script === undefined) throw new ScriptedModelError(400, 'no script matches this prompt');
      const index = messages.filter((m) => m.role === 'assistant').length;
      const turn = turnAt(script, index);
      if (turn.hang) await new Promise<never>(() => undefined);
      const failed = failures.get(index) ?? 0;
      if (turn.error !== undefined && (turn.error.times === undefined || failed < turn.error.times)) {
        failures.set(index, failed + 1);
        throw new ScriptedModelError(turn.error.status, turn.error.message);
      }
      if (turn.text !== undefined) yield { type: 'text', text: turn.text };
      let i = 0;
      for (const call of turn.tools) {
        const callId = `call_${index}_${i++}`;
        if (call.tool === 'write')
          yield { type: 'tool_call', id: callId, name: 'Write', input: { file_path: call.path, content: call.content } };
        else if (call.tool === 'edit')
          yield {
            type: 'tool_call',
            id: callId,
            name: 'Edit',
            input: { file_path: call.path, old_string: call.old, new_string: call.new },
          };
        else if (call.tool === 'read') yield { type: 'tool_call', id: callId, name: 'Read', input: { file_path: call.path } };
        else if (call.tool === 'bash') yield { type: 'tool_call', id: callId, name: 'Bash', input: { command: call.command } };
        else yield { type: 'tool_call', id: callId, name: `mcp__${call.server}__${call.name}`, input: call.input };
      }
      if (turn.structured !== undefined) yield { type: 'text', text: '```json\n' + JSON.stringify(turn.structured) + '\n```' };
    },
  };
}
