// The Codex `exec --json` parser on real lines captured from codex 0.171.0 (fixtures/) and
// hand-made edge cases; pricing from the configurable table.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codexResult, parseCodexStream } from '../../../src/agents/codexStream';
import type { CodexRunFacts } from '../../../src/agents/codexStream';
import { DEFAULT_PRICES, mergePrices, priceRowFor, priceTableSchema, priceTokens } from '../../../src/agents/pricing';

const fixture = (name: string): string[] => readFileSync(join(__dirname, 'fixtures', name), 'utf8').split('\n');
const facts = (over: Partial<CodexRunFacts> = {}): CodexRunFacts => ({
  exitCode: 0,
  durationMs: 900,
  stderrTail: '',
  model: 'gpt-5.5',
  prices: DEFAULT_PRICES,
  ...over,
});

describe('agents/codexStream', () => {
  it('given a real success run, then success with uncached input, cached reads, priced cost and events', () => {
    const { state, events } = parseCodexStream(fixture('codex-success.jsonl'));
    const r = codexResult(state, facts());
    assert.equal(r.status, 'success');
    assert.equal(r.text, 'Created hello.txt.');
    // 1000+100+100 uncached, 500 cached (the server reports input_tokens including cached).
    assert.deepEqual(r.tokens, { input: 1200, output: 140, cacheRead: 500, cacheCreate: 0 });
    assert.equal(r.costUsd, priceTokens(DEFAULT_PRICES, 'gpt-5.5', r.tokens));
    assert.equal(r.turns, 3, 'two tool items + one completed turn');
    assert.equal(r.model, 'gpt-5.5');
    assert.ok(r.sessionId.length > 0);
    assert.deepEqual(
      events.map((e) => e.type),
      ['init', 'text', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'text'],
    );
  });

  it('given a real API error run, then error with the message', () => {
    const r = codexResult(parseCodexStream(fixture('codex-api-error.jsonl')).state, facts({ exitCode: 1 }));
    assert.equal(r.status, 'error');
    assert.equal(r.subtype, 'turn.failed');
    assert.ok(r.errors.some((e) => e.includes('scripted bad request')));
  });

  it('given unknown events, reordered keys and junk, then they are ignored', () => {
    const { state } = parseCodexStream([
      '{"thread_id":"t1","type":"thread.started"}',
      '{"type":"something.new","x":1}',
      'garbage',
      '{"type":"error","message":"Reconnecting... 1/5"}',
      '{"item":{"text":"hello","type":"agent_message","id":"i0"},"type":"item.completed"}',
      '{"usage":{"output_tokens":3,"input_tokens":10},"type":"turn.completed"}',
    ]);
    const r = codexResult(state, facts());
    assert.equal(r.status, 'success', 'a non-fatal error event does not fail the run');
    assert.deepEqual(r.tokens, { input: 10, output: 3, cacheRead: 0, cacheCreate: 0 });
    assert.equal(r.sessionId, 't1');
    assert.deepEqual(r.errors, ['Reconnecting... 1/5']);
    assert.equal(state.unparsedLines, 1);
  });

  it('given usage on several turns, then the last (cumulative) one counts', () => {
    const { state } = parseCodexStream([
      '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":1}}',
      '{"type":"turn.completed","usage":{"input_tokens":30,"cached_input_tokens":5,"output_tokens":4,"cache_write_input_tokens":2}}',
    ]);
    assert.deepEqual(codexResult(state, facts()).tokens, { input: 25, output: 4, cacheRead: 5, cacheCreate: 2 });
  });

  it('given no completed turn, then crashed on a non-zero exit, cancelled when stopped', () => {
    const { state } = parseCodexStream(['{"type":"thread.started","thread_id":"t"}', '{"type":"turn.started"}']);
    assert.equal(codexResult(state, facts({ exitCode: 1 })).status, 'crashed');
    assert.equal(codexResult(state, facts({ exitCode: null, stopReason: 'abort' })).status, 'cancelled');
    assert.equal(codexResult(state, facts({ exitCode: null, stopReason: 'max_turns' })).status, 'max_turns');
  });

  it('given a failed command item, then its tool_result is an error', () => {
    const { events } = parseCodexStream([
      '{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}',
    ]);
    assert.deepEqual(
      events.map((e) => e.type),
      ['tool_use', 'tool_result'],
    );
    assert.ok(events[1]?.type === 'tool_result' && events[1].isError);
  });

  it('given a JSON final message, then it is the structured answer', () => {
    const { state } = parseCodexStream([
      '{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"{\\"verdict\\":\\"approve\\"}"}}',
      '{"type":"turn.completed","usage":{}}',
    ]);
    assert.deepEqual(codexResult(state, facts()).structured, { verdict: 'approve' });
  });
});

describe('agents/pricing', () => {
  it('matches the longest model prefix and falls back to default', () => {
    assert.equal(priceRowFor(DEFAULT_PRICES, 'gpt-5-mini-2025'), DEFAULT_PRICES['gpt-5-mini']);
    assert.equal(priceRowFor(DEFAULT_PRICES, 'gpt-5.5'), DEFAULT_PRICES['gpt-5.5']);
    assert.equal(priceRowFor(DEFAULT_PRICES, 'mystery-model'), DEFAULT_PRICES.default);
  });

  it('prices tokens per million and accepts overrides', () => {
    const table = mergePrices({ 'my-model': { input: 1, output: 2, cacheRead: 0.5, cacheCreate: 0 } });
    assert.equal(priceTokens(table, 'my-model', { input: 1_000_000, output: 500_000, cacheRead: 2_000_000, cacheCreate: 0 }), 3);
    assert.ok(priceTableSchema.safeParse(table).success);
    assert.ok(!priceTableSchema.safeParse({ x: DEFAULT_PRICES.default }).success, 'a table needs a default row');
  });
});
