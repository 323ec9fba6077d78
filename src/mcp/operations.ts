// What a chat can ask of Ralph, host-neutral: the MCP server (`ralph mcp`) and VS Code's
// `@ralph` participant and language-model tools all call these. Reads come from the store as
// it is now; every change is an inbox command (a running loop applies it, else it is applied
// at once) with the asker's actor and relaying client, so it is audited like any other. Each
// answer is markdown for the model or the person plus the same facts as data.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { CommandClient, ControlContext } from '../control/context';
import { ralphPaths } from '../control/context';
import { deferredTasks } from '../control/deferred';
import { deferredProposals } from '../control/proposals';
import { statusFacts, statusText } from '../control/derived';
import type { InboxCommand } from '../control/inbox';
import { proposalOutcome } from '../control/proposeTask';
import { readTaskStory, renderTaskStory, withCommitFiles, type StoryLinks } from '../control/story';
import { commitFiles } from '../git/commitFiles';
import { allTasks, getTask, patchesOf } from '../control/views';
import { renderBacklog } from '../domain/backlog';
import type { Effort, Task, TaskStatus } from '../domain/model';
import { currentWave } from '../domain/task';
import { renderStateJson } from '../domain/views';
import type { LockHolder } from '../store';
import type { WriteOutcome } from './storeAccess';

/** How the operations reach a project's store (StoreAccess for the CLI side; the Engine in VS Code). */
export interface RalphPort {
  readonly projectDir: string;
  read(): Promise<ControlContext>;
  write(cmd: InboxCommand): Promise<WriteOutcome>;
  /** The live writer: a running loop (or a short-lived CLI for an instant); 'here' when this host runs it. */
  writer(): LockHolder | 'here' | undefined;
}

/** The answer of an operation: markdown, the facts as data, and whether it is a refusal or failure. */
export interface OperationResult {
  readonly text: string;
  readonly data: Record<string, unknown>;
  readonly isError?: boolean;
}

/** A forecast of the backlog's cost and time (issue 14 supplies one); undefined while it cannot say. */
export type ForecastSource = (ctx: ControlContext) => { readonly text: string; readonly data: Record<string, unknown> } | undefined;

export interface OperationsOptions {
  /** Who decides: `mcp` over MCP, `human` for VS Code's participant. */
  readonly actor: string;
  /** The relaying client, stamped into the events (the MCP handshake's name and version). */
  readonly client?: () => CommandClient | undefined;
  readonly forecast?: ForecastSource;
  /** Links in the answers (VS Code: command links that reveal tasks and open diffs and stories). */
  readonly links?: StoryLinks;
  /** The default `source` of a task added through this surface. */
  readonly source?: string;
}

export interface TaskFilter {
  readonly status?: readonly TaskStatus[];
  readonly wave?: number;
  readonly tier?: number;
  readonly limit?: number;
}

export interface AddTaskInput {
  readonly title: string;
  readonly effort?: Effort;
  readonly wave?: number;
  readonly id?: string;
  readonly deps?: readonly string[];
  readonly source?: string;
  readonly rationale?: string;
  readonly confidence?: number;
}

export type Decision = 'approve' | 'reject' | 'modify';
export type LoopVerb = 'pause' | 'resume' | 'stop';

const cell = (s: string | null | undefined): string => (s ?? '-').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const fail = (text: string, data: Record<string, unknown> = {}): OperationResult => ({ text, data: { ok: false, ...data }, isError: true });

export class RalphOperations {
  constructor(
    private readonly port: RalphPort,
    private readonly o: OperationsOptions,
  ) {}

  private link(kind: Exclude<keyof StoryLinks, 'file'>, id: string): string {
    const url = this.o.links?.[kind]?.(id);
    return url ? `[${id}](${url})` : id;
  }

  private client(): CommandClient | undefined {
    return this.o.client?.();
  }

  private loopLine(): { text: string; data: Record<string, unknown> } {
    const w = this.port.writer();
    if (w === undefined) return { text: 'Loop: not running', data: { running: false } };
    if (w === 'here') return { text: 'Loop: running in this window', data: { running: true, here: true } };
    return {
      text: `Loop: running (pid ${w.pid} on ${w.host}, since ${w.started})`,
      data: { running: true, pid: w.pid, host: w.host, since: w.started },
    };
  }

