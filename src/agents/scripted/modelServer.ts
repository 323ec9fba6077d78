// Over 400 lines because it imitates two wire protocols (Anthropic Messages, OpenAI Responses) over one scenario engine they share.
// The scripted model server: a node:http server on 127.0.0.1 that imitates the Anthropic
// Messages API (SSE and plain JSON) and the OpenAI Responses API (SSE) closely enough for
// the real `claude` and `codex` CLIs, answering every request from a scenario
// (scenario.cjs, test/kit/README.md). It is stateless per request: the turn is derived from
// the conversation the CLI sends. Every request is logged for assertions.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { DEFAULT_USAGE, applyPatchText, parseScenario, selectScript, turnAt } from './scenario.cjs';
import type { Scenario, Script, ToolCall, Turn, Usage } from './scenario.cjs';

export type ApiKind = 'anthropic' | 'openai' | 'other';

export interface LoggedRequest {
  readonly api: ApiKind;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  /** The user prompt text the script was selected by. */
  readonly prompt: string;
  /** 0-based turn played, -1 when none. */
  readonly turn: number;
  /** The selected script's name, '' when none. */
  readonly script: string;
  /** What the server did: 'stream' | 'json' | 'error <status>' | 'hang' | 'no-script'. */
  readonly answer: string;
}

export interface ModelServer {
  readonly url: string;
  readonly port: number;
  readonly requests: LoggedRequest[];
  /** Replaces the scenario for the following requests. */
  setScenario(scenario: unknown): void;
  /** Resolves once `count` requests have arrived (no polling sleeps in tests). */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

let idCounter = 0;
const nextId = (prefix: string): string => `${prefix}_${(++idCounter).toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Starts the server on 127.0.0.1, port 0; resolves once it listens. */
export async function startModelServer(scenarioInput: unknown): Promise<ModelServer> {
  let scenario: Scenario = parseScenario(scenarioInput, 'model server scenario');
  const requests: LoggedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  const errorCounts = new Map<string, number>();

  const log = (entry: LoggedRequest): void => {
    requests.push(entry);
    for (const w of [...waiters]) {
      if (requests.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };

  const server = createServer((req, res) => {
    void readBody(req).then(async (raw) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      let body: unknown;
      try {
        body = raw.length > 0 ? JSON.parse(raw) : {};
      } catch {
        body = raw;
      }
      const base = { method: req.method ?? 'GET', path, headers: req.headers, body };
      if (req.method === 'POST' && /\/v1\/messages\/count_tokens$/.test(path)) {
        log({ ...base, api: 'anthropic', prompt: '', turn: -1, script: '', answer: 'json' });
        return sendJson(res, 200, { input_tokens: 100 });
      }
      if (req.method === 'POST' && /\/v1\/messages$/.test(path)) return answerAnthropic(errorCounts, scenario, body, base, res, log);
      if (req.method === 'POST' && /\/v1\/responses$/.test(path)) return answerOpenAi(errorCounts, scenario, body, base, res, log);
      log({ ...base, api: 'other', prompt: '', turn: -1, script: '', answer: 'error 404' });
      return sendJson(res, 404, { error: { type: 'not_found_error', message: `no route ${path}` } });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setScenario(next: unknown): void {
      scenario = parseScenario(next, 'model server scenario');
      errorCounts.clear();
    },
    waitForRequests(count: number): Promise<void> {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close(): Promise<void> {
      // Hung answers keep their sockets open: destroy them so close() completes.
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Base = Pick<LoggedRequest, 'method' | 'path' | 'headers' | 'body'>;
type Log = (entry: LoggedRequest) => void;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': nextId('req') });
  res.end(text);
}

function sse(res: ServerResponse, frames: readonly { event: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': nextId('req') });
  for (const f of frames) res.write(`event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
  res.end();
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const asRecord = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((b) => {
      const r = asRecord(b);
      return typeof r.text === 'string' ? r.text : '';
    })
    .join('\n');
}

/** Plays the common parts of a turn: no script, errors, hangs, delays. Returns false when handled. */
async function preamble(
  errorCounts: Map<string, number>,
  api: ApiKind,
  script: Script | undefined,
  turnIndex: number,
  prompt: string,
  base: Base,
  res: ServerResponse,
  log: Log,
): Promise<Turn | undefined> {
  if (script === undefined) {
    log({ ...base, api, prompt, turn: -1, script: '', answer: 'no-script' });
    sendJson(res, 400, {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'scripted server: no script matches this prompt' },
    });
    return undefined;
  }
  const turn = turnAt(script, turnIndex);
  // `times`: the only state the server keeps — how often this turn already failed.
  const key = `${api}#${script.name}#${turnIndex}`;
  const failedBefore = errorCounts.get(key) ?? 0;
  if (turn.error !== undefined && (turn.error.times === undefined || failedBefore < turn.error.times)) {
    errorCounts.set(key, failedBefore + 1);
    log({ ...base, api, prompt, turn: turnIndex, script: script.name, answer: `error ${turn.error.status}` });
    const type = turn.error.status === 529 ? 'overloaded_error' : turn.error.status === 429 ? 'rate_limit_error' : 'api_error';
    sendJson(
      res,
      turn.error.status,
      api === 'openai'
        ? { error: { type, message: turn.error.message, code: type } }
        : { type: 'error', error: { type, message: turn.error.message } },
    );
    return undefined;
  }
  if (turn.hang) {
    log({ ...base, api, prompt, turn: turnIndex, script: script.name, answer: 'hang' });
    return undefined; // never answer; close() destroys the socket
  }
  if (turn.delayMs > 0) await delay(turn.delayMs);
  return turn;
}

