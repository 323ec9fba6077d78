// `ralph mcp` (the built dist/cli.js) over real stdio, driven by the SDK's own MCP client, on
// a project from a scripted run: every tool and resource, the events it leaves (actor `mcp`,
// the client's name and version from the handshake), the read-only mode's refusals, hostile
// ids; then beside a running loop, where its commands go through the loop's inbox.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openStore } from '../../../src/store/sqlJsStore';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import type { StoredEvent } from '../../../src/store/types';
import { openSampleStore, scriptedLoop } from '../loop/sampleProject';
import type { SampleProject } from '../loop/sampleProject';
import { CLIENT, projectWithDeferredPatches } from './mcpProject';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

async function connect(dir: string, ...extra: string[]): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, '--dir', dir, 'mcp', ...extra], stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client(CLIENT);
  await client.connect(transport);
  return { client, stderr: () => err };
}

const resourceText = (r: { contents: readonly unknown[] }): string => String((r.contents[0] as { text?: unknown } | undefined)?.text);

const text = (r: unknown): string => ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

async function events(dir: string): Promise<StoredEvent[]> {
  const store = await openStore({ ralphDir: path.join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.events();
  } finally {
    await store.close();
  }
}

async function taskStatus(dir: string, id: string): Promise<string | undefined> {
  const store = await openStore({ ralphDir: path.join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.get<{ status: string }>('SELECT status FROM task_view WHERE task_id = ?', [id])?.status;
  } finally {
    await store.close();
  }
}

describe('ralph mcp over stdio (SDK client, built CLI)', function () {
  this.timeout(180_000);
  let p: SampleProject;

  before(async () => {
    // The MCP server is a chunk of the CLI's bundle (esbuild.js), loaded by `ralph mcp` only.
    assert.ok(fs.existsSync(CLI), 'npm run build first (dist/cli.js)');
    p = await projectWithDeferredPatches();
  });
  after(() => {
    if (p) fs.rmSync(p.dir, { recursive: true, force: true });
  });

  it('lists every tool and the three resources; reading tools answer from the store', async () => {
    const { client } = await connect(p.dir);
    try {
      assert.deepEqual(client.getServerVersion()?.name, 'ralph');
      const tools = (await client.listTools()).tools;
      assert.deepEqual(
        tools.map((t) => t.name),
        ['status', 'list_tasks', 'show_task', 'deferred_queue', 'add_task', 'decide', 'pause', 'resume', 'stop'],
      );
      assert.equal(tools.find((t) => t.name === 'status')?.annotations?.readOnlyHint, true);
      assert.equal(tools.find((t) => t.name === 'decide')?.annotations?.readOnlyHint, false);

      const status = await client.callTool({ name: 'status', arguments: {} });
      assert.match(text(status), /=== Ralph Loop v3 Status ===/);
      assert.match(text(status), /Tasks \(4\): deferred=2,done=1,pending=1/);
      assert.match(text(status), /Loop: not running/);
      assert.match(text(status), /Waiting for a decision: T-3 \(tier 2, Session check\); T-4 \(tier 2, Token check\)/);
      assert.equal(status.structuredContent, undefined, 'text only: claude would show the model the data instead');

      const done = await client.callTool({ name: 'list_tasks', arguments: { status: ['done'] } });
      assert.match(text(done), /^1 task\(s\) with status done\n/);
      assert.match(text(done), /\| T-1 \| done \|/);
      const tier2 = await client.callTool({ name: 'list_tasks', arguments: { tier: 2 } });
      assert.deepEqual(
        [...text(tier2).matchAll(/^\| (T-\d) \|/gm)].map((m) => m[1]),
        ['T-3', 'T-4'],
      );
      const wave1 = await client.callTool({ name: 'list_tasks', arguments: { wave: 1 } });
      assert.match(text(wave1), /^1 task\(s\) with wave 1\n\n\| id \| status/);
      assert.match(text(wave1), /\| T-5 \| pending \| 1 \| M \| 1 \| Later work \|/);

      const story = await client.callTool({ name: 'show_task', arguments: { task_id: 'T-4' } });
      assert.match(text(story), /^# T-4: Token check/);
      assert.match(text(story), /\*\*deferred\*\* · wave 0 · effort M · tier 2 · source specs\/auth\.md:9/);
      assert.match(text(story), /1\. \*\*primary\*\*, claimed .* → deferred .*tier 2/);
      assert.match(text(story), /tier 2 \(src\/auth\/token\.js\); gates build ✓ test ✓/);
      const t1 = await client.callTool({ name: 'show_task', arguments: { task_id: 'T-1' } });
      assert.match(text(t1), /Landed as commit [0-9a-f]{8} \(patch patch_T-1_/);

      const queue = await client.callTool({ name: 'deferred_queue', arguments: {} });
      assert.match(text(queue), /2 deferred patch\(es\) wait for a decision/);
      assert.match(text(queue), /\*\*T-4\*\* Token check — tier 2, tier 2 \(sensitive\)/);

      const resources = (await client.listResources()).resources.map((r) => r.uri);
      assert.ok(resources.includes('ralph://backlog.md') && resources.includes('ralph://state.json'), resources.join(' '));
      assert.ok(resources.includes('ralph://tasks/T-4/story.md'), resources.join(' '));
      const backlog = await client.readResource({ uri: 'ralph://backlog.md' });
      assert.match(resourceText(backlog), /^# BACKLOG/);
      assert.match(resourceText(backlog), /\| T-4 \| deferred \| Token check \| specs\/auth\.md:9 \| M \| - \|/);
      const state = JSON.parse(resourceText(await client.readResource({ uri: 'ralph://state.json' }))) as Record<string, unknown>;
      assert.equal(state['items_total_count'], 4);
      assert.equal(state['items_deferred_count'], 2);
      const storyRes = await client.readResource({ uri: 'ralph://tasks/T-3/story.md' });
      assert.match(resourceText(storyRes), /^# T-3: Session check/);
      const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
      assert.deepEqual(templates, ['ralph://tasks/{task_id}/story.md']);
    } finally {
      await client.close();
    }
  });

  it('refuses hostile ids and bad input without touching the store', async () => {
    const before = (await events(p.dir)).length;
    const { client } = await connect(p.dir);
    try {
      for (const id of ['../../etc/passwd', 'T-4; rm -rf /', '', 'x'.repeat(65), 'T 4']) {
        const r = await client.callTool({ name: 'show_task', arguments: { task_id: id } });
        assert.equal(r.isError, true, `show_task ${JSON.stringify(id)}`);
        const d = await client.callTool({ name: 'decide', arguments: { task_id: id, decision: 'approve' } });
        assert.equal(d.isError, true, `decide ${JSON.stringify(id)}`);
      }
      const nope = await client.callTool({ name: 'show_task', arguments: { task_id: 'NOPE-1' } });
      assert.equal(nope.isError, true);
      assert.match(text(nope), /No task NOPE-1/);
      const title = await client.callTool({ name: 'add_task', arguments: { title: 'two\nlines' } });
      assert.equal(title.isError, true);
      const decision = await client.callTool({ name: 'decide', arguments: { task_id: 'T-4', decision: 'merge-it' } });
      assert.equal(decision.isError, true);
      await assert.rejects(client.readResource({ uri: 'ralph://tasks/..%2F..%2Fx/story.md' }));
    } finally {
      await client.close();
    }
    assert.equal((await events(p.dir)).length, before, 'nothing appended');
  });

  it('adds tasks through the policy and decides on deferred patches, as events with actor mcp and the client name', async () => {
    const { client } = await connect(p.dir);
    try {
      const added = await client.callTool({ name: 'add_task', arguments: { title: 'Validate emails', wave: 1 } });
      assert.equal(added.isError, undefined, text(added));
      assert.match(text(added), /^Added W1-001 "Validate emails" \(wave 1, effort S\): the policy accepted it/);
      const big = await client.callTool({ name: 'add_task', arguments: { title: 'Rewrite the storage layer', effort: 'XL', wave: 2 } });
      assert.match(text(big), /^Proposed W2-001 .* deferred it to the judge: new XL-effort task/);
      assert.notEqual(big.isError, true, 'a deferral is an answer, not a failure');
      const dup = await client.callTool({ name: 'add_task', arguments: { title: 'Again', id: 'T-1' } });
      assert.equal(dup.isError, true);
      const deps = await client.callTool({ name: 'add_task', arguments: { title: 'Needs ghosts', deps: ['GHOST-1'] } });
      assert.equal(deps.isError, true);
      assert.match(text(deps), /unknown task\(s\) GHOST-1/);

      const bare = await client.callTool({ name: 'decide', arguments: { task_id: 'T-3', decision: 'reject' } });
      assert.equal(bare.isError, true);
      assert.match(text(bare), /needs a note/);
      const notDeferred = await client.callTool({ name: 'decide', arguments: { task_id: 'T-1', decision: 'approve' } });
      assert.match(text(notDeferred), /T-1 is done, not deferred/);
      const approve = await client.callTool({
        name: 'decide',
        arguments: { task_id: 'T-4', decision: 'approve', note: 'reviewed the diff' },
      });
      assert.match(text(approve), /^Approved T-4: its patch is approved and is promoted when the loop next runs/);
      const reject = await client.callTool({
        name: 'decide',
        arguments: { task_id: 'T-3', decision: 'reject', note: 'an empty session must be refused' },
      });
      assert.match(text(reject), /^Rejected T-3: its patch is discarded/);
      const paused = await client.callTool({ name: 'pause', arguments: {} });
      assert.equal(paused.isError, true);
      assert.match(text(paused), /No loop is running/);
    } finally {
      await client.close();
    }
    assert.equal(await taskStatus(p.dir, 'W1-001'), 'pending');
    assert.equal(await taskStatus(p.dir, 'W2-001'), undefined);
    assert.equal(await taskStatus(p.dir, 'T-4'), 'proposed');
    assert.equal(await taskStatus(p.dir, 'T-3'), 'pending');
    // (inbox commands also leave the store's command.applied markers: exactly-once bookkeeping)
    const byMcp = (await events(p.dir)).filter((e) => e.actor === 'mcp' && e.event_type !== 'command.applied');
    // The duplicate id is refused before anything is written; the unknown dep by the policy.
    assert.deepEqual(
      byMcp.map((e) => (e.entity_type === 'proposal' ? `${e.event_type} chat_…` : `${e.event_type} ${e.entity_id}`)),
      [
        'task.created W1-001',
        'proposal.accepted chat_…',
        'proposal.deferred chat_…',
        'proposal.rejected chat_…',
        'task.deferral_resolved T-4',
        'task.deferral_resolved T-3',
        `patch.discarded ${byMcp.find((e) => e.event_type === 'patch.discarded')?.entity_id ?? '?'}`,
      ],
    );
    assert.ok(byMcp.filter((e) => e.entity_type === 'proposal').every((e) => /^chat_\d{17}_[0-9a-f]{6}$/.test(e.entity_id)));
    assert.match(byMcp.at(-1)?.entity_id ?? '', /^patch_T-3_/);
    for (const e of byMcp) {
      assert.equal(e.payload['client'], CLIENT.name, `${e.event_type} names the client`);
      assert.equal(e.payload['client_version'], CLIENT.version);
    }
    const rejected = byMcp.find((e) => e.entity_id === 'T-3');
    assert.equal(rejected?.payload['rationale'], 'an empty session must be refused');
    assert.equal(byMcp.find((e) => e.event_type === 'task.created')?.payload['provenance'], 'auto', 'accepted by the policy, not inserted');
  });

  it('with --read-only serves only the reading tools and refuses the deciding ones', async () => {
    const before = (await events(p.dir)).length;
    const { client } = await connect(p.dir, '--read-only');
    try {
      assert.deepEqual(
        (await client.listTools()).tools.map((t) => t.name),
        ['status', 'list_tasks', 'show_task', 'deferred_queue'],
      );
      assert.match(client.getInstructions() ?? '', /read-only/);
      assert.match(text(await client.callTool({ name: 'status', arguments: {} })), /Ralph Loop v3 Status/);
      for (const [name, args] of [
        ['add_task', { title: 'sneaky' }],
        ['decide', { task_id: 'T-4', decision: 'approve' }],
        ['stop', {}],
        ['pause', {}],
      ] as const) {
        let refused = false;
        try {
          const r = await client.callTool({ name, arguments: args });
          refused = r.isError === true && /not found/i.test(text(r));
        } catch (e) {
          refused = /not found/i.test(String(e));
        }
        assert.ok(refused, `${name} refused`);
      }
    } finally {
      await client.close();
    }
    assert.equal((await events(p.dir)).length, before, 'nothing appended in read-only mode');
  });

  it('beside a running loop: status sees it, and add, pause, resume and stop go through its inbox', async () => {
    const store = await openSampleStore(p.ralphDir);
    const { loop, events: loopEvents } = scriptedLoop(p, store, { workers: { count: 0 } }, false);
    await loop.start();
    const { client } = await connect(p.dir);
    try {
      const status = await client.callTool({ name: 'status', arguments: {} });
      assert.match(text(status), new RegExp(`Loop: running \\(pid ${process.pid} on `));
      const pausedSeen = loop.events.next((e) => e.type === 'loop.state' && e.state === 'paused');
      const pause = await client.callTool({ name: 'pause', arguments: { reason: 'lunch' } });
      assert.equal(pause.isError, undefined, text(pause));
      await pausedSeen;
      const added = await client.callTool({ name: 'add_task', arguments: { title: 'While it runs', effort: 'M', wave: 3 } });
      assert.match(text(added), /^Added W3-001 "While it runs"/);
      assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'W3-001'")?.status, 'pending');
      const resumedSeen = loop.events.next((e) => e.type === 'loop.state' && e.state === 'running');
      await client.callTool({ name: 'resume', arguments: {} });
      await resumedSeen;
      const stop = await client.callTool({ name: 'stop', arguments: { reason: 'stopped from the chat' } });
      assert.match(text(stop), /stopping/);
      const summary = await loop.whenStopped();
      assert.equal(summary.stopReason, 'stopped from the chat');
    } finally {
      await client.close();
      await loop.stop().catch(() => undefined);
      await store.close();
    }
    assert.ok(loopEvents.some((e) => e.type === 'loop.state' && e.state === 'paused'));
    const requests = (await events(p.dir)).filter((e) => e.event_type.startsWith('loop.') && e.event_type.endsWith('_requested'));
    assert.deepEqual(
      requests.map((e) => [e.event_type, e.actor, e.payload['client']]),
      [
        ['loop.pause_requested', 'mcp', CLIENT.name],
        ['loop.resume_requested', 'mcp', CLIENT.name],
        ['loop.stop_requested', 'mcp', CLIENT.name],
      ],
    );
    // The writer (the loop) applied them: its run id, not a short-lived writer's.
    const created = (await events(p.dir)).find((e) => e.entity_id === 'W3-001');
    assert.equal(created?.run_id, store.runId);
  });
});
