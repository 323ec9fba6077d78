// The Claude stream-json parser on real lines captured from claude 2.1.332 (fixtures/) and on
// hand-made edge cases: unknown types, reordered keys, several results, no result.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  claudeAccounting,
  claudeResult,
  claudeStatusOf,
  foldClaudeLine,
  INITIAL_CLAUDE_STATE,
  parseClaudeStream,
} from '../../../src/agents/claudeStream';
import type { ClaudeRunFacts } from '../../../src/agents/claudeStream';

const fixture = (name: string): string[] => readFileSync(join(__dirname, 'fixtures', name), 'utf8').split('\n');
const facts = (over: Partial<ClaudeRunFacts> = {}): ClaudeRunFacts => ({
  exitCode: 0,
  durationMs: 1234,
  stderrTail: '',
  requestedModel: 'sonnet',
  maxTurns: 5,
  ...over,
});

describe('agents/claudeStream', () => {
  describe('real captured streams', () => {
    it('given a success run, then success with modelUsage tokens, cost, turns, model, session and events', () => {
      const { state, events } = parseClaudeStream(fixture('claude-success.jsonl'));
      const r = claudeResult(state, facts());
      assert.equal(r.status, 'success');
      assert.equal(r.text, 'Created hello.txt.');
      assert.equal(r.turns, 2);
      assert.deepEqual(r.tokens, { input: 1100, output: 120, cacheRead: 2000, cacheCreate: 400 });
      assert.equal(r.costUsd, 0.0072);
      assert.equal(r.model, 'claude-sonnet-4-5-20250929');
      assert.match(r.sessionId, /^[0-9a-f-]{36}$/);
      assert.equal(r.durationMs, 1234);
      assert.deepEqual(
        events.map((e) => e.type),
        ['init', 'text', 'tool_use', 'tool_result', 'text'],
      );
      const tool = events[2];
      assert.ok(tool?.type === 'tool_use' && tool.name === 'Write');
      assert.deepEqual(tool.input, { file_path: '/tmp/repo/hello.txt', content: 'hi\n' });
    });

    it('given a max-turns run (num_turns = limit + 1), then max_turns with turns clamped', () => {
      const r = claudeResult(parseClaudeStream(fixture('claude-max-turns.jsonl')).state, facts({ exitCode: 1, maxTurns: 2 }));
      assert.equal(r.status, 'max_turns');
      assert.equal(r.turns, 2);
      assert.equal(r.text, '');
      assert.deepEqual(r.errors, ['Reached maximum number of turns (2)']);
    });

    it('given a budget run, then budget with its cost', () => {
      const r = claudeResult(parseClaudeStream(fixture('claude-budget.jsonl')).state, facts({ exitCode: 1, maxTurns: 20 }));
      assert.equal(r.status, 'budget');
      assert.equal(r.subtype, 'error_max_budget_usd');
      assert.ok(Math.abs(r.costUsd - 1.23) < 1e-9);
    });

    it('given an API error reported as subtype success with is_error, then error with the message', () => {
      const r = claudeResult(parseClaudeStream(fixture('claude-api-error.jsonl')).state, facts({ exitCode: 1 }));
      assert.equal(r.status, 'error');
      assert.equal(r.subtype, 'error_api_error');
      assert.deepEqual(r.errors, ['API Error: 400 scripted bad request']);
    });
  });

  describe('parsing rules', () => {
    it('given reordered keys and unknown types/subtypes, then they are ignored and the result is read', () => {
      const lines = [
        '{"subtype":"init","model":"claude-opus-4-6","session_id":"s1","type":"system","tools":["Bash"]}',
        '{"type":"rate_limit_event","rate_limit_info":{}}',
        '{"type":"system","subtype":"api_retry","attempt":1}',
        '{"type":"stream_event","event":{}}',
        'not json at all',
        '{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"..."},{"text":"ok","type":"text"}]}}',
        '{"modelUsage":{"claude-opus-4-6":{"costUSD":0.5,"outputTokens":10,"inputTokens":3}},"num_turns":1,"subtype":"success","type":"result","result":"ok","is_error":false}',
      ];
      const { state, events } = parseClaudeStream(lines);
      assert.equal(state.unparsedLines, 1);
      assert.deepEqual(
        events.map((e) => e.type),
        ['init', 'text'],
      );
      const r = claudeResult(state, facts());
      assert.equal(r.status, 'success');
      assert.equal(r.model, 'claude-opus-4-6');
      assert.equal(r.sessionId, 's1');
      assert.deepEqual(r.tokens, { input: 3, output: 10, cacheRead: 0, cacheCreate: 0 });
    });

    it('given two result lines, then the last one wins', () => {
      const { state } = parseClaudeStream([
        '{"type":"result","subtype":"error_during_execution","errors":["x"]}',
        '{"type":"result","subtype":"success","result":"fine","num_turns":2}',
      ]);
      assert.equal(claudeResult(state, facts()).status, 'success');
    });

    it('given no result line, then crashed, or cancelled when the harness stopped it', () => {
      const { state } = parseClaudeStream([
        '{"type":"system","subtype":"init","session_id":"s","model":"m"}',
        '{"type":"assistant","message":{"content":[{"type":"text","text":"partial"}]}}',
      ]);
      const crashed = claudeResult(state, facts({ exitCode: 143 }));
      assert.equal(crashed.status, 'crashed');
      assert.equal(crashed.text, 'partial');
      assert.equal(crashed.model, 'm');
      const cancelled = claudeResult(state, facts({ exitCode: null, stopReason: 'timeout' }));
      assert.equal(cancelled.status, 'cancelled');
      assert.equal(cancelled.stopReason, 'timeout');
    });

    it('given a run we stopped that still printed an error result, then cancelled with its spend kept', () => {
      const { state } = parseClaudeStream([
        '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":2,"total_cost_usd":0.3,"modelUsage":{"m":{"inputTokens":5,"outputTokens":6,"costUSD":0.3}}}',
      ]);
      const r = claudeResult(state, facts({ exitCode: 143, stopReason: 'abort' }));
      assert.equal(r.status, 'cancelled');
      assert.equal(r.subtype, 'cancelled');
      assert.equal(r.costUsd, 0.3);
      assert.equal(r.tokens.output, 6);
    });

    it('given a start-up failure (zeroed result), then error with zero turns', () => {
      const { state } = parseClaudeStream([
        '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"total_cost_usd":0,"errors":["bad flag"]}',
      ]);
      const r = claudeResult(state, facts({ exitCode: 1 }));
      assert.equal(r.status, 'error');
      assert.equal(r.turns, 0);
    });

    it('given several models in modelUsage, then tokens are summed and the costliest model is named', () => {
      const acc = claudeAccounting({
        type: 'result',
        subtype: 'success',
        modelUsage: {
          'claude-haiku-4-5': { inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 5, cacheCreationInputTokens: 1, costUSD: 0.001 },
          'claude-sonnet-4-5': { inputTokens: 50, outputTokens: 20, cacheReadInputTokens: 0, cacheCreationInputTokens: 2, costUSD: 0.01 },
        },
      });
      assert.deepEqual(acc.tokens, { input: 150, output: 30, cacheRead: 5, cacheCreate: 3 });
      assert.equal(acc.model, 'claude-sonnet-4-5');
      assert.ok(Math.abs(acc.costUsd - 0.011) < 1e-12);
    });

    it('given no modelUsage, then usage is the fallback', () => {
      const acc = claudeAccounting({
        type: 'result',
        subtype: 'success',
        total_cost_usd: 0.2,
        usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 },
      });
      assert.deepEqual(acc.tokens, { input: 1, output: 2, cacheRead: 3, cacheCreate: 4 });
      assert.equal(acc.costUsd, 0.2);
    });

    it('given a structured_output, then it is the structured answer; without one, a JSON text is', () => {
      const a = claudeResult(
        parseClaudeStream(['{"type":"result","subtype":"success","result":"","structured_output":{"v":1}}']).state,
        facts(),
      );
      assert.deepEqual(a.structured, { v: 1 });
      const b = claudeResult(
        parseClaudeStream(['{"type":"result","subtype":"success","result":"Done.\\n```json\\n{\\"v\\":2}\\n```"}']).state,
        facts(),
      );
      assert.deepEqual(b.structured, { v: 2 });
    });

    it('maps every subtype', () => {
      assert.equal(claudeStatusOf('success', false), 'success');
      assert.equal(claudeStatusOf('success', true), 'error');
      assert.equal(claudeStatusOf('error_max_turns', true), 'max_turns');
      assert.equal(claudeStatusOf('error_max_budget_usd', true), 'budget');
      assert.equal(claudeStatusOf('error_during_execution', true), 'error');
      assert.equal(claudeStatusOf('error_max_structured_output_retries', true), 'error');
      assert.equal(claudeStatusOf('error_something_new', true), 'error');
    });

    it('ignores blank lines and non-object JSON without counting them as results', () => {
      let s = INITIAL_CLAUDE_STATE;
      for (const l of ['', '   ', '42', '"str"', 'null']) s = foldClaudeLine(s, l).state;
      assert.equal(s.result, undefined);
    });
  });
});