// ---------------------------------------------------------------- Anthropic Messages API

async function answerAnthropic(
  errorCounts: Map<string, number>,
  scenario: Scenario,
  bodyValue: unknown,
  base: Base,
  res: ServerResponse,
  log: Log,
): Promise<void> {
  const body = asRecord(bodyValue);
  const messages = asArray(body.messages).map(asRecord);
  const turnIndex = messages.filter((m) => m.role === 'assistant').length;
  const firstUser = messages.find((m) => m.role === 'user');
  const prompt = textOf(firstUser?.content);
  const script = selectScript(scenario, prompt, 'claude');
  const turn = await preamble(errorCounts, 'anthropic', script, turnIndex, prompt, base, res, log);
  if (turn === undefined || script === undefined) return;

  const cwd =
    /Primary working directory: (.+)/
      .exec(JSON.stringify(body.system ?? '') + '\n' + prompt)?.[1]
      ?.replace(/\\n.*$/, '')
      .trim() ?? process.cwd();
  const toolNames = new Set(asArray(body.tools).map((t) => String(asRecord(t).name ?? '')));
  const blocks: Record<string, unknown>[] = [];
  if (turn.text !== undefined) blocks.push({ type: 'text', text: withToolResult(turn.text, messages) });
  turn.tools.forEach((call, i) =>
    blocks.push({ type: 'tool_use', id: `toolu_t${turnIndex}_${i}_${nextId('x')}`, ...claudeTool(call, cwd) }),
  );
  if (turn.structured !== undefined) {
    const tool = [...toolNames].find((n) => n === 'StructuredOutput');
    if (tool !== undefined)
      blocks.push({ type: 'tool_use', id: `toolu_t${turnIndex}_s_${nextId('x')}`, name: tool, input: turn.structured });
    else blocks.push({ type: 'text', text: JSON.stringify(turn.structured) });
  }
  if (blocks.length === 0) blocks.push({ type: 'text', text: '' });
  const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const usage: Usage = { ...DEFAULT_USAGE, ...(turn.usage ?? {}) };
  const model = script.model;
  const id = nextId('msg');
  const streaming = body.stream === true;
  log({ ...base, api: 'anthropic', prompt, turn: turnIndex, script: script.name, answer: streaming ? 'stream' : 'json' });

  if (!streaming) {
    sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    });
    return;
  }
  const frames: { event: string; data: unknown }[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
    },
  ];
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      frames.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      frames.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } },
      });
    } else {
      frames.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } },
      });
      frames.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } },
      });
    }
    frames.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  frames.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
  });
  frames.push({ event: 'message_stop', data: { type: 'message_stop' } });
  sse(res, frames);
}

/** `{{tool_result}}` in a turn's text: the text of the newest tool result the CLI sent back. */
function withToolResult(text: string, messages: readonly Record<string, unknown>[]): string {
  if (!text.includes('{{tool_result}}')) return text;
  let found = '';
  for (const m of messages) {
    if (m.role !== 'user') continue;
    for (const b of asArray(m.content).map(asRecord)) if (b.type === 'tool_result') found = textOf(b.content);
  }
  return text.split('{{tool_result}}').join(found);
}

function claudeTool(call: ToolCall, cwd: string): { name: string; input: Record<string, unknown> } {
  const abs = (p: string): string => (isAbsolute(p) ? p : resolvePath(cwd, p));
  switch (call.tool) {
    case 'mcp':
      return { name: `mcp__${call.server}__${call.name}`, input: call.input };
    case 'write':
      return { name: 'Write', input: { file_path: abs(call.path), content: call.content } };
    case 'edit':
      return { name: 'Edit', input: { file_path: abs(call.path), old_string: call.old, new_string: call.new, replace_all: false } };
    case 'bash':
      return { name: 'Bash', input: { command: call.command, description: 'scripted command' } };
    case 'read':
      return { name: 'Read', input: { file_path: abs(call.path) } };
  }
}

// ---------------------------------------------------------------- OpenAI Responses API

