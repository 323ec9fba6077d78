// Pure parser of Claude Code's `--output-format stream-json` lines:
// key order never matters, unknown types/subtypes are ignored, the last `result` line wins,
// tokens and cost come from `modelUsage` (it includes sub-agents), the model is the
// costliest `modelUsage` key, a missing result means the run was cancelled or crashed.
import { z } from 'zod';
import { extractJsonAnswer } from './structured';
import type { AgentEvent, AgentResult, AgentStatus, TokenCounts } from './types';

const num = z.number().finite().catch(0);

const modelUsageEntry = z.looseObject({
  inputTokens: num.optional(),
  outputTokens: num.optional(),
  cacheReadInputTokens: num.optional(),
  cacheCreationInputTokens: num.optional(),
  costUSD: num.optional(),
});

const resultLine = z.looseObject({
  type: z.literal('result'),
  subtype: z.string(),
  is_error: z.boolean().optional(),
  num_turns: num.optional(),
  result: z.string().optional(),
  session_id: z.string().optional(),
  total_cost_usd: num.optional(),
  usage: z
    .looseObject({
      input_tokens: num.optional(),
      output_tokens: num.optional(),
      cache_read_input_tokens: num.optional(),
      cache_creation_input_tokens: num.optional(),
    })
    .optional(),
  modelUsage: z.record(z.string(), modelUsageEntry).optional(),
  errors: z.array(z.unknown()).optional(),
  structured_output: z.unknown().optional(),
  terminal_reason: z.string().optional(),
});

const initLine = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('init'),
  session_id: z.string().optional(),
  model: z.string().optional(),
  cwd: z.string().optional(),
  tools: z.array(z.unknown()).optional(),
});

const contentBlock = z.looseObject({ type: z.string() });
const messageLine = z.looseObject({
  type: z.enum(['assistant', 'user']),
  message: z.looseObject({ content: z.union([z.string(), z.array(contentBlock)]).optional() }),
});

export type ClaudeResultLine = z.infer<typeof resultLine>;

/** What the stream said so far; fold lines into it with `foldClaudeLine`. */
export interface ClaudeStreamState {
  readonly sessionId: string;
  readonly initModel: string;
  /** The last `result` line seen, if any. */
  readonly result: ClaudeResultLine | undefined;
  /** The text of the last assistant text block: the answer when the result has none. */
  readonly lastText: string;
  readonly linesSeen: number;
  readonly unparsedLines: number;
}

export const INITIAL_CLAUDE_STATE: ClaudeStreamState = {
  sessionId: '',
  initModel: '',
  result: undefined,
  lastText: '',
  linesSeen: 0,
  unparsedLines: 0,
};

export interface FoldOutput {
  readonly state: ClaudeStreamState;
  readonly events: AgentEvent[];
}

/** Folds one stdout line into the state and returns the normalized events it carries. */
export function foldClaudeLine(state: ClaudeStreamState, line: string): FoldOutput {
  const trimmed = line.trim();
  if (trimmed.length === 0) return { state, events: [] };
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    // Not JSON (a warning the CLI printed to stdout): counted, never fatal.
    return { state: { ...state, linesSeen: state.linesSeen + 1, unparsedLines: state.unparsedLines + 1 }, events: [] };
  }
  const seen = { ...state, linesSeen: state.linesSeen + 1 };
  if (typeof json !== 'object' || json === null) return { state: seen, events: [] };
  const type = (json as { type?: unknown }).type;

  if (type === 'result') {
    const parsed = resultLine.safeParse(json);
    if (!parsed.success) return { state: { ...seen, unparsedLines: seen.unparsedLines + 1 }, events: [] };
    const sessionId = parsed.data.session_id ?? seen.sessionId;
    return { state: { ...seen, result: parsed.data, sessionId }, events: [] };
  }
  if (type === 'system') {
    const parsed = initLine.safeParse(json);
    if (!parsed.success) return { state: seen, events: [] }; // other system subtypes: ignored
    const sessionId = parsed.data.session_id ?? seen.sessionId;
    const model = parsed.data.model ?? seen.initModel;
    const tools = (parsed.data.tools ?? []).filter((t): t is string => typeof t === 'string');
    const event: AgentEvent = { type: 'init', sessionId, model, tools, ...(parsed.data.cwd !== undefined ? { cwd: parsed.data.cwd } : {}) };
    return { state: { ...seen, sessionId, initModel: model }, events: [event] };
  }
  if (type === 'assistant' || type === 'user') {
    const parsed = messageLine.safeParse(json);
    if (!parsed.success) return { state: seen, events: [] };
    const content = parsed.data.message.content;
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? []);
    const events: AgentEvent[] = [];
    let lastText = seen.lastText;
    for (const block of blocks) {
      const b = block as Record<string, unknown>;
      if (type === 'assistant' && b.type === 'text' && typeof b.text === 'string') {
        events.push({ type: 'text', text: b.text });
        lastText = b.text;
      } else if (type === 'assistant' && b.type === 'tool_use') {
        events.push({ type: 'tool_use', id: String(b.id ?? ''), name: String(b.name ?? ''), input: b.input });
      } else if (type === 'user' && b.type === 'tool_result') {
        events.push({
          type: 'tool_result',
          toolUseId: String(b.tool_use_id ?? ''),
          isError: b.is_error === true,
          output: toolResultText(b.content),
        });
      }
    }
    return { state: { ...seen, lastText }, events };
  }
  return { state: seen, events: [] }; // unknown type: ignored by rule
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((c) =>
        typeof c === 'object' && c !== null && typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : '',
      )
      .join('');
  }
  return '';
}

