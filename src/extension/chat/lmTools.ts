// The chat operations as VS Code language-model tools (`ralph_<name>`, contributed in
// package.json), so agent mode can call them. Input is validated again here (VS Code checks
// the schema, but the model and other extensions are still untrusted); the deciding tools
// ask the person first (confirmationMessages), and their decisions are recorded with actor
// `lm-tool`, relayed by VS Code. A failed operation throws, which VS Code hands the model.
import * as vscode from 'vscode';
import { RalphOperations, type RalphPort } from '../../mcp/operations';
import { parseToolInput, TOOLS, vscodeToolName, type ToolSpec } from '../../mcp/tools';
import { CHAT_ACTORS } from './chatIds';

export type RalphLmTool = vscode.LanguageModelTool<Record<string, unknown>>;

function toolFor(spec: ToolSpec, ops: RalphOperations): RalphLmTool {
  return {
    prepareInvocation(options): vscode.PreparedToolInvocation {
      const invocationMessage = `Ralph: ${spec.title.replace(/^Ralph /, '').toLowerCase()}`;
      if (!spec.decides || !spec.confirm) return { invocationMessage };
      const parsed = parseToolInput(spec, options.input);
      // Invalid input is refused by invoke(); the confirmation still names what was asked.
      const c = parsed.ok ? spec.confirm(parsed.args as never) : { title: spec.title, message: `Input: ${JSON.stringify(options.input)}` };
      return { invocationMessage, confirmationMessages: { title: c.title, message: new vscode.MarkdownString(c.message) } };
    },
    async invoke(options): Promise<vscode.LanguageModelToolResult> {
      const parsed = parseToolInput(spec, options.input);
      if (!parsed.ok) throw new Error(`${vscodeToolName(spec)}: invalid input: ${parsed.error}`);
      const r = await spec.run(ops, parsed.args as never);
      if (r.isError) throw new Error(r.text.trim());
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(r.text)]);
    },
  };
}

/** Every tool of the catalogue over the port, by its VS Code name. */
export function createLmTools(port: RalphPort): Map<string, RalphLmTool> {
  const ops = new RalphOperations(port, {
    actor: CHAT_ACTORS.tool,
    client: () => ({ name: 'vscode', version: vscode.version }),
    source: 'vscode-chat',
  });
  return new Map(TOOLS.map((t) => [vscodeToolName(t), toolFor(t, ops)]));
}
