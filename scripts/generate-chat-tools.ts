// Writes package.json's contributes.languageModelTools from the tool catalogue
// (src/mcp/tools.ts): names, descriptions and the JSON Schema of each zod input. Run after
// changing a tool: `npx tsx scripts/generate-chat-tools.ts && npm run format`; a unit test
// fails while they differ.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inputJsonSchema, TOOLS, vscodeToolName } from '../src/mcp/tools';

const file = path.resolve(__dirname, '..', 'package.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { contributes: Record<string, unknown> };
const camel = (n: string): string => `ralph${n.replace(/(^|_)([a-z])/g, (_m, _s: string, c: string) => c.toUpperCase())}`;
pkg.contributes['languageModelTools'] = TOOLS.map((t) => ({
  name: vscodeToolName(t),
  toolReferenceName: camel(t.name),
  displayName: t.title,
  modelDescription: t.description,
  userDescription: t.title,
  canBeReferencedInPrompt: true,
  tags: ['ralph', t.decides ? 'ralph-decides' : 'ralph-reads'],
  inputSchema: inputJsonSchema(t),
}));
fs.writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
console.log(`wrote ${TOOLS.length} languageModelTools into package.json`);