  async status(): Promise<OperationResult> {
    const ctx = await this.port.read();
    const facts = statusFacts(ctx);
    const loop = this.loopLine();
    const deferred = deferredTasks(ctx);
    const forecast = this.o.forecast?.(ctx);
    const lines = [statusText(ctx).trimEnd(), loop.text];
    if (deferred.length)
      lines.push(
        `Waiting for a decision: ${deferred.map((t) => `${this.link('task', t.task_id)} (tier ${t.risk_tier}${t.title ? `, ${t.title}` : ''})`).join('; ')}`,
      );
    if (forecast) lines.push(forecast.text);
    return {
      text: `${lines.join('\n')}\n`,
      data: {
        ...facts,
        taskCounts: Object.fromEntries(facts.taskCounts),
        patchCounts: Object.fromEntries(facts.patchCounts),
        loop: loop.data,
        waiting: deferred.map((t) => t.task_id),
        forecast: forecast?.data ?? null,
      },
    };
  }

  async listTasks(f: TaskFilter = {}): Promise<OperationResult> {
    const ctx = await this.port.read();
    const limit = Math.min(Math.max(f.limit ?? 100, 1), 500);
    const matching = allTasks(ctx.store).filter(
      (t) =>
        (f.status === undefined || f.status.length === 0 || f.status.includes(t.status)) &&
        (f.wave === undefined || t.wave === f.wave) &&
        (f.tier === undefined || t.risk_tier === f.tier),
    );
    const shown = matching.slice(0, limit);
    const what = [
      ...(f.status?.length ? [`status ${f.status.join('/')}`] : []),
      ...(f.wave !== undefined ? [`wave ${f.wave}`] : []),
      ...(f.tier !== undefined ? [`tier ${f.tier}`] : []),
    ];
    const head = `${matching.length} task(s)${what.length ? ` with ${what.join(', ')}` : ''}${shown.length < matching.length ? `, the first ${shown.length} shown` : ''}`;
    const rows = shown.map(
      (t) => `| ${this.link('task', t.task_id)} | ${t.status} | ${t.wave} | ${cell(t.effort)} | ${t.risk_tier} | ${cell(t.title)} |`,
    );
    const table = shown.length
      ? ['', '| id | status | wave | effort | tier | title |', '|----|--------|------|--------|------|-------|', ...rows]
      : [];
    return {
      text: `${[head, ...table].join('\n')}\n`,
      data: {
        total: matching.length,
        tasks: shown.map((t) => ({
          id: t.task_id,
          status: t.status,
          wave: t.wave,
          effort: t.effort,
          tier: t.risk_tier,
          title: t.title,
          deps: t.deps,
          claimed_by: t.claimed_by,
          patch_id: t.patch_id,
        })),
      },
    };
  }

  async showTask(taskId: string): Promise<OperationResult> {
    const ctx = await this.port.read();
    const read = readTaskStory(ctx.store, taskId);
    if (read === undefined) return fail(`No task ${taskId} in this project.`, { taskId });
    const story = await withCommitFiles(read, (hash) => commitFiles(ctx.projectDir, hash));
    return { text: renderTaskStory(story, this.o.links ?? {}), data: { story } };
  }