async function answerOpenAi(
  errorCounts: Map<string, number>,
  scenario: Scenario,
  bodyValue: unknown,
  base: Base,
  res: ServerResponse,
  log: Log,
): Promise<void> {
  const body = asRecord(bodyValue);
  const input = asArray(body.input).map(asRecord);
  // Our call ids carry their turn (`call_t<N>_...`): the turn is one past the highest seen.
  let turnIndex = 0;
  for (const item of input) {
    const m = /^call_t(\d+)_/.exec(String(item.call_id ?? ''));
    if (m !== null && /_call$/.test(String(item.type ?? ''))) turnIndex = Math.max(turnIndex, Number(m[1]) + 1);
  }
  const prompt = input
    .filter((i) => i.type === 'message' && i.role === 'user')
    .map((i) => textOf(i.content))
    .join('\n');
  const script = selectScript(scenario, prompt, 'codex');
  const turn = await preamble(errorCounts, 'openai', script, turnIndex, prompt, base, res, log);
  if (turn === undefined || script === undefined) return;

  const tools = asArray(body.tools).map(asRecord);
  const toolType = (name: string): string | undefined => tools.find((t) => t.name === name)?.type as string | undefined;
  const model = typeof body.model === 'string' ? body.model : 'gpt-5.5';
  const respId = nextId('resp');
  const items: Record<string, unknown>[] = [];
  turn.tools.forEach((call, i) => items.push(codexTool(call, `call_t${turnIndex}_${i}`, toolType)));
  const text = turn.structured !== undefined ? JSON.stringify(turn.structured) : turn.text;
  if (text !== undefined)
    items.push({
      type: 'message',
      id: nextId('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
  if (items.length === 0)
    items.push({
      type: 'message',
      id: nextId('msg'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
    });
  log({ ...base, api: 'openai', prompt, turn: turnIndex, script: script.name, answer: 'stream' });

  const u: Usage = { ...DEFAULT_USAGE, ...(turn.usage ?? {}) };
  const usage = {
    // OpenAI counts cached tokens inside input_tokens.
    input_tokens: u.input_tokens + u.cache_read_input_tokens,
    input_tokens_details: { cached_tokens: u.cache_read_input_tokens },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input_tokens + u.cache_read_input_tokens + u.output_tokens,
  };
  const frames: { event: string; data: unknown }[] = [];
  const push = (type: string, data: Record<string, unknown>): void => {
    frames.push({ event: type, data: { type, sequence_number: frames.length, ...data } });
  };
  const shell = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), model, output: [] as unknown[] };
  push('response.created', { response: { ...shell, status: 'in_progress' } });
  items.forEach((item, output_index) => {
    const item_id = String(item.id);
    if (item.type === 'message') {
      const t = String(asRecord(asArray(item.content)[0]).text ?? '');
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      push('response.content_part.added', {
        item_id,
        output_index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      push('response.output_text.delta', { item_id, output_index, content_index: 0, delta: t });
      push('response.output_text.done', { item_id, output_index, content_index: 0, text: t });
      push('response.content_part.done', {
        item_id,
        output_index,
        content_index: 0,
        part: { type: 'output_text', text: t, annotations: [] },
      });
    } else if (item.type === 'function_call') {
      push('response.output_item.added', { output_index, item: { ...item, arguments: '', status: 'in_progress' } });
      push('response.function_call_arguments.delta', { item_id, output_index, delta: item.arguments });
      push('response.function_call_arguments.done', { item_id, output_index, arguments: item.arguments });
    } else {
      push('response.output_item.added', { output_index, item: { ...item, input: '', status: 'in_progress' } });
      push('response.custom_tool_call_input.delta', { item_id, output_index, delta: item.input });
      push('response.custom_tool_call_input.done', { item_id, output_index, input: item.input });
    }
    push('response.output_item.done', { output_index, item });
  });
  push('response.completed', { response: { ...shell, status: 'completed', output: items, usage } });
  sse(res, frames);
}

function codexTool(call: ToolCall, callId: string, toolType: (name: string) => string | undefined): Record<string, unknown> {
  const id = nextId('fc');
  if (call.tool === 'mcp') throw new Error('scripted model server: MCP tool calls are scripted for claude only');
  if (call.tool === 'read') call = { tool: 'bash', command: `cat '${call.path.replace(/'/g, "'\\''")}'` };
  if (call.tool === 'bash') {
    if (toolType('exec_command') !== undefined || toolType('shell') === undefined) {
      return {
        type: 'function_call',
        id,
        call_id: callId,
        name: 'exec_command',
        arguments: JSON.stringify({ cmd: call.command }),
        status: 'completed',
      };
    }
    return {
      type: 'function_call',
      id,
      call_id: callId,
      name: 'shell',
      arguments: JSON.stringify({ command: ['bash', '-lc', call.command] }),
      status: 'completed',
    };
  }
  const patch = applyPatchText(call);
  if (toolType('apply_patch') === 'function') {
    return {
      type: 'function_call',
      id,
      call_id: callId,
      name: 'apply_patch',
      arguments: JSON.stringify({ input: patch }),
      status: 'completed',
    };
  }
  return { type: 'custom_tool_call', id, call_id: callId, name: 'apply_patch', input: patch, status: 'completed' };
}
