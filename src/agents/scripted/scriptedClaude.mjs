#!/usr/bin/env node
// The scripted stand-in for `claude -p --output-format stream-json --verbose`: same flags,
// same stdin prompt, same stream-json lines and exit codes, but the "model" is a scenario
// (RALPH_SCENARIO = a JSON file path or inline JSON; format in test/kit/README.md) and the tool
// calls (Write/Edit/Bash) are performed here, in the working directory. Plain JS so the
// demo and fast tests run it under bare Node.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { DEFAULT_USAGE, claudePrice, loadScenario, selectScript, turnAt } from './scenario.cjs';

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const fail = (message) => {
  process.stderr.write(`Error: ${message}\n`);
  process.exit(1);
};

function parseArgs(argv) {
  const opts = {
    print: false,
    verbose: false,
    outputFormat: 'text',
    model: 'claude-sonnet-4-5-20250929',
    maxTurns: Infinity,
    budget: undefined,
    permissionMode: 'manual',
    jsonSchema: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) fail(`option '${a}' argument missing`);
      return v;
    };
    // As the CLI answers it (the preflight starts it this way inside the sandbox).
    if (a === '--version' || a === '-v') {
      process.stdout.write('2.1.332 (Claude Code, scripted)\n');
      process.exit(0);
    }
    if (a === '-p' || a === '--print') opts.print = true;
    else if (a === '--verbose') opts.verbose = true;
    else if (a === '--output-format') opts.outputFormat = next();
    else if (a === '--model') opts.model = next();
    else if (a === '--max-turns') opts.maxTurns = Number(next());
    else if (a === '--max-budget-usd') opts.budget = Number(next());
    else if (a === '--permission-mode') opts.permissionMode = next();
    else if (a === '--json-schema') opts.jsonSchema = next();
    else if (['--append-system-prompt', '--allowedTools', '--disallowedTools', '--session-id', '--resume', '--add-dir'].includes(a)) next();
    else if (a === '--no-session-persistence' || a === '--strict-mcp-config') continue;
    // It starts no MCP server, so their configuration is only read past (as the CLI takes it).
    else if (a === '--mcp-config' || a === '--settings') next();
    else fail(`unknown option '${a}'`);
  }
  return opts;
}

