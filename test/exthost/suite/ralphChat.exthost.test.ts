// Ralph's chat surfaces inside VS Code 1.100.3's real extension host, over the real store of
// the workspace: the @ralph participant's handler answers /status, /why, /add, /approve,
// /reject and /modify, and asks the loop (a writer holding the lock, as another process's loop
// does) to pause, resume and stop, asking back before /reject and /stop; vscode.lm.invokeTool runs the language-model tools — the reading ones answer; the
// deciding ones carry a confirmation saying what will happen and, confirmed, record their
// decision with actor lm-tool; the story document opens.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { controlContext } from '../../../src/control/context';
import { drainInbox, type HostCommand } from '../../../src/control/inbox';
import { decideAndAppend } from '../../../src/control/tasks';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { domainEvent } from '../../../src/domain/events';
import type { RalphApi } from '../../../src/extension/extension';
import { Commands } from '../../../src/extension/ids';
import { ChatIds } from '../../../src/extension/chat/chatIds';
import { openStore, type StoredEvent } from '../../../src/store';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const TOOL_NAMES = [
  'ralph_status',
  'ralph_list_tasks',
  'ralph_show_task',
  'ralph_deferred_queue',
  'ralph_add_task',
  'ralph_decide',
  'ralph_pause',
  'ralph_resume',
  'ralph_stop',
];

interface Recorded {
  markdown: string[];
  buttons: vscode.Command[];
}

/** A ChatResponseStream that records what the handler says. */
function recorder(): { stream: vscode.ChatResponseStream; out: Recorded } {
  const out: Recorded = { markdown: [], buttons: [] };
  const stream = {
    markdown: (v: string | vscode.MarkdownString) => void out.markdown.push(typeof v === 'string' ? v : v.value),
    button: (c: vscode.Command) => void out.buttons.push(c),
    anchor: () => undefined,
    progress: () => undefined,
    reference: () => undefined,
    filetree: () => undefined,
    push: () => undefined,
  } as unknown as vscode.ChatResponseStream;
  return { stream, out };
}

const token = new vscode.CancellationTokenSource().token;