  async deferred(): Promise<OperationResult> {
    const ctx = await this.port.read();
    const tasks = deferredTasks(ctx);
    const proposals = deferredProposals(ctx);
    const lines: string[] = [];
    if (tasks.length === 0) lines.push('No deferred patches wait for a decision.');
    else {
      lines.push(
        `${tasks.length} deferred patch(es) wait for a decision (approve, reject with a note, or modify with an instruction):`,
        '',
      );
      for (const t of tasks) {
        const patch = t.patch_id ?? patchesOf(ctx.store, t.task_id).at(-1)?.patch_id;
        lines.push(
          `- **${this.link('task', t.task_id)}** ${t.title ?? ''} — tier ${t.risk_tier}, ${t.deferred_reason ?? 'deferred'} (since ${t.deferred_at ?? '?'})${patch ? `; patch ${this.link('patch', patch)}` : ''}`,
        );
      }
    }
    if (proposals.length) {
      lines.push('', `${proposals.length} proposal(s) wait for the judge:`, '');
      for (const p of proposals) lines.push(`- ${p.file} (${p.proposal_type}): ${p.reason}`);
    }
    return {
      text: `${lines.join('\n')}\n`,
      data: {
        tasks: tasks.map((t) => ({
          id: t.task_id,
          title: t.title,
          tier: t.risk_tier,
          reason: t.deferred_reason,
          deferred_at: t.deferred_at,
          patch_id: t.patch_id,
        })),
        proposals: proposals.map((p) => ({ id: p.file, type: p.proposal_type, reason: p.reason, deferred_at: p.deferred_at })),
      },
    };
  }

  async addTask(input: AddTaskInput): Promise<OperationResult> {
    const ctx = await this.port.read();
    const tasks = allTasks(ctx.store);
    if (input.id !== undefined && tasks.some((t) => t.task_id === input.id))
      return fail(`Task ${input.id} already exists.`, { id: input.id });
    const wave = input.wave ?? currentWave(tasks);
    const proposalId = `chat_${new Date().toISOString().replace(/[-:.TZ]/g, '')}_${randomBytes(3).toString('hex')}`;
    const client = this.client();
    const out = await this.port.write({
      command: 'propose-task',
      proposal_id: proposalId,
      task: {
        ...(input.id !== undefined ? { id: input.id } : {}),
        title: input.title,
        source: input.source ?? this.o.source ?? 'chat',
        effort: input.effort ?? 'S',
        wave,
        deps: input.deps?.length ? input.deps.join(',') : '-',
      },
      confidence: input.confidence ?? 0.9,
      rationale: input.rationale ?? `asked for through ${client?.name ?? this.o.actor}`,
      actor: this.o.actor,
      ...(client ? { client } : {}),
    });
    if (out.state !== 'applied') return this.notApplied(out, 'The task proposal');
    const r = proposalOutcome((await this.port.read()).store, proposalId);
    if (r === undefined) return fail(`The proposal ${proposalId} was applied but left no outcome in the log.`, { proposalId });
    const data = { ok: r.outcome !== 'rejected', proposal: proposalId, outcome: r.outcome, taskId: r.taskId, detail: r.detail };
    if (r.outcome === 'accepted')
      return {
        text: `Added ${this.link('task', r.taskId)} "${input.title}" (wave ${wave}, effort ${input.effort ?? 'S'}): the policy accepted it.\n`,
        data,
      };
    if (r.outcome === 'deferred')
      return {
        text: `Proposed ${r.taskId} "${input.title}", but the policy deferred it to the judge: ${r.detail}. It waits as proposal ${proposalId}.\n`,
        data,
      };
    return { text: `Not added: ${r.detail}.\n`, data, isError: true };
  }

  /** Why a decision cannot be made now (a refusal), or undefined when it can: asked before a confirmation. */
  async checkDecision(taskId: string, decision: Decision, text?: string): Promise<OperationResult | undefined> {
    const note = text?.trim() ?? '';
    if (decision === 'reject' && note === '') return fail('A rejection needs a note saying why (the next attempt reads it).');
    if (decision === 'modify' && note === '') return fail('Modify needs an instruction saying what to change.');
    const t = getTask((await this.port.read()).store, taskId);
    if (t === undefined) return fail(`No task ${taskId} in this project.`, { taskId });
    if (t.status !== 'deferred')
      return fail(`${taskId} is ${t.status}, not deferred: only a deferred patch waits for a decision.`, { taskId, status: t.status });
    return undefined;
  }

