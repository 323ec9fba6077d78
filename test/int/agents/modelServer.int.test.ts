// The scripted model server over real HTTP: plain JSON and SSE answers, errors, the
// request log, script selection by prompt, and stateless turn numbering.
import { strict as assert } from 'node:assert';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';

const post = async (server: ModelServer, path: string, body: unknown): Promise<{ status: number; text: string }> => {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
};

describe('test kit model server', () => {
  let server: ModelServer;
  afterEach(async () => server.close());

  it('answers Anthropic requests by turn (assistant messages counted), as JSON or SSE, and logs them', async () => {
    server = await startModelServer({
      scripts: [
        { name: 'judge', match: 'JUDGE', turns: [{ text: 'verdict' }] },
        {
          name: 'main',
          turns: [
            { tools: [{ tool: 'write', path: 'a.txt', content: 'x' }] },
            { text: 'done', usage: { input_tokens: 7, output_tokens: 3 } },
          ],
        },
      ],
    });
    const user = { role: 'user', content: [{ type: 'text', text: 'Env:\n - Primary working directory: /work/x\nPlease work' }] };
    const first = await post(server, '/v1/messages?beta=true', { messages: [user], stream: false, tools: [{ name: 'Write' }] });
    assert.equal(first.status, 200);
    const msg = JSON.parse(first.text) as {
      content: { type: string; name?: string; input?: { file_path?: string } }[];
      stop_reason: string;
    };
    assert.equal(msg.stop_reason, 'tool_use');
    assert.equal(msg.content[0]?.name, 'Write');
    assert.equal(msg.content[0]?.input?.file_path, '/work/x/a.txt');

    const second = await post(server, '/v1/messages', {
      messages: [user, { role: 'assistant', content: [] }, { role: 'user', content: 'result' }],
      stream: true,
    });
    assert.match(second.text, /^event: message_start\ndata: /);
    assert.match(second.text, /"text_delta","text":"done"/);
    assert.match(second.text, /event: message_delta\ndata: .*"stop_reason":"end_turn"/);
    assert.match(second.text, /event: message_stop/);

    const judge = await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'You are the JUDGE' }], stream: false });
    assert.match(judge.text, /verdict/);
    assert.deepEqual(
      server.requests.map((r) => [r.script, r.turn, r.answer]),
      [
        ['main', 0, 'json'],
        ['main', 1, 'stream'],
        ['judge', 0, 'json'],
      ],
    );
  });

  it('answers OpenAI Responses requests with turn numbers carried in call ids', async () => {
    server = await startModelServer({ turns: [{ tools: [{ tool: 'bash', command: 'ls' }] }, { text: 'bye' }] });
    const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] }];
    const t0 = await post(server, '/v1/responses', { model: 'gpt-5.5', input, tools: [{ type: 'function', name: 'exec_command' }] });
    assert.match(t0.text, /event: response.function_call_arguments.done/);
    const callId = /"call_id":"(call_t0_0)"/.exec(t0.text)?.[1];
    assert.equal(callId, 'call_t0_0');
    const t1 = await post(server, '/v1/responses', {
      input: [
        ...input,
        { type: 'function_call', call_id: callId, name: 'exec_command', arguments: '{}' },
        { type: 'function_call_output', call_id: callId, output: 'x' },
      ],
    });
    assert.match(t1.text, /"delta":"bye"/);
    assert.match(t1.text, /event: response.completed\ndata: .*"usage":\{"input_tokens":100/);
    assert.deepEqual(
      server.requests.map((r) => [r.api, r.turn]),
      [
        ['openai', 0],
        ['openai', 1],
      ],
    );
  });

  it('plays HTTP errors, reports unmatched prompts and unknown routes, and closes despite a hung answer', async () => {
    server = await startModelServer({
      scripts: [
        { match: 'ERR', turns: [{ error: { status: 529, message: 'overloaded' } }] },
        { match: 'HANG', turns: [{ hang: true }] },
      ],
    });
    const err = await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'ERR' }] });
    assert.equal(err.status, 529);
    assert.match(err.text, /overloaded_error/);
    const none = await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'other' }] });
    assert.equal(none.status, 400);
    assert.equal((await post(server, '/v2/else', {})).status, 404);
    const hung = fetch(server.url + '/v1/messages', {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'HANG' }] }),
    }).catch((e: unknown) => e);
    await server.waitForRequests(4);
    assert.equal(server.requests[3]?.answer, 'hang');
    await server.close();
    assert.ok((await hung) instanceof Error, 'the hung request fails when the server closes');
    server = await startModelServer({ turns: [{ text: 'x' }] }); // for afterEach
  });

  it('rejects an invalid scenario at start', async () => {
    await assert.rejects(startModelServer({ turns: [] }), /model server scenario: invalid scenario: turns/);
    server = await startModelServer({ turns: [{ text: 'x' }] });
  });
});
