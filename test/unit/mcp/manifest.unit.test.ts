// package.json declares the chat surfaces VS Code reads before the extension runs: each
// language-model tool's name, description and input schema must be the catalogue's, the
// participant's commands the ones the handler answers.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChatIds, PARTICIPANT_COMMANDS } from '../../../src/extension/chat/chatIds';
import { inputJsonSchema, TOOLS, vscodeToolName } from '../../../src/mcp/tools';

interface Manifest {
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  contributes: {
    languageModelTools: { name: string; modelDescription: string; inputSchema: unknown; tags: string[]; toolReferenceName: string }[];
    chatParticipants: { id: string; name: string; commands: { name: string }[] }[];
    mcpServerDefinitionProviders: { id: string; label: string }[];
    modelContextServerCollections: { id: string; label: string }[];
    commands: { command: string; category?: string }[];
  };
}

const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as Manifest;

describe('package.json chat contributions', () => {
  it('declares every catalogue tool with its description and the JSON Schema generated from its zod input', () => {
    const declared = manifest.contributes.languageModelTools;
    assert.deepEqual(
      declared.map((t) => t.name),
      TOOLS.map(vscodeToolName),
    );
    for (const t of TOOLS) {
      const d = declared.find((x) => x.name === vscodeToolName(t));
      assert.equal(d?.modelDescription, t.description, t.name);
      assert.deepEqual(d?.inputSchema, inputJsonSchema(t), `${t.name}: run npx tsx scripts/generate-chat-tools.ts`);
      assert.ok(d?.tags.includes(t.decides ? 'ralph-decides' : 'ralph-reads'), t.name);
    }
  });

  it('declares the participant with the commands it answers, the MCP provider and the story command; engines stay at 1.100', () => {
    const [p] = manifest.contributes.chatParticipants;
    assert.equal(p?.id, ChatIds.participant);
    assert.equal(p?.name, 'ralph');
    assert.deepEqual(
      p?.commands.map((c) => c.name),
      [...PARTICIPANT_COMMANDS],
    );
    assert.deepEqual(manifest.contributes.mcpServerDefinitionProviders, [{ id: ChatIds.mcpProvider, label: 'Ralph Loop' }]);
    // VS Code 1.100 checks the provider id against the contribution point's earlier name.
    assert.deepEqual(manifest.contributes.modelContextServerCollections, [{ id: ChatIds.mcpProvider, label: 'Ralph Loop' }]);
    assert.equal(manifest.contributes.commands.find((c) => c.command === ChatIds.showTaskStory)?.category, 'Ralph');
    assert.equal(manifest.engines.vscode, '^1.100.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.100.0');
  });
});