  async decide(taskId: string, decision: Decision, text?: string): Promise<OperationResult> {
    const note = text?.trim() ?? '';
    const refused = await this.checkDecision(taskId, decision, note);
    if (refused) return refused;
    const t = getTask((await this.port.read()).store, taskId) as Task;
    const client = this.client();
    const rationale = note || `approved through ${client?.name ?? this.o.actor}`;
    const out = await this.port.write({
      command: 'resolve-deferred',
      task_id: taskId,
      decision,
      actor: this.o.actor,
      rationale,
      ...(client ? { client } : {}),
    });
    if (out.state !== 'applied') return this.notApplied(out, `The decision on ${taskId}`);
    const now = getTask((await this.port.read()).store, taskId) as Task;
    const running = this.port.writer() !== undefined;
    const next =
      decision === 'approve'
        ? now.status === 'done'
          ? 'it is done'
          : `its patch is approved and ${running ? 'the running loop promotes it now' : 'is promoted when the loop next runs'} (the gates run again if the branch moved)`
        : decision === 'reject'
          ? 'its patch is discarded and the task is pending again; the next attempt reads your note'
          : 'its patch goes back to the agents with your instruction; the next attempt starts from it';
    return {
      text: `${decision === 'approve' ? 'Approved' : decision === 'reject' ? 'Rejected' : 'Sent back'} ${this.link('task', taskId)}: ${next}.\n`,
      data: { ok: true, taskId, decision, status: now.status, patch_id: t.patch_id },
    };
  }

  /** Why the loop cannot take `verb` now (a refusal), or undefined when it can. */
  checkLoop(verb: LoopVerb): OperationResult | undefined {
    if (this.port.writer() === undefined)
      return fail(`No loop is running in ${this.port.projectDir}; there is nothing to ${verb}.`, { running: false });
    return undefined;
  }

  async loop(verb: LoopVerb, reason?: string): Promise<OperationResult> {
    const refused = this.checkLoop(verb);
    if (refused) return refused;
    const client = this.client();
    const out = await this.port.write({
      command: verb,
      actor: this.o.actor,
      ...(reason?.trim() ? { reason: reason.trim() } : {}),
      ...(client ? { client } : {}),
    });
    if (out.state !== 'applied') return this.notApplied(out, `The ${verb} request`);
    const said = {
      pause: 'paused: agents finish what they do, nothing new starts',
      resume: 'resumed',
      stop: 'stopping: its agents are ended within seconds',
    };
    return { text: `The loop is ${said[verb]}.\n`, data: { ok: true, verb } };
  }

  private notApplied(out: WriteOutcome, what: string): OperationResult {
    if (out.state === 'failed') return fail(`${what} failed: ${out.error}`, { file: out.file, error: out.error });
    const w = out.state === 'queued' ? out.writer : undefined;
    return {
      text: `${what} is queued (${out.file}) for the writer${w ? ` (pid ${w.pid})` : ''}, which has not applied it yet; it will when it next reads its inbox.\n`,
      data: { ok: true, queued: true, file: out.file },
    };
  }

  /** BACKLOG.md as the store has it now (the same rendering the loop writes). */
  async backlogMarkdown(): Promise<string> {
    const ctx = await this.port.read();
    const tasks = allTasks(ctx.store);
    return renderBacklog(tasks, tasks.length === 0 ? [0, 1, 2] : []);
  }

  /** STATE.json: the loop's position from the file, the counts from the store now. */
  async stateJson(): Promise<string> {
    const ctx = await this.port.read();
    let prev: Record<string, unknown> | undefined;
    try {
      const v: unknown = JSON.parse(fs.readFileSync(ralphPaths(ctx.ralphDir).state, 'utf8'));
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) prev = v as Record<string, unknown>;
    } catch {
      prev = undefined;
    }
    const tasks = allTasks(ctx.store);
    const counts: Record<string, number> = {};
    for (const t of tasks) counts[t.status] = (counts[t.status] ?? 0) + 1;
    const f = statusFacts(ctx);
    return renderStateJson({ taskCounts: counts, commitsTotal: f.commits, currentWave: currentWave(tasks) }, prev);
  }

  /** Task ids for completion and resource listings. */
  async taskIds(): Promise<string[]> {
    return allTasks((await this.port.read()).store).map((t) => t.task_id);
  }
}