/** Maps a result line's subtype and error flag to our status. */
export function claudeStatusOf(subtype: string, isError: boolean): AgentStatus {
  switch (subtype) {
    case 'success':
      return isError ? 'error' : 'success';
    case 'error_max_turns':
      return 'max_turns';
    case 'error_max_budget_usd':
      return 'budget';
    default:
      // error_during_execution, error_max_structured_output_retries and any future error_*.
      return 'error';
  }
}

export interface ClaudeAccounting {
  readonly tokens: TokenCounts;
  readonly costUsd: number;
  /** The costliest model, '' when modelUsage is empty. */
  readonly model: string;
}

/** Tokens and cost from modelUsage (sub-agents included); falls back to `usage`. */
export function claudeAccounting(result: ClaudeResultLine): ClaudeAccounting {
  const entries = Object.entries(result.modelUsage ?? {});
  if (entries.length > 0) {
    let input = 0;
    let output = 0;
    let cacheRead = 0;
    let cacheCreate = 0;
    let cost = 0;
    let model = '';
    let best = -1;
    for (const [name, u] of entries) {
      input += u.inputTokens ?? 0;
      output += u.outputTokens ?? 0;
      cacheRead += u.cacheReadInputTokens ?? 0;
      cacheCreate += u.cacheCreationInputTokens ?? 0;
      const c = u.costUSD ?? 0;
      cost += c;
      if (c > best) {
        best = c;
        model = name;
      }
    }
    return { tokens: { input, output, cacheRead, cacheCreate }, costUsd: result.total_cost_usd ?? cost, model };
  }
  const u = result.usage ?? {};
  return {
    tokens: {
      input: u.input_tokens ?? 0,
      output: u.output_tokens ?? 0,
      cacheRead: u.cache_read_input_tokens ?? 0,
      cacheCreate: u.cache_creation_input_tokens ?? 0,
    },
    costUsd: result.total_cost_usd ?? 0,
    model: '',
  };
}

export interface ClaudeRunFacts {
  readonly exitCode: number | null;
  /** Set when the harness stopped the process (abort or timeout). */
  readonly stopReason?: 'abort' | 'timeout';
  readonly durationMs: number;
  readonly stderrTail: string;
  readonly requestedModel: string;
  readonly maxTurns: number;
}

/** The final result from the folded stream and the process facts. Pure. */
export function claudeResult(state: ClaudeStreamState, facts: ClaudeRunFacts): AgentResult {
  const r = state.result;
  const common = {
    durationMs: facts.durationMs,
    exitCode: facts.exitCode,
    stderrTail: facts.stderrTail,
    sessionId: state.sessionId,
    ...(facts.stopReason !== undefined ? { stopReason: facts.stopReason } : {}),
  };
  if (r === undefined) {
    // No result line: we stopped it (cancelled) or it died on its own (crashed).
    return {
      ...common,
      status: facts.stopReason !== undefined ? 'cancelled' : 'crashed',
      text: state.lastText,
      structured: undefined,
      turns: 0,
      tokens: { input: 0, output: 0, cacheRead: 0, cacheCreate: 0 },
      costUsd: 0,
      model: state.initModel || facts.requestedModel,
      subtype: facts.stopReason !== undefined ? 'cancelled' : 'crashed',
      errors: [],
    };
  }
  const reported = claudeStatusOf(r.subtype, r.is_error === true);
  // A run we stopped may still print an error result on its way out (interrupted): it is
  // cancelled, but its tokens and cost were really spent and are kept.
  const status = facts.stopReason !== undefined && reported !== 'success' ? 'cancelled' : reported;
  const acc = claudeAccounting(r);
  const rawTurns = Math.max(0, Math.trunc(r.num_turns ?? 0));
  // The CLI reports max-turns + 1 when the limit stopped it.
  const turns = status === 'max_turns' ? Math.min(rawTurns, facts.maxTurns) : rawTurns;
  const text = r.result ?? '';
  const structured = r.structured_output !== undefined ? r.structured_output : status === 'success' ? extractJsonAnswer(text) : undefined;
  const errors = (r.errors ?? []).map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
  if (status === 'error' && r.subtype === 'success' && text.length > 0) errors.push(text);
  return {
    ...common,
    status,
    text,
    structured,
    turns,
    tokens: acc.tokens,
    costUsd: acc.costUsd,
    model: acc.model || state.initModel || facts.requestedModel,
    sessionId: r.session_id ?? state.sessionId,
    subtype:
      status === 'cancelled'
        ? 'cancelled'
        : r.subtype === 'success' && r.is_error === true
          ? `error_${r.terminal_reason ?? 'api'}`
          : r.subtype,
    errors,
  };
}

/** Convenience for tests and replays: folds all lines at once. */
export function parseClaudeStream(lines: readonly string[]): { state: ClaudeStreamState; events: AgentEvent[] } {
  let state = INITIAL_CLAUDE_STATE;
  const events: AgentEvent[] = [];
  for (const line of lines) {
    const out = foldClaudeLine(state, line);
    state = out.state;
    events.push(...out.events);
  }
  return { state, events };
}