function readStdin() {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

function performTool(call, cwd) {
  const abs = (p) => (isAbsolute(p) ? p : resolve(cwd, p));
  if (call.tool === 'mcp')
    return {
      output: `No such tool available: mcp__${call.server}__${call.name} (the scripted executable has no MCP servers)`,
      isError: true,
    };
  try {
    if (call.tool === 'write') {
      mkdirSync(dirname(abs(call.path)), { recursive: true });
      writeFileSync(abs(call.path), call.content);
      return { output: `File created successfully at: ${abs(call.path)}`, isError: false };
    }
    if (call.tool === 'read') return { output: readFileSync(abs(call.path), 'utf8'), isError: false };
    if (call.tool === 'edit') {
      const text = readFileSync(abs(call.path), 'utf8');
      if (!text.includes(call.old)) return { output: `String to replace not found in file.\nString: ${call.old}`, isError: true };
      writeFileSync(abs(call.path), text.replace(call.old, call.new));
      return { output: `The file ${abs(call.path)} has been updated.`, isError: false };
    }
    const r = spawnSync('bash', ['-c', call.command], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trimEnd();
    return { output: r.status === 0 ? output : `Exit code ${r.status}\n${output}`, isError: r.status !== 0 };
  } catch (err) {
    return { output: String(err.message ?? err), isError: true };
  }
}

function toolUse(call, id, cwd) {
  const abs = (p) => (isAbsolute(p) ? p : resolve(cwd, p));
  if (call.tool === 'mcp') return { type: 'tool_use', id, name: `mcp__${call.server}__${call.name}`, input: call.input };
  if (call.tool === 'write') return { type: 'tool_use', id, name: 'Write', input: { file_path: abs(call.path), content: call.content } };
  if (call.tool === 'read') return { type: 'tool_use', id, name: 'Read', input: { file_path: abs(call.path) } };
  if (call.tool === 'edit')
    return { type: 'tool_use', id, name: 'Edit', input: { file_path: abs(call.path), old_string: call.old, new_string: call.new } };
  return { type: 'tool_use', id, name: 'Bash', input: { command: call.command, description: 'scripted command' } };
}

/** Garbage on stdout, then an end without a result line, as the turn says; true when the process is ending. */
async function misbehave(turn) {
  if (turn.garbage !== undefined) {
    const { lines, bytesPerLine, binary } = turn.garbage;
    for (let i = 0; i < lines; i++) {
      const line = binary
        ? Buffer.from(Array.from({ length: bytesPerLine }, (_, j) => (i * 31 + j * 7) % 256).map((b) => (b === 10 ? 11 : b)))
        : Buffer.from(`garbage ${i} `.padEnd(bytesPerLine, '~{'));
      process.stdout.write(Buffer.concat([line, Buffer.from('\n')]));
    }
  }
  if (turn.crash !== undefined) {
    // Mid-stream: what was written is out (flushed first), no result follows.
    await new Promise((r) => process.stdout.write('', r));
    if (turn.crash.signal !== undefined) process.kill(process.pid, turn.crash.signal);
    process.exit(turn.crash.code);
  }
  if (turn.noResult === true) {
    process.exitCode = 0;
    return true;
  }
  return false;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!opts.print) fail('the scripted claude only supports -p');
  if (opts.outputFormat !== 'stream-json') fail('the scripted claude only supports --output-format stream-json');
  if (!opts.verbose) fail('When using --print, --output-format=stream-json requires --verbose');
  const source = process.env.RALPH_SCENARIO;
  if (source === undefined || source === '') fail('RALPH_SCENARIO is not set (a scenario file path or inline JSON)');
  let scenario;
  try {
    scenario = loadScenario(source);
  } catch (err) {
    fail(err.message);
  }

  const prompt = readStdin();
  const cwd = process.cwd();
  const sessionId = randomUUID();
  const started = Date.now();
  const script = selectScript(scenario, prompt, 'claude');
  const model = script?.model ?? opts.model;
  const price = claudePrice(model);
  const totals = { input: 0, output: 0, cacheRead: 0, cacheCreate: 0, cost: 0 };
  let turns = 0;

  out({
    type: 'system',
    subtype: 'init',
    cwd,
    session_id: sessionId,
    tools: ['Bash', 'Edit', 'Read', 'Write'],
    mcp_servers: [],
    model,
    permissionMode: opts.permissionMode,
    claude_code_version: 'scripted',
    uuid: randomUUID(),
  });

  const finish = (fields, exitCode) => {
    const modelUsage = {
      [model]: {
        inputTokens: totals.input,
        outputTokens: totals.output,
        cacheReadInputTokens: totals.cacheRead,
        cacheCreationInputTokens: totals.cacheCreate,
        webSearchRequests: 0,
        costUSD: totals.cost,
        contextWindow: 200000,
        maxOutputTokens: 64000,
      },
    };
    // Keys deliberately not in the order the real CLI uses: parsers must not care.
    out({
      session_id: sessionId,
      total_cost_usd: totals.cost,
      num_turns: turns,
      duration_ms: Date.now() - started,
      duration_api_ms: 0,
      is_error: false,
      usage: {
        input_tokens: totals.input,
        cache_creation_input_tokens: totals.cacheCreate,
        cache_read_input_tokens: totals.cacheRead,
        output_tokens: totals.output,
      },
      modelUsage,
      permission_denials: [],
      uuid: randomUUID(),
      ...fields,
      type: 'result',
    });
    process.exitCode = exitCode;
  };

  if (script === undefined) {
    finish(
      {
        subtype: 'success',
        is_error: true,
        result: 'API Error: 400 scripted: no script matches this prompt',
        terminal_reason: 'api_error',
      },
      1,
    );
    return;
  }

  for (let index = 0; ; index++) {
    const turn = turnAt(script, index);
    if (turn.hang) {
      // "Never answer": wait until the harness stops us.
      await new Promise(() => setInterval(() => {}, 1 << 30));
    }
    if (turn.error !== undefined && turn.error.times !== undefined) {
      // A transient error: the real CLI retries and says so in api_retry lines.
      for (let attempt = 1; attempt <= turn.error.times; attempt++) {
        out({
          type: 'system',
          subtype: 'api_retry',
          attempt,
          max_retries: turn.error.times,
          retry_delay_ms: 0,
          error_status: turn.error.status,
          error: turn.error.message,
          session_id: sessionId,
          uuid: randomUUID(),
        });
      }
    } else if (turn.error !== undefined) {
      finish(
        {
          subtype: 'success',
          is_error: true,
          result: `API Error: ${turn.error.status} ${turn.error.message}`,
          terminal_reason: 'api_error',
          stop_reason: null,
        },
        1,
      );
      return;
    }
    if (turn.delayMs > 0) await new Promise((r) => setTimeout(r, turn.delayMs));
    turns += 1;
    const usage = { ...DEFAULT_USAGE, ...(turn.usage ?? {}) };
    totals.input += usage.input_tokens;
    totals.output += usage.output_tokens;
    totals.cacheRead += usage.cache_read_input_tokens;
    totals.cacheCreate += usage.cache_creation_input_tokens;
    totals.cost +=
      (usage.input_tokens * price.input +
        usage.output_tokens * price.output +
        usage.cache_read_input_tokens * price.cacheRead +
        usage.cache_creation_input_tokens * price.cacheCreate) /
      1e6;

    const messageId = `msg_scripted_${index}`;
    const assistant = (content) =>
      out({
        type: 'assistant',
        message: { id: messageId, type: 'message', role: 'assistant', model, content, stop_reason: null, usage },
        parent_tool_use_id: null,
        session_id: sessionId,
        uuid: randomUUID(),
      });
    if (turn.text !== undefined) assistant([{ type: 'text', text: turn.text }]);
    const calls = turn.tools.map((call, i) => ({ call, id: `toolu_scripted_${index}_${i}` }));
    for (const { call, id } of calls) assistant([toolUse(call, id, cwd)]);
    if (calls.length > 0) {
      const results = calls.map(({ call, id }) => {
        const r = performTool(call, cwd);
        return { type: 'tool_result', tool_use_id: id, content: r.output, is_error: r.isError };
      });
      out({
        type: 'user',
        message: { role: 'user', content: results },
        parent_tool_use_id: null,
        session_id: sessionId,
        uuid: randomUUID(),
      });
    }

    if (await misbehave(turn)) return;

    if (opts.budget !== undefined && totals.cost >= opts.budget) {
      finish(
        {
          subtype: 'error_max_budget_usd',
          is_error: true,
          errors: [`Reached maximum budget ($${opts.budget})`],
          terminal_reason: 'budget_exhausted',
        },
        1,
      );
      return;
    }
    if (calls.length === 0) {
      const structured = opts.jsonSchema !== undefined ? turn.structured : undefined;
      const text = turn.structured !== undefined && opts.jsonSchema === undefined ? JSON.stringify(turn.structured) : (turn.text ?? '');
      if (opts.jsonSchema !== undefined && structured === undefined) {
        finish(
          {
            subtype: 'error_max_structured_output_retries',
            is_error: true,
            errors: ['the scripted turn has no structured answer'],
            terminal_reason: 'structured_output_retry_exhausted',
          },
          1,
        );
        return;
      }
      finish(
        {
          subtype: 'success',
          result: text,
          stop_reason: 'end_turn',
          terminal_reason: 'completed',
          ...(structured !== undefined ? { structured_output: structured } : {}),
        },
        0,
      );
      return;
    }
    if (turns >= opts.maxTurns) {
      // Like the real CLI: the limit shows as max-turns + 1.
      turns += 1;
      finish(
        {
          subtype: 'error_max_turns',
          is_error: true,
          errors: [`Reached maximum number of turns (${opts.maxTurns})`],
          terminal_reason: 'max_turns',
        },
        1,
      );
      return;
    }
  }
}

main().catch((err) => fail(err.stack ?? String(err)));
