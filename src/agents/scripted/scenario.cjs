// The scenario format shared by the scripted model server (modelServer.ts) and the
// scripted claude executable (scriptedClaude.mjs): per turn a text, tool calls,
// a structured answer, usage numbers, an HTTP error or "never answer". Plain CommonJS so the
// scripted executable runs under bare Node and TypeScript imports it; types in scenario.d.cts. See test/kit/README.md.
'use strict';
const { readFileSync } = require('node:fs');
const { z } = require('zod');

const toolCall = z.discriminatedUnion('tool', [
  z.strictObject({ tool: z.literal('write'), path: z.string().min(1), content: z.string() }),
  z.strictObject({ tool: z.literal('edit'), path: z.string().min(1), old: z.string().min(1), new: z.string() }),
  z.strictObject({ tool: z.literal('bash'), command: z.string().min(1) }),
  // A tool of an MCP server the CLI was given (claude: `mcp__<server>__<name>`).
  z.strictObject({
    tool: z.literal('mcp'),
    server: z.string().regex(/^[A-Za-z0-9_-]+$/),
    name: z.string().regex(/^[A-Za-z0-9_-]+$/),
    input: z.record(z.string(), z.unknown()).default({}),
  }),
  // Claude's Edit refuses a file it has not Read in the session.
  z.strictObject({ tool: z.literal('read'), path: z.string().min(1) }),
]);

const usage = z.strictObject({
  input_tokens: z.number().int().nonnegative().default(100),
  output_tokens: z.number().int().nonnegative().default(20),
  cache_read_input_tokens: z.number().int().nonnegative().default(0),
  cache_creation_input_tokens: z.number().int().nonnegative().default(0),
});

const turn = z
  .strictObject({
    text: z.string().optional(),
    tools: z.array(toolCall).default([]),
    structured: z.unknown().optional(),
    usage: usage.optional(),
    /** An HTTP error; with `times`, only the first `times` requests of this turn fail (retries then succeed). */
    error: z
      .strictObject({
        status: z.number().int().min(400).max(599),
        message: z.string().default('scripted error'),
        times: z.number().int().positive().optional(),
      })
      .optional(),
    hang: z.boolean().default(false),
    delayMs: z.number().int().nonnegative().default(0),
    /**
     * Misbehaviour of the CLI process itself (scriptedClaude.mjs only; the model server
     * ignores it): after this turn's lines, `garbage` lines on stdout (not JSON, or binary),
     * then the process ends without a result line: `crash` by a signal or an exit code,
     * `noResult` with exit 0.
     */
    garbage: z
      .strictObject({
        lines: z.number().int().min(1),
        bytesPerLine: z.number().int().min(1).default(80),
        binary: z.boolean().default(false),
      })
      .optional(),
    crash: z
      .strictObject({ signal: z.enum(['SIGKILL', 'SIGSEGV', 'SIGABRT']).optional(), code: z.number().int().min(1).max(255).default(1) })
      .optional(),
    noResult: z.boolean().optional(),
  })
  .refine((t) => !(t.hang && t.error !== undefined), { message: 'a turn cannot both hang and fail' })
  .refine((t) => !(t.crash !== undefined && t.noResult === true), { message: 'a turn cannot both crash and end without a result' });

const script = z.strictObject({
  name: z.string().default('script'),
  /** Selects this script when the prompt (first user message) contains this text. */
  match: z.string().optional(),
  /** Restricts the script to one API. */
  agent: z.enum(['claude', 'codex']).optional(),
  /** The model the answer claims; for claude this decides the CLI's pricing. */
  model: z.string().default('claude-sonnet-4-5-20250929'),
  turns: z.array(turn).min(1),
  /** When the turns run out: answer "Done." and stop, or repeat the last turn. */
  after: z.enum(['end', 'repeat']).default('end'),
});

const multi = z.strictObject({ scripts: z.array(script).min(1) });
const single = script.transform((s) => ({ scripts: [s] }));

/** A scenario: `{scripts: [...]}`, or one script standing alone. */
const scenarioSchema = z.union([multi, single]);

class ScenarioError extends Error {
  name = 'ScenarioError';
  constructor(source, message) {
    super(`${source}: ${message}`);
    this.source = source;
  }
}

/** Validates a scenario object; `source` names it in error messages. */
function parseScenario(value, source = 'scenario') {
  // Pick the branch by shape so errors name the real place instead of "invalid union".
  const isMulti = typeof value === 'object' && value !== null && 'scripts' in value;
  const parsed = (isMulti ? multi : single).safeParse(value);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ScenarioError(source, `invalid scenario: ${detail}`);
  }
  return parsed.data;
}

/** Loads a scenario from a JSON file path, or from inline JSON text starting with `{`. */
function loadScenario(pathOrJson) {
  const text = pathOrJson.trimStart().startsWith('{') ? pathOrJson : readFileSync(pathOrJson, 'utf8');
  const source = pathOrJson.trimStart().startsWith('{') ? 'inline scenario' : pathOrJson;
  let json;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ScenarioError(source, `not JSON: ${err.message}`);
  }
  return parseScenario(json, source);
}

/** The script for a prompt: the first whose `match` occurs in it, else the first without `match`. */
function selectScript(scenario, promptText, agent) {
  const eligible = scenario.scripts.filter((s) => s.agent === undefined || s.agent === agent);
  return eligible.find((s) => s.match !== undefined && promptText.includes(s.match)) ?? eligible.find((s) => s.match === undefined);
}

const END_TURN = Object.freeze({ text: 'Done.', tools: [], hang: false, delayMs: 0 });

/** The turn to play at a 0-based index, honouring `after`. */
function turnAt(script, index) {
  if (index < script.turns.length) return script.turns[index];
  return script.after === 'repeat' ? script.turns[script.turns.length - 1] : END_TURN;
}

const DEFAULT_USAGE = Object.freeze({ input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });

/** Claude pricing the CLI applies (USD per million tokens), used by the scripted executable. */
function claudePrice(model) {
  if (/opus/.test(model)) return { input: 15, output: 75, cacheRead: 1.5, cacheCreate: 18.75 };
  if (/haiku/.test(model)) return { input: 1, output: 5, cacheRead: 0.1, cacheCreate: 1.25 };
  if (/sonnet/.test(model)) return { input: 3, output: 15, cacheRead: 0.3, cacheCreate: 3.75 };
  return { input: 4, output: 20, cacheRead: 0.4, cacheCreate: 5 };
}

/** Builds a codex apply_patch body for a write or edit tool call. */
function applyPatchText(call) {
  if (call.tool === 'write') {
    const lines = call.content.replace(/\n$/, '').split('\n');
    return `*** Begin Patch\n*** Add File: ${call.path}\n${lines.map((l) => `+${l}`).join('\n')}\n*** End Patch\n`;
  }
  const oldLines = call.old.replace(/\n$/, '').split('\n');
  const newLines = call.new.replace(/\n$/, '').split('\n');
  return `*** Begin Patch\n*** Update File: ${call.path}\n@@\n${oldLines.map((l) => `-${l}`).join('\n')}\n${newLines.map((l) => `+${l}`).join('\n')}\n*** End Patch\n`;
}

exports.scenarioSchema = scenarioSchema;
exports.ScenarioError = ScenarioError;
exports.parseScenario = parseScenario;
exports.loadScenario = loadScenario;
exports.selectScript = selectScript;
exports.END_TURN = END_TURN;
exports.turnAt = turnAt;
exports.DEFAULT_USAGE = DEFAULT_USAGE;
exports.claudePrice = claudePrice;
exports.applyPatchText = applyPatchText;
