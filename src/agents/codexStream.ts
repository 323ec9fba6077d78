// Pure parser of `codex exec --json` events: thread/turn/item lifecycle,
// cumulative usage on turn.completed, failures on turn.failed / error. Codex reports no
// cost, model, duration or turn count: the harness supplies duration and model, prices
// the tokens with a price table (pricing.ts), and counts turns from the items it saw.
import { z } from 'zod';
import { priceTokens } from './pricing';
import type { PriceTable } from './pricing';
import { extractJsonAnswer } from './structured';
import type { AgentEvent, AgentResult, TokenCounts } from './types';

const num = z.number().finite().catch(0);
const usageSchema = z.looseObject({
  input_tokens: num.optional(),
  cached_input_tokens: num.optional(),
  cache_write_input_tokens: num.optional(),
  output_tokens: num.optional(),
  reasoning_output_tokens: num.optional(),
});
const itemSchema = z.looseObject({ id: z.string().catch(''), type: z.string() });
const eventSchema = z.looseObject({
  type: z.string(),
  thread_id: z.string().optional(),
  item: itemSchema.optional(),
  usage: usageSchema.optional(),
  error: z.looseObject({ message: z.string().optional() }).optional(),
  message: z.string().optional(),
});

export interface CodexStreamState {
  readonly threadId: string;
  /** Usage of the last turn.completed (cumulative over the thread). */
  readonly usage: TokenCounts | undefined;
  readonly lastMessage: string;
  readonly turnsCompleted: number;
  /** Tool items (commands, file changes, MCP/web calls) started: a proxy for model round trips. */
  readonly toolItems: number;
  readonly toolIds: readonly string[];
  readonly failed: string | undefined;
  /** Error events, including non-fatal ones (reconnecting ...). */
  readonly errors: readonly string[];
  readonly linesSeen: number;
  readonly unparsedLines: number;
}

export const INITIAL_CODEX_STATE: CodexStreamState = {
  threadId: '',
  usage: undefined,
  lastMessage: '',
  turnsCompleted: 0,
  toolItems: 0,
  toolIds: [],
  failed: undefined,
  errors: [],
  linesSeen: 0,
  unparsedLines: 0,
};

const TOOL_ITEMS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search']);

export function foldCodexLine(state: CodexStreamState, line: string): { state: CodexStreamState; events: AgentEvent[] } {
  const trimmed = line.trim();
  if (trimmed.length === 0) return { state, events: [] };
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    return { state: { ...state, linesSeen: state.linesSeen + 1, unparsedLines: state.unparsedLines + 1 }, events: [] };
  }
  const seen = { ...state, linesSeen: state.linesSeen + 1 };
  const parsed = eventSchema.safeParse(json);
  if (!parsed.success) return { state: { ...seen, unparsedLines: seen.unparsedLines + 1 }, events: [] };
  const ev = parsed.data;
  switch (ev.type) {
    case 'thread.started': {
      const threadId = ev.thread_id ?? '';
      return { state: { ...seen, threadId }, events: [{ type: 'init', sessionId: threadId, model: '' }] };
    }
    case 'turn.completed': {
      const u = ev.usage ?? {};
      const input = u.input_tokens ?? 0;
      const cached = u.cached_input_tokens ?? 0;
      // OpenAI counts cached tokens inside input_tokens; ours are uncached input.
      const usage: TokenCounts = {
        input: Math.max(0, input - cached),
        output: u.output_tokens ?? 0,
        cacheRead: cached,
        cacheCreate: u.cache_write_input_tokens ?? 0,
      };
      return { state: { ...seen, usage, turnsCompleted: seen.turnsCompleted + 1 }, events: [] };
    }
    case 'turn.failed':
      return {
        state: { ...seen, failed: ev.error?.message ?? 'turn failed', errors: [...seen.errors, ev.error?.message ?? 'turn failed'] },
        events: [],
      };
    case 'error':
      return { state: { ...seen, errors: [...seen.errors, ev.message ?? 'error'] }, events: [] };
    case 'item.started':
    case 'item.completed':
      return itemEvent(seen, ev.type, ev.item);
    default:
      return { state: seen, events: [] }; // turn.started, item.updated, unknown: ignored
  }
}