describe('extension host: @ralph and the language-model tools', function () {
  this.timeout(120_000);
  let api: RalphApi;

  async function ask(command: string | undefined, prompt: string): Promise<{ out: Recorded; result: vscode.ChatResult }> {
    const { stream, out } = recorder();
    const request = {
      prompt,
      command,
      references: [],
      toolReferences: [],
      toolInvocationToken: undefined,
      model: undefined,
    } as unknown as vscode.ChatRequest;
    const result = (await api.chat!.handler(request, { history: [] } as unknown as vscode.ChatContext, stream, token)) as vscode.ChatResult;
    return { out, result };
  }
  const text = (r: vscode.LanguageModelToolResult): string =>
    r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : ((p as { value?: string }).value ?? ''))).join('');
  const events = (): StoredEvent[] => api.engine!.recentEvents(1000).reverse();
  /** A command link into this window's (only) folder. */
  const link = (command: string, id: string): string =>
    `command:${command}?${encodeURIComponent(JSON.stringify([id, api.engine!.projectDir]))}`;

  before(async () => {
    const ext = vscode.extensions.getExtension<RalphApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    if (!api.engine!.isInitialized()) await vscode.commands.executeCommand(Commands.initialize);
    await api.engine!.open();
    // Three tasks whose tier-2 patches wait for a decision (queued, deferred: as the loop leaves them).
    await api.engine!.withWriter((ctx) =>
      decideAndAppend(ctx, () => ({
        events: ['CHAT-1', 'CHAT-2', 'CHAT-3', 'CHAT-4'].flatMap((id, i) => {
          const patch = `patch_${id}_1`;
          return [
            domainEvent('task.created', id, 'test', {
              title: `Chat task ${i + 1}`,
              source: 'specs/chat.md:1',
              effort: 'M',
              deps: '-',
              wave: 5,
              provenance: 'spec',
            }),
            domainEvent('task.claimed', id, 'primary', { old_status: 'pending', new_status: 'claimed', claimed_by: 'primary' }),
            domainEvent('patch.queued', patch, 'primary', {
              task_id: id,
              patch_path: `.ralph/commits/pending/${id}.patch`,
              created_by: 'primary',
            }),
            domainEvent('task.proposed', id, 'primary', { old_status: 'claimed', new_status: 'proposed', patch_id: patch }),
            domainEvent('task.deferred', id, 'primary', {
              old_status: 'proposed',
              new_status: 'deferred',
              patch_id: patch,
              risk_tier: 2,
              reason: 'tier 2 (sensitive): defer to the judge',
            }),
          ];
        }),
        result: undefined,
      })),
    );
  });

  it('registers the participant and every tool; the MCP server definition only where VS Code has the API', () => {
    assert.ok(api.chat, 'the chat surfaces are registered');
    assert.deepEqual(api.chat.registered.participant, true);
    assert.deepEqual(api.chat.registered.tools, true);
    const hasMcpApi =
      typeof (vscode.lm as unknown as { registerMcpServerDefinitionProvider?: unknown }).registerMcpServerDefinitionProvider === 'function';
    assert.equal(api.chat.registered.mcpServer, hasMcpApi);
    console.log(`      [vscode ${vscode.version}] MCP server definition API: ${hasMcpApi ? 'present, registered' : 'absent, skipped'}`);
    const ours = vscode.lm.tools.filter((t) => t.name.startsWith('ralph_'));
    assert.deepEqual(ours.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
    assert.ok(ours.find((t) => t.name === 'ralph_decide')?.tags.includes('ralph-decides'));
  });

  it('/status answers from the store, with links that reveal the waiting tasks', async () => {
    const { out, result } = await ask('status', '');
    const md = out.markdown.join('\n');
    assert.match(md, /=== Ralph Loop v3 Status ===/);
    assert.match(md, /Deferred: 4/);
    // Links carry the folder, so a window with several folders opens the right one.
    assert.ok(md.includes(`Waiting for a decision: [CHAT-1](${link(Commands.revealTask, 'CHAT-1')}) (tier 2, Chat task 1)`), md);
    assert.deepEqual(
      out.buttons.map((b) => b.command),
      [Commands.showMonitor],
    );
    assert.deepEqual(result.metadata, { command: 'status', ok: true });
  });

  it("/why tells the task's story with its patch and offers the story, the backlog and the diff", async () => {
    const { out } = await ask('why', 'CHAT-1');
    const md = out.markdown.join('\n');
    assert.match(md, /^# CHAT-1: Chat task 1/m);
    assert.match(md, /\*\*deferred\*\* · wave 5 · effort M · tier 2 · source specs\/chat\.md:1/);
    assert.ok(md.includes(`patch [patch_CHAT-1_1](${link(Commands.openPatchDiff, 'patch_CHAT-1_1')}): queued`), md);
    assert.deepEqual(
      out.buttons.map((b) => [b.command, b.arguments]),
      [
        [ChatIds.showTaskStory, ['CHAT-1', api.engine!.projectDir]],
        [Commands.revealTask, ['CHAT-1', api.engine!.projectDir]],
        [Commands.openPatchDiff, ['patch_CHAT-1_1', api.engine!.projectDir]],
      ],
    );
    const bad = await ask('why', '../../etc/passwd');
    assert.match(bad.out.markdown.join(''), /is not a task id/);
    assert.deepEqual(bad.result.metadata, { command: 'why', ok: false });
  });

  it('/approve, /modify and /reject decide as the person (actor human, via vscode-chat); /reject needs a note and asks back first; /add goes through the policy', async () => {
    const approved = await ask('approve', 'CHAT-1 reviewed it');
    assert.match(approved.out.markdown.join(''), /^Approved \[CHAT-1\]/);
    assert.equal(api.engine!.task('CHAT-1')?.status, 'proposed');
    const bare = await ask('reject', 'CHAT-2');
    assert.match(bare.out.markdown.join(''), /needs a note/);
    assert.equal(bare.result.metadata?.['confirm'], undefined, 'a refused rejection asks nothing');
    const before = events().length;
    const asked = await ask('reject', 'CHAT-2 empty tokens must fail');
    assert.match(
      asked.out.markdown.join(''),
      /^Reject the deferred patch of CHAT-2\? The patch is discarded[^]*"empty tokens must fail"[^]*Nothing happens until you confirm/,
    );
    assert.equal(api.engine!.task('CHAT-2')?.status, 'deferred', 'asking back decides nothing');
    assert.equal(events().length, before);
    const key = String(asked.result.metadata?.['confirm']);
    assert.match(key, /^[0-9a-f]{8}$/);
    const [followup] = api.chat!.followups(asked.result);
    assert.deepEqual(followup, { prompt: `confirm ${key}`, label: 'Reject CHAT-2', command: 'reject' });
    const wrong = await ask('stop', `confirm ${key}`);
    assert.match(wrong.out.markdown.join(''), /That confirmation is not open/, 'a confirmation answers only its own command');
    const rejected = await ask('reject', followup!.prompt);
    assert.match(rejected.out.markdown.join(''), /^Rejected \[CHAT-2\]/);
    assert.equal(api.engine!.task('CHAT-2')?.status, 'pending');
    const again = await ask('reject', followup!.prompt);
    assert.match(again.out.markdown.join(''), /That confirmation is not open \(already used/);
    const bareModify = await ask('modify', 'CHAT-4');
    assert.match(bareModify.out.markdown.join(''), /Modify needs an instruction/);
    const modified = await ask('modify', 'CHAT-4 also reject empty strings');
    assert.match(
      modified.out.markdown.join(''),
      /^Sent back \[CHAT-4\]\(command:[^)]*\): its patch goes back to the agents with your instruction/,
    );
    assert.equal(api.engine!.task('CHAT-4')?.status, 'pending');
    const decisions = events().filter((e) => e.event_type === 'task.deferral_resolved' && e.entity_id.startsWith('CHAT-'));
    assert.deepEqual(
      decisions.map((e) => [e.entity_id, e.actor, e.payload['decision'], e.payload['client'], e.payload['rationale']]),
      [
        ['CHAT-1', 'human', 'approve', 'vscode-chat', 'reviewed it'],
        ['CHAT-2', 'human', 'reject', 'vscode-chat', 'empty tokens must fail'],
        ['CHAT-4', 'human', 'modify', 'vscode-chat', 'also reject empty strings'],
      ],
    );
    const added = await ask('add', 'Validate emails wave 6 effort M');
    assert.match(added.out.markdown.join(''), /^Added \[W6-001\]\(command:ralph\.revealTask/);
    assert.equal(api.engine!.task('W6-001')?.title, 'Validate emails');
    assert.equal(api.engine!.task('W6-001')?.provenance, 'auto');
  });

  it("/pause, /resume and /stop: refused with no loop; with one they go through its inbox as the human's requests, /stop only once confirmed", async () => {
    const idle = await ask('pause', '');
    assert.match(idle.out.markdown.join(''), /No loop is running in .*there is nothing to pause/);
    assert.match((await ask('stop', '')).out.markdown.join(''), /No loop is running/);
    // A loop in another process: a writer holding the lock that drains the inbox, as the loop does.
    const ralphDir = path.join(api.engine!.projectDir, '.ralph');
    const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, runId: 'exthost_loop', drainsInbox: true });
    const asked: string[] = [];
    let running = true;
    const drainer = (async () => {
      const inbox = path.join(ralphDir, 'inbox');
      while (running) {
        if (fs.existsSync(inbox) && fs.readdirSync(inbox).some((f) => f.endsWith('.json')))
          await drainInbox(controlContext(store, { ralphDir, projectDir: api.engine!.projectDir }), {
            onHostCommand: (c: HostCommand) => void asked.push(c.command),
          });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      assert.equal(api.engine!.loopState(), 'running');
      const paused = await ask('pause', 'lunch');
      assert.match(paused.out.markdown.join(''), /^The loop is paused/);
      const resumed = await ask('resume', '');
      assert.match(resumed.out.markdown.join(''), /^The loop is resumed/);
      const stop = await ask('stop', 'done for today');
      assert.match(stop.out.markdown.join(''), /^Stop the loop\? Its agents are ended within seconds[^]*Nothing happens until you confirm/);
      assert.deepEqual(asked, ['pause', 'resume'], 'asking back sends nothing');
      const [confirm] = api.chat!.followups(stop.result);
      assert.equal(confirm?.command, 'stop');
      const stopped = await ask('stop', confirm!.prompt);
      assert.match(stopped.out.markdown.join(''), /^The loop is stopping/);
      assert.deepEqual(asked, ['pause', 'resume', 'stop']);
    } finally {
      running = false;
      await drainer;
      await store.close();
    }
    api.engine!.scheduleRefresh();
    await api.engine!.settled();
    const requests = events().filter((e) => /^loop\.(pause|resume|stop)_requested$/.test(e.event_type));
    assert.deepEqual(
      requests.map((e) => [e.event_type, e.actor, e.payload['client'], e.payload['reason']]),
      [
        ['loop.pause_requested', 'human', 'vscode-chat', 'lunch'],
        ['loop.resume_requested', 'human', 'vscode-chat', undefined],
        ['loop.stop_requested', 'human', 'vscode-chat', 'done for today'],
      ],
    );
  });

  it('vscode.lm.invokeTool: the reading tools answer from the store', async () => {
    const call = async (name: string, input: object): Promise<string> =>
      text(await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token));
    assert.match(await call('ralph_status', {}), /Ralph Loop v3 Status/);
    assert.match(
      await call('ralph_list_tasks', { status: ['deferred'] }),
      /^1 task\(s\) with status deferred\n[\s\S]*\| CHAT-3 \| deferred \| 5 \| M \| 2 \| Chat task 3 \|/,
    );
    assert.match(
      await call('ralph_show_task', { task_id: 'CHAT-2' }),
      /human \(vscode-chat\) \| task\.deferral_resolved \| reject: empty tokens must fail/,
    );
    assert.match(await call('ralph_deferred_queue', {}), /1 deferred patch\(es\) wait/);
    await assert.rejects(
      Promise.resolve(vscode.lm.invokeTool('ralph_show_task', { input: { task_id: 'NOPE-9' }, toolInvocationToken: undefined }, token)),
      /No task NOPE-9/,
    );
  });

  it('every deciding tool asks for confirmation (what will happen, named); the reading tools do not', async () => {
    // VS Code shows these as the confirmation before it runs the tool. Its own dialog cannot
    // be observed here: under extension tests (extensionTestsLocationURI) VS Code's dialog
    // service answers every confirmation "yes" without showing it.
    const asked: [string, Record<string, unknown>, RegExp, RegExp][] = [
      ['ralph_add_task', { title: 'Sneaky task', wave: 6 }, /^Add a task to the Ralph backlog\?$/, /"Sneaky task" \(effort S, wave 6\)/],
      [
        'ralph_decide',
        { task_id: 'CHAT-3', decision: 'approve' },
        /^Approve CHAT-3's patch\?$/,
        /promoted onto the branch, overriding the judge/,
      ],
      ['ralph_decide', { task_id: 'CHAT-3', decision: 'reject', note: 'no' }, /^Reject CHAT-3's patch\?$/, /discarded: "no"/],
      ['ralph_pause', {}, /^Pause the Ralph loop\?$/, /asked to pause/],
      ['ralph_resume', {}, /^Resume the Ralph loop\?$/, /asked to resume/],
      ['ralph_stop', {}, /^Stop the Ralph loop\?$/, /asked to stop/],
    ];
    const before = events().length;
    for (const [name, input, title, message] of asked) {
      const prepared = (await api.chat!.tools.get(name)!.prepareInvocation!({ input }, token)) as vscode.PreparedToolInvocation;
      assert.match(String(prepared.confirmationMessages?.title), title, name);
      assert.match((prepared.confirmationMessages?.message as vscode.MarkdownString).value, message, name);
    }
    for (const name of ['ralph_status', 'ralph_list_tasks', 'ralph_show_task', 'ralph_deferred_queue']) {
      const prepared = (await api.chat!.tools.get(name)!.prepareInvocation!(
        { input: { task_id: 'CHAT-3' } },
        token,
      )) as vscode.PreparedToolInvocation;
      assert.equal(prepared.confirmationMessages, undefined, `${name} does not ask`);
    }
    assert.equal(events().length, before, 'asking decides nothing');
  });

  it('vscode.lm.invokeTool on a deciding tool, confirmed, decides with actor lm-tool; bad input is refused', async () => {
    const r = await vscode.lm.invokeTool(
      'ralph_decide',
      { input: { task_id: 'CHAT-3', decision: 'modify', note: 'reject empty strings' }, toolInvocationToken: undefined },
      token,
    );
    assert.match(text(r), /^Sent back CHAT-3/);
    const last = events()
      .filter((e) => e.entity_id === 'CHAT-3' && e.event_type === 'task.deferral_resolved')
      .at(-1);
    assert.equal(last?.actor, 'lm-tool');
    assert.equal(last?.payload['client'], 'vscode');
    assert.equal(last?.payload['client_version'], vscode.version);
    const before = events().length;
    await assert.rejects(
      Promise.resolve(
        vscode.lm.invokeTool('ralph_decide', { input: { task_id: 'x y', decision: 'approve' }, toolInvocationToken: undefined }, token),
      ),
      /invalid input: task_id|did not match|pattern/,
    );
    assert.equal(events().length, before, 'nothing decided on bad input');
  });

  it('Show Task Story opens the story as a page beside its markdown document', async () => {
    await vscode.commands.executeCommand(ChatIds.showTaskStory, 'CHAT-2');
    const pages = (): vscode.Tab[] =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter((t) => t.input instanceof vscode.TabInputWebview && t.label === 'Story CHAT-2');
    assert.equal(pages().length, 1, 'one story page');
    assert.match((pages()[0]!.input as vscode.TabInputWebview).viewType, /ralph\.story$/);
    await vscode.commands.executeCommand(ChatIds.showTaskStory, 'CHAT-2');
    assert.equal(pages().length, 1, 'shown again, the same page');
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: ChatIds.storyScheme, path: '/CHAT-2.md' }));
    assert.match(doc.getText(), /^# CHAT-2: Chat task 2/);
    assert.match(doc.getText(), /\*\*human\*\* \(via vscode-chat\) reject: empty tokens must fail/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
