// Writes dist/schema/ralph.config.schema.json from the zod schema in src/project/config.ts,
// the single source of truth. VS Code validates and completes ralph.config.json with it
// (package.json contributes.jsonValidation). Run: npx tsx scripts/generate-schema.ts [outFile]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONFIG_SCHEMA_PATH, configJsonSchema } from '../src/project/config';

const out = path.resolve(__dirname, '..', process.argv[2] ?? CONFIG_SCHEMA_PATH);
fs.mkdirSync(path.dirname(out), { recursive: true });
const schema = configJsonSchema();
fs.writeFileSync(out, `${JSON.stringify(schema, null, 2)}\n`);
process.stdout.write(`wrote ${path.relative(process.cwd(), out)}\n`);