function itemEvent(
  state: CodexStreamState,
  phase: 'item.started' | 'item.completed',
  item: z.infer<typeof itemSchema> | undefined,
): { state: CodexStreamState; events: AgentEvent[] } {
  if (item === undefined) return { state, events: [] };
  const it = item as Record<string, unknown>;
  if (TOOL_ITEMS.has(item.type)) {
    // A tool item usually starts then completes; some complete without a start. Count ids once.
    const known = state.toolIds.includes(item.id);
    const next = known ? state : { ...state, toolIds: [...state.toolIds, item.id], toolItems: state.toolItems + 1 };
    const events: AgentEvent[] = [];
    if (!known) events.push({ type: 'tool_use', id: item.id, name: item.type, input: toolInput(it) });
    if (phase === 'item.completed') {
      const failed = it.status === 'failed' || (typeof it.exit_code === 'number' && it.exit_code !== 0);
      const output = typeof it.aggregated_output === 'string' ? it.aggregated_output : JSON.stringify(it.changes ?? it.result ?? '');
      events.push({ type: 'tool_result', toolUseId: item.id, isError: failed, output });
    }
    return { state: next, events };
  }
  if (phase === 'item.completed' && item.type === 'agent_message' && typeof it.text === 'string') {
    return { state: { ...state, lastMessage: it.text }, events: [{ type: 'text', text: it.text }] };
  }
  if (phase === 'item.completed' && item.type === 'error' && typeof it.message === 'string') {
    return { state: { ...state, errors: [...state.errors, it.message] }, events: [] };
  }
  return { state, events: [] };
}

function toolInput(it: Record<string, unknown>): unknown {
  if (typeof it.command === 'string') return { command: it.command };
  if (Array.isArray(it.changes)) return { changes: it.changes };
  return {};
}

export interface CodexRunFacts {
  readonly exitCode: number | null;
  readonly stopReason?: 'abort' | 'timeout' | 'max_turns';
  readonly durationMs: number;
  readonly stderrTail: string;
  readonly model: string;
  readonly prices: PriceTable;
}

/** The final result from the folded events and the process facts. Pure. */
export function codexResult(state: CodexStreamState, facts: CodexRunFacts): AgentResult {
  const tokens = state.usage ?? { input: 0, output: 0, cacheRead: 0, cacheCreate: 0 };
  const turns = state.toolItems + state.turnsCompleted;
  const base = {
    text: state.lastMessage,
    turns,
    durationMs: facts.durationMs,
    tokens,
    costUsd: priceTokens(facts.prices, facts.model, tokens),
    model: facts.model,
    sessionId: state.threadId,
    exitCode: facts.exitCode,
    stderrTail: facts.stderrTail,
    errors: state.errors,
  };
  if (facts.stopReason === 'max_turns') return { ...base, status: 'max_turns', structured: undefined, subtype: 'error_max_turns' };
  if (facts.stopReason !== undefined && state.turnsCompleted === 0) {
    return { ...base, status: 'cancelled', structured: undefined, subtype: 'cancelled', stopReason: facts.stopReason };
  }
  if (state.failed !== undefined) return { ...base, status: 'error', structured: undefined, subtype: 'turn.failed' };
  if (state.turnsCompleted === 0) {
    return {
      ...base,
      status: facts.exitCode === 0 ? 'error' : 'crashed',
      structured: undefined,
      subtype: facts.exitCode === 0 ? 'no_turn' : 'crashed',
    };
  }
  if (facts.exitCode !== 0 && facts.exitCode !== null) return { ...base, status: 'error', structured: undefined, subtype: 'error_exit' };
  return { ...base, status: 'success', structured: extractJsonAnswer(state.lastMessage), subtype: 'success' };
}

export function parseCodexStream(lines: readonly string[]): { state: CodexStreamState; events: AgentEvent[] } {
  let state = INITIAL_CODEX_STATE;
  const events: AgentEvent[] = [];
  for (const line of lines) {
    const out = foldCodexLine(state, line);
    state = out.state;
    events.push(...out.events);
  }
  return { state, events };
}
