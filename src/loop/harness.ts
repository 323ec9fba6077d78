// The harness's shared machinery, used by the primary and the workers alike: agent
// invocations under budget guards with metrics, the gates run by the harness, and the
// promotion pipeline (capture -> patch.queued -> risk from the patch's files -> policy ->
// tier 0/1 promote via git plumbing | tier 2 defer | tier 3 decompose), plus the judge.
// Every promotion lands on the exact commit its gates ran on: a fresh patch through a
// rebase of its agent's worktree, a late one (approved, waited on the user's checkout)
// through a re-verification in a scratch worktree (lateVerify.ts).
import { appendFile, copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentBackend, AgentResult } from '../agents/types';
import { metricsLineFor } from '../agents/metrics';
import { secretValuesOf } from '../agents/secrets';
import { extractJsonAnswer } from '../agents/structured';
import { classifyRisk } from '../domain/risk';
import type { RiskTier } from '../domain/risk';
import { decidePolicy } from '../domain/policy';
import { capturePatch } from '../git/capture';
import type { CapturedPatch } from '../git/capture';
import { filesTouchedByPatch, touchedPaths } from '../git/patchParse';
import { findPromotedCommit, formatPromotionMessage, promotePatch } from '../git/promote';
import { rebaseWorktree } from '../git/rebase';
import { branchTip, currentBranch, dirtyPaths } from '../git/repo';
import { ProcessLedger } from '../shared/processLedger';
import { validatePhaseOutput } from '../project/phaseOutputs';
import type { Phase as OutputPhase, PhaseOutput } from '../project/phaseOutputs';
import type { AgentName, LoopEmitter } from './events';
import { forbiddenPatternsGate, runGates } from './gates';
import type { GateResult, GateSpec } from './gates';
import { checkBudget, invocationBudget, summarizeSpend, utcDay } from './guards';
import type { CostLine } from './guards';
import { lateFailureReason, MAX_LATE_REVERIFICATIONS, reverifyOnTip } from './lateVerify';
import type { LateOrigin } from './lateVerify';
import type { LoopControl, LoopTask, MetricsLine, MetricsSink } from './ports';
import { decomposePrompt, judgePrompt } from './prompts';
import type { PromptContext } from './prompts';
import type { LoopSettings } from './settings';
import type { Clock } from './sleep';

export interface HarnessDeps {
  readonly projectDir: string;
  readonly ralphDir: string;
  readonly branch: string;
  readonly settings: LoopSettings;
  readonly control: LoopControl;
  readonly backends: { readonly primary: AgentBackend; readonly worker: AgentBackend; readonly judge: AgentBackend };
  readonly metrics: MetricsSink;
  readonly emitter: LoopEmitter;
  readonly clock: Clock;
  /** Extra environment for agent processes (tests point the scripted backend at its scenario). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /**
   * The loop's stop signal, for work started outside an agent's turn (an approval read by
   * the inbox poll re-runs the gates); without it such gates end only by their timeouts.
   */
  readonly signal?: AbortSignal;
}

const NEVER_ABORTED: AbortSignal = new AbortController().signal;

export type Role = 'primary' | 'worker' | 'judge';

export interface InvokeRequest {
  readonly agent: AgentName;
  readonly role: Role;
  readonly phase: string;
  readonly phaseTo?: string;
  readonly task: LoopTask | null;
  readonly prompt: string;
  readonly cwd: string;
  readonly iteration: number;
}

export type InvokeOutcome =
  | { readonly kind: 'ran'; readonly result: AgentResult }
  | { readonly kind: 'budget'; readonly scope: 'day' | 'task'; readonly message: string }
  | { readonly kind: 'stopped' };

/** Totals for the summary and the overhead benchmark. */
export interface HarnessTotals {
  invocations: number;
  costUsd: number;
  modelMs: number;
  gateMs: number;
  promoted: number;
  deferred: number;
  blocked: number;
  released: number;
}

export type PromotionOutcome =
  | { readonly kind: 'promoted'; readonly commit: string; readonly patchId: string }
  | { readonly kind: 'deferred'; readonly patchId: string }
  | { readonly kind: 'decomposed'; readonly accepted: number }
  | { readonly kind: 'waiting'; readonly patchId: string; readonly reason: string }
  | { readonly kind: 'no_change' }
  | { readonly kind: 'conflict'; readonly reason: string }
  /** The store moved on while the patch was verified (a human dropped, blocked or re-deferred the task, discarded the patch): not promoted. */
  | { readonly kind: 'abandoned'; readonly reason: string };

/** A verified change ready for promotion. */
export interface VerifiedChange {
  readonly agent: AgentName;
  readonly task: LoopTask;
  readonly worktree: string;
  readonly base: string;
  readonly patch: CapturedPatch;
  readonly gates: readonly GateResult[];
}

/** Serializes promotions: one branch update at a time within this process. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.tail.then(fn, fn);
    this.tail = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }
}

export class Harness {
  readonly totals: HarnessTotals = { invocations: 0, costUsd: 0, modelMs: 0, gateMs: 0, promoted: 0, deferred: 0, blocked: 0, released: 0 };
  private readonly costLines: CostLine[] = [];
  private readonly promotionLock = new Mutex();
  /** One late promotion at a time: they share the scratch worktree (gates run outside promotionLock). */
  private readonly lateLock = new Mutex();
  /** The commit each queued patch's gates ran on (also in its `patch.gates` note as `base_commit`). */
  private readonly patchBases = new Map<string, string>();
  /** Patches a judge or a human approved (and their re-based successors), for the failure wording. */
  private readonly approvedPatches = new Set<string>();
  /** Harness errors per late patch (see lateError). */
  private readonly lateErrors = new Map<string, number>();
  private patchSeq = 0;
  /** Consecutive successful runs without a change, per task. */
  private readonly noChange = new Map<string, number>();
  /** Gate results of deferred patches, for the judge (patchId -> results). */
  private readonly gateRecord = new Map<string, readonly GateResult[]>();
  /** Patches whose promotion waits on the user's checkout (patchId -> task). */
  readonly waiting = new Map<string, { taskId: string; patchPath: string; reason: string }>();

  /** Agents' and gates' process groups while they run: a run killed with SIGKILL leaves them for the next to reap. */
  readonly ledger: ProcessLedger;

  /** Judge invocations in flight (taskId -> its abort), so a human decision can end them. */
  private readonly judging = new Map<string, AbortController>();

  constructor(readonly d: HarnessDeps) {
    this.ledger = new ProcessLedger(join(d.ralphDir, 'locks', 'processes'));
  }

  /**
   * A human decided a deferred item: a judge still reviewing it is aborted (its process
   * group ends) and its verdict, if any arrives, is ignored. True when one was running.
   */
  cancelJudge(taskId: string, reason: string): boolean {
    const c = this.judging.get(taskId);
    if (c === undefined || c.signal.aborted) return false;
    this.log('judge', 'info', `judge for ${taskId} cancelled: ${reason}`);
    c.abort(new Error(reason));
    return true;
  }

  get promptContext(): PromptContext {
    return { ralphDir: this.d.ralphDir, domainConstraints: this.d.settings.domainConstraints };
  }

  /** Loads today's spend from the metrics log (budgets survive restarts). */
  async loadSpend(): Promise<void> {
    const today = utcDay(new Date(this.d.clock.now()).toISOString());
    const { lines, problems } = await this.d.metrics.read([today]);
    for (const l of lines) this.costLines.push({ ts: l.ts, cost: l.cost, task: l.task });
    // A torn line (a crash mid-write) may have held spend the budget now cannot count.
    for (const p of problems) this.log('harness', 'warn', `metrics line not counted for today's budget: ${p}`);
  }

  private spend(): ReturnType<typeof summarizeSpend> {
    return summarizeSpend(this.costLines, utcDay(new Date(this.d.clock.now()).toISOString()));
  }

  /** Day-level budget check, for the loop's pause decision. */
  dayBudget(): { ok: true } | { ok: false; message: string } {
    const v = checkBudget(this.spend(), this.d.settings.budgets, null);
    return v.ok ? { ok: true } : { ok: false, message: v.message };
  }

  log(agent: AgentName, level: 'info' | 'warn' | 'error', message: string): void {
    this.d.emitter.emit({ type: 'log', level, agent, message });
  }

  /** One agent invocation under the budget guards; writes its metrics line. */
  async invoke(req: InvokeRequest, signal: AbortSignal): Promise<InvokeOutcome> {
    const { settings } = this.d;
    const taskId = req.task?.task_id ?? null;
    if (signal.aborted) return { kind: 'stopped' };
    const spend = this.spend();
    const verdict = checkBudget(spend, settings.budgets, taskId);
    if (!verdict.ok) {
      this.d.emitter.emit({ type: 'budget', scope: verdict.scope, spent: verdict.spent, limit: verdict.limit, message: verdict.message });
      return { kind: 'budget', scope: verdict.scope, message: verdict.message };
    }
    const roleCap =
      req.role === 'judge'
        ? settings.budgets.perInvocationJudge
        : req.role === 'primary'
          ? settings.budgets.perInvocationPrimary
          : settings.budgets.perInvocationWorker;
    // 0 = no per-invocation cap; otherwise never more than what the day and the task have left.
    const left = invocationBudget(
      spend,
      { ...settings.budgets, perInvocationPrimary: roleCap, perInvocationWorker: roleCap },
      'primary',
      taskId,
    );
    const budgetUsd = roleCap > 0 ? Math.min(roleCap, left) : 0;
    if (roleCap > 0 && budgetUsd <= 0) {
      const message = `no budget left for ${req.agent} ${req.phase}${taskId ? ` on ${taskId}` : ''}`;
      this.d.emitter.emit({ type: 'budget', scope: 'invocation', spent: spend.today, limit: roleCap, message });
      return { kind: 'budget', scope: taskId !== null ? 'task' : 'day', message };
    }
    const backend = this.d.backends[req.role];
    const promptBytes = Buffer.byteLength(req.prompt);
    this.d.emitter.emit({ type: 'agent.started', agent: req.agent, phase: req.phase, taskId, promptBytes, budgetUsd });
    const started = this.d.clock.now();
    // The stop request reaches the backend only once its process is known to run (its
    // `init` event): src/agents/process.ts registers its abort listener after an await, so
    // an abort in that window was lost and the run hung. Harmless once that is fixed there.
    const local = new AbortController();
    let running = false;
    const onStop = (): void => {
      if (running) local.abort();
    };
    signal.addEventListener('abort', onStop, { once: true });
    const onEvent = (e: { type: string }): void => {
      if (e.type === 'init' && !running) {
        running = true;
        if (signal.aborted) local.abort();
      }
    };
    const result = await backend
      .run(
        {
          prompt: req.prompt,
          cwd: req.cwd,
          model: settings.model,
          maxTurns: settings.maxTurns,
          ...(budgetUsd > 0 ? { budgetUsd } : {}),
          timeoutMs: settings.invocationTimeoutMs,
          signal: local.signal,
          processLedger: this.ledger,
          env: { RALPH_PHASE: req.phase, RALPH_TASK: taskId ?? '', RALPH_AGENT: req.agent, ...this.d.agentEnv },
        },
        onEvent,
      )
      .finally(() => signal.removeEventListener('abort', onStop));
    const duration = this.d.clock.now() - started;
    this.totals.invocations++;
    this.totals.costUsd += result.costUsd;
    this.totals.modelMs += duration;
    const ts = new Date(this.d.clock.now()).toISOString();
    this.costLines.push({ ts, cost: result.costUsd, task: taskId });
    // The seed's line, rounded and with secret values redacted, as src/agents/metrics writes it.
    // Duration is the harness's own measure (its clock), as before.
    const { task_id: task, ...fields } = metricsLineFor(
      { ...result, durationMs: duration },
      {
        agent: req.agent,
        iter: req.iteration,
        phaseFrom: req.phase,
        phaseTo: req.phaseTo ?? req.phase,
        promptBytes,
        backend: backend.id,
        taskId,
        ts: new Date(this.d.clock.now()),
        secrets: secretValuesOf(this.d.agentEnv ?? {}),
      },
    );
    const line: MetricsLine = { ...fields, task };
    await this.d.metrics.append(line).catch((e: unknown) => this.log(req.agent, 'warn', `metrics write failed: ${String(e)}`));
    this.d.emitter.emit({
      type: 'agent.finished',
      agent: req.agent,
      phase: req.phase,
      taskId,
      status: result.status,
      costUsd: result.costUsd,
      durationMs: duration,
      turns: result.turns,
    });
    return { kind: 'ran', result };
  }

  /** The structured answer of a run, validated against the phase's schema. */
  structured<P extends OutputPhase>(phase: P, result: AgentResult): { ok: true; value: PhaseOutput<P> } | { ok: false; message: string } {
    const raw = result.structured ?? extractJsonAnswer(result.text);
    return validatePhaseOutput(phase, raw);
  }

  /** Command gates with events; timings go to the totals. */
  async gates(
    agent: AgentName,
    taskId: string | null,
    specs: readonly GateSpec[],
    cwd: string,
    signal: AbortSignal,
  ): Promise<GateResult[]> {
    const started = this.d.clock.now();
    try {
      return await runGates(specs, {
        cwd,
        signal,
        onGateStart: (gate) => this.d.emitter.emit({ type: 'gate.started', agent, gate, taskId }),
        onGateEnd: (r) =>
          this.d.emitter.emit({
            type: 'gate.finished',
            agent,
            gate: r.gate,
            taskId,
            status: r.status,
            durationMs: r.durationMs,
            outputTail: r.outputTail,
          }),
        onProgress: (gate, line) => this.d.emitter.emit({ type: 'gate.progress', agent, gate, line }),
        ledger: this.ledger,
      });
    } finally {
      this.totals.gateMs += this.d.clock.now() - started;
    }
  }

  private pendingPatchPath(taskId: string, agent: string): string {
    const stamp = new Date(this.d.clock.now()).toISOString().replace(/[-:.TZ]/g, '');
    return join(this.d.ralphDir, 'commits', 'pending', `${taskId}_${agent}_${stamp}_${++this.patchSeq}.patch`);
  }

  /**
   * Verify: the command gates, then the change is captured and the forbidden patterns are
   * checked on the lines it adds. Returns the results and the captured patch.
   */
  async verify(
    agent: AgentName,
    task: LoopTask,
    worktree: string,
    base: string,
    signal: AbortSignal,
  ): Promise<{ gates: GateResult[]; patch: CapturedPatch | null }> {
    const results = await this.gates(agent, task.task_id, this.d.settings.verifyGates, worktree, signal);
    if (results.some((r) => !r.ok)) return { gates: results, patch: null };
    const patch = await capturePatch(worktree, base, this.pendingPatchPath(task.task_id, agent));
    const fp = forbiddenPatternsGate(patch.addedLines, this.d.settings.forbiddenPatterns, this.d.settings.forbiddenExclude);
    this.d.emitter.emit({
      type: 'gate.finished',
      agent,
      gate: fp.gate,
      taskId: task.task_id,
      status: fp.status,
      durationMs: fp.durationMs,
      outputTail: fp.outputTail,
    });
    return { gates: [...results, fp], patch };
  }

  /** Promotion by tier, for a verified change (see the module header). */
  async promote(change: VerifiedChange, signal: AbortSignal, rebasesLeft = 3): Promise<PromotionOutcome> {
    const { control } = this.d;
    const { task, patch, agent } = change;
    if (patch.isEmpty) {
      // Defect 5: never left claimed. Twice in a row is not bad luck: block with the reason.
      const n = (this.noChange.get(task.task_id) ?? 0) + 1;
      this.noChange.set(task.task_id, n);
      if (n >= 2) {
        const why = `the agent reported success but changed no files (${n} runs in a row); check its permissions and the task`;
        await control.blockTask(task.task_id, agent, why);
        this.totals.blocked++;
        this.d.emitter.emit({ type: 'task.blocked', taskId: task.task_id, reason: why });
      } else {
        await control.releaseTask(task.task_id, agent, 'the run succeeded but changed no files');
        this.totals.released++;
        this.d.emitter.emit({ type: 'task.released', taskId: task.task_id, reason: 'the run changed no files' });
      }
      return { kind: 'no_change' };
    }
    this.noChange.delete(task.task_id);
    const files = touchedPaths(patch.files);
    const patchId = await control.queuePatch(task.task_id, patch.path, agent);
    const tier = classifyRisk(files, { effort: task.effort, source: task.source }, this.d.settings.riskPatterns);
    await control.recordRisk(task.task_id, tier, files, patchId, agent);
    this.d.emitter.emit({ type: 'patch.queued', taskId: task.task_id, patchId, files, tier });
    this.gateRecord.set(patchId, change.gates);
    this.patchBases.set(patchId, patch.baseCommit);
    // base_commit: the commit the gates ran on, durable for a promotion decided later.
    await control.note('patch', patchId, 'patch.gates', agent, {
      task_id: task.task_id,
      gates: change.gates.map((g) => ({ gate: g.gate, status: g.status })),
      base_commit: patch.baseCommit,
    });
    const policy = decidePolicy(tier);
    if (policy.decision === 'defer') {
      await control.deferTask(task.task_id, agent, policy.reason, tier, patchId);
      this.totals.deferred++;
      this.d.emitter.emit({ type: 'patch.deferred', taskId: task.task_id, patchId, reason: policy.reason });
      return { kind: 'deferred', patchId };
    }
    if (policy.decision === 'decompose') {
      await control.discardPatch(patchId, `risk tier ${tier}: decomposing into smaller tasks`, agent);
      const accepted = await this.decompose(task, files, change.worktree, signal);
      return { kind: 'decomposed', accepted };
    }
    // Only onto the commit the gates ran on: a moved branch means rebase and verify again.
    const r = await this.promoteQueued(task, patchId, patch.path, agent, patch.baseCommit);
    if (r.kind === 'conflict' && rebasesLeft > 0 && !signal.aborted) {
      return this.rebaseAndRetry(change, patchId, r.reason, signal, rebasesLeft - 1);
    }
    return r;
  }

  /** git plumbing promotion of a queued patch, then promote-patch in the store. */
  async promoteQueued(
    task: Pick<LoopTask, 'task_id' | 'title'>,
    patchId: string,
    patchPath: string,
    agent: string,
    expectedTip: string,
  ): Promise<PromotionOutcome> {
    return this.promotionLock.run(async () => {
      // The store decides before git does: a human may have dropped, blocked or re-deferred
      // the task, or discarded the patch, while its gates ran; git would otherwise put on the
      // branch what the store then refuses to record.
      const why = this.notPromotable(task.task_id, patchId);
      if (why !== null) return this.abandon(task.task_id, patchId, why, agent);
      const result = await promotePatch(this.d.projectDir, {
        branch: this.d.branch,
        patchFile: patchPath,
        message: formatPromotionMessage(task.task_id, task.title ?? task.task_id),
        patchId,
        expectedTip,
      });
      if (result.status === 'promoted') return this.recordPromoted(task.task_id, patchId, patchPath, result.commit, agent);
      if (result.status === 'waiting') {
        const prev = this.waiting.get(patchId);
        this.waiting.set(patchId, { taskId: task.task_id, patchPath, reason: result.reason });
        if (prev?.reason !== result.reason) {
          await this.d.control.note('patch', patchId, 'patch.waiting', agent, { task_id: task.task_id, reason: result.reason });
          this.d.emitter.emit({ type: 'patch.waiting', taskId: task.task_id, patchId, reason: result.reason });
        }
        return { kind: 'waiting', patchId, reason: result.reason };
      }
      return { kind: 'conflict', reason: `${result.reason}: ${result.detail}` };
    });
  }

  /** Why the store no longer wants this patch promoted, or null when it does. */
  private notPromotable(taskId: string, patchId: string): string | null {
    const t = this.d.control.task(taskId);
    const p = this.d.control.patches(taskId).find((x) => x.patch_id === patchId);
    if (!t) return `task ${taskId} is gone`;
    if (!p || !isLive(p.status)) return `patch ${patchId} is ${p?.status ?? 'unknown'}`;
    if (t.status !== 'proposed') return `task ${taskId} is ${t.status} now`;
    if (t.patch_id !== null && t.patch_id !== patchId) return `task ${taskId} moved on to patch ${t.patch_id}`;
    return null;
  }

  /**
   * Not promoted because the store moved on. The patch is closed when nothing else will use
   * it (the task is done or dropped, or has a newer patch); otherwise the human's state for
   * the task stands and the patch stays for them to decide.
   */
  private async abandon(taskId: string, patchId: string, why: string, actor: string): Promise<PromotionOutcome> {
    this.waiting.delete(patchId);
    const t = this.d.control.task(taskId);
    const p = this.d.control.patches(taskId).find((x) => x.patch_id === patchId);
    const closes = t === undefined || t.status === 'done' || t.status === 'dropped' || (t.patch_id !== null && t.patch_id !== patchId);
    if (p && isLive(p.status) && closes) {
      await this.d.control.discardPatch(patchId, `not promoted: ${why}`, actor);
      this.d.emitter.emit({ type: 'patch.discarded', taskId, patchId, reason: `not promoted: ${why}` });
    }
    this.log('harness', 'info', `${taskId}: patch ${patchId} not promoted: ${why}`);
    return { kind: 'abandoned', reason: why };
  }

  /** The branch has the patch's commit: promote-patch in the store, then tell the hosts. */
  private async recordPromoted(
    taskId: string,
    patchId: string,
    patchPath: string,
    commit: string,
    agent: string,
  ): Promise<PromotionOutcome> {
    await this.d.control.promotePatch(patchId, commit, agent);
    this.waiting.delete(patchId);
    this.totals.promoted++;
    await this.archive(patchPath);
    this.d.emitter.emit({ type: 'patch.promoted', taskId, patchId, commit });
    return { kind: 'promoted', commit, patchId };
  }

  private async archive(patchPath: string): Promise<void> {
    // The patch stays where patch_view points; a copy in applied/ mirrors the seed layout.
    try {
      const dir = join(this.d.ralphDir, 'commits', 'applied');
      await mkdir(dir, { recursive: true });
      const name = patchPath.split('/').pop() ?? 'patch';
      await copyFile(patchPath, join(dir, name));
    } catch {
      // archival is best effort
    }
  }

  /** The branch moved under the patch: rebase the worktree on the new tip, re-verify, retry (a few times). */
  private async rebaseAndRetry(
    change: VerifiedChange,
    patchId: string,
    reason: string,
    signal: AbortSignal,
    rebasesLeft: number,
  ): Promise<PromotionOutcome> {
    const { control } = this.d;
    const tip = await branchTip(this.d.projectDir, this.d.branch);
    const give = async (why: string): Promise<PromotionOutcome> => {
      await control.discardPatch(patchId, why, change.agent);
      this.totals.released++;
      this.d.emitter.emit({ type: 'patch.discarded', taskId: change.task.task_id, patchId, reason: why });
      this.d.emitter.emit({ type: 'task.released', taskId: change.task.task_id, reason: why });
      return { kind: 'conflict', reason: why };
    };
    if (tip === null) return give(`target branch ${this.d.branch} is gone`);
    this.log(change.agent, 'info', `patch ${patchId} does not apply (${reason}); rebasing ${change.worktree} onto ${tip.slice(0, 8)}`);
    const rb = await rebaseWorktree(change.worktree, tip);
    if (rb.status !== 'rebased')
      return give(`patch no longer applies and rebase onto ${tip.slice(0, 8)} conflicts in ${rb.files.join(', ')}`);
    const v = await this.verify(change.agent, change.task, change.worktree, rb.base, signal);
    // Stopped mid-way: the gates were cancelled, not failed. The patch stays queued for the
    // next run's recovery, which verifies it again on whatever the tip is then.
    if (signal.aborted) return { kind: 'waiting', patchId, reason: 'the loop stopped during the re-verification after a rebase' };
    const failed = v.gates.find((g) => !g.ok);
    if (failed || v.patch === null) return give(`after rebase onto ${tip.slice(0, 8)} the ${failed?.gate ?? 'verify'} gate fails`);
    // The re-based patch is queued before the old one is closed: the task stays proposed
    // throughout (closing first would make it pending, and free for a worker to claim).
    const task = control.task(change.task.task_id) ?? change.task;
    const outcome = await this.promote({ ...change, task, base: rb.base, patch: v.patch, gates: v.gates }, signal, rebasesLeft);
    if (control.patches(change.task.task_id).some((p) => p.patch_id === patchId && isLive(p.status))) {
      const why = `superseded by a rebase onto ${tip.slice(0, 8)}`;
      await control.discardPatch(patchId, why, change.agent);
      this.d.emitter.emit({ type: 'patch.discarded', taskId: change.task.task_id, patchId, reason: why });
    }
    return outcome;
  }

  /** Tier 3: an agent proposes smaller tasks; the parent is dropped only if they are accepted. */
  async decompose(task: LoopTask, files: readonly string[], cwd: string, signal: AbortSignal): Promise<number> {
    const { control } = this.d;
    const out = await this.invoke(
      {
        agent: 'primary',
        role: 'primary',
        phase: 'decompose',
        task,
        prompt: decomposePrompt(this.promptContext, task, files),
        cwd,
        iteration: 0,
      },
      signal,
    );
    let accepted = 0;
    if (out.kind === 'ran' && out.result.status === 'success') {
      const parsed = this.structured('evolve_goals', out.result);
      if (parsed.ok) {
        await this.writeProposals(
          parsed.value.proposals.filter((p) => p.proposal_type === 'decompose'),
          `decompose_${task.task_id}`,
        );
        accepted = (await control.processProposals()).accepted;
      } else {
        this.log('primary', 'warn', `decompose output for ${task.task_id} invalid: ${parsed.message}`);
      }
    }
    const now = control.task(task.task_id);
    if (now?.status === 'dropped') {
      this.d.emitter.emit({ type: 'task.decomposed', taskId: task.task_id, accepted });
    } else if (now && now.status !== 'done') {
      const why = `risk tier 3 (${files.join(', ')}): decomposition not accepted yet`;
      await control.blockTask(task.task_id, 'primary', why);
      this.totals.blocked++;
      this.d.emitter.emit({ type: 'task.blocked', taskId: task.task_id, reason: why });
    }
    return accepted;
  }

  /** Writes proposals as `.ralph/proposals/prop_*.json` for processProposals. */
  async writeProposals(proposals: readonly unknown[], stem: string): Promise<number> {
    const dir = join(this.d.ralphDir, 'proposals');
    await mkdir(dir, { recursive: true });
    const stamp = new Date(this.d.clock.now()).toISOString().replace(/[-:.TZ]/g, '');
    let i = 0;
    for (const p of proposals) {
      const file = join(dir, `prop_${stamp}_${stem}_${++i}.json`);
      await writeFile(`${file}.tmp`, JSON.stringify(p, null, 2));
      await rename(`${file}.tmp`, file);
    }
    return i;
  }

  /**
   * The independent judge for one deferred task: a separate invocation seeing only the
   * task, the diff, the gate results and the rules; its verdict validated with zod.
   */
  async judge(task: LoopTask, signal: AbortSignal): Promise<'approve' | 'reject' | 'modify' | 'invalid' | 'skipped'> {
    const { control } = this.d;
    const patch =
      control.patches(task.task_id).find((p) => p.patch_id === task.patch_id) ??
      control
        .patches(task.task_id)
        .filter((p) => p.status === 'queued')
        .pop();
    if (!patch?.patch_path) {
      this.log('judge', 'warn', `deferred ${task.task_id} has no patch to review`);
      return 'skipped';
    }
    let diff: string;
    try {
      diff = await readFile(patch.patch_path, 'utf8');
    } catch {
      await control.resolveDeferred(task.task_id, 'reject', 'judge', `the patch file ${patch.patch_path} is missing; redo the task`);
      return 'reject';
    }
    const gates = this.gateRecord.get(patch.patch_id) ?? control.gateResults(patch.patch_id);
    const rules = [...this.d.settings.domainConstraints, 'Sensitive paths (auth, migrations, data) need tests and no weakened checks.'];
    // The judge works in an empty folder: it reviews the diff it is given, nothing else.
    const cwd = await mkdtemp(join(tmpdir(), 'ralph-judge-'));
    // Its own abort, tied to the loop's: a human decision on this task ends only this judge.
    const own = new AbortController();
    const onStop = (): void => own.abort(signal.reason);
    if (signal.aborted) own.abort(signal.reason);
    else signal.addEventListener('abort', onStop, { once: true });
    this.judging.set(task.task_id, own);
    const out = await this.invoke(
      {
        agent: 'judge',
        role: 'judge',
        phase: 'review_deferred',
        task,
        prompt: judgePrompt(this.promptContext, task, diff, gates, rules),
        cwd,
        iteration: 0,
      },
      own.signal,
    ).finally(() => {
      signal.removeEventListener('abort', onStop);
      if (this.judging.get(task.task_id) === own) this.judging.delete(task.task_id);
      return rm(cwd, { recursive: true, force: true });
    });
    // Cancelled for a human's decision: the human's word stands, whatever the judge said.
    if (own.signal.aborted && !signal.aborted) return 'skipped';
    if (out.kind !== 'ran' || out.result.status !== 'success') return 'invalid';
    const v = this.structured('review_deferred', out.result);
    if (!v.ok || v.value.task_id !== task.task_id) {
      this.log(
        'judge',
        'warn',
        `judge verdict for ${task.task_id} rejected by the harness: ${v.ok ? `task_id ${v.value.task_id}` : v.message}`,
      );
      return 'invalid';
    }
    // A human may have decided while the judge ran: the human wins.
    if (control.task(task.task_id)?.status !== 'deferred') return 'skipped';
    const { verdict, rationale, confidence } = v.value;
    const text = verdict === 'modify' ? `${rationale}\nRequired change: ${v.value.modification ?? ''}` : rationale;
    await control.resolveDeferred(task.task_id, verdict, 'judge', text);
    this.d.emitter.emit({ type: 'verdict', taskId: task.task_id, verdict, rationale, confidence, by: 'judge' });
    if (verdict === 'approve') await this.promoteApproved(task.task_id, 'judge', signal);
    return verdict;
  }

  /**
   * After approval (judge or human) the approved patch is promoted: onto the commit its
   * gates ran on, or re-verified on the moved tip first (see promoteLate).
   */
  async promoteApproved(taskId: string, actor: string, signal?: AbortSignal): Promise<PromotionOutcome | null> {
    const { control } = this.d;
    const task = control.task(taskId);
    if (!task || task.status !== 'proposed' || !task.patch_id) return null;
    const patch = control.patches(taskId).find((p) => p.patch_id === task.patch_id);
    if (!patch?.patch_path || patch.status === 'promoted' || patch.status === 'discarded') return null;
    this.approvedPatches.add(patch.patch_id);
    return this.promoteLate(taskId, patch.patch_id, patch.patch_path, actor, 'approved', signal);
  }

  /** Retries promotions that waited on the user's checkout (re-verified if the branch moved meanwhile). */
  async retryWaiting(signal?: AbortSignal): Promise<void> {
    for (const [patchId, w] of [...this.waiting]) {
      const task = this.d.control.task(w.taskId);
      if (!task || task.status !== 'proposed') {
        this.waiting.delete(patchId);
        continue;
      }
      await this.promoteLate(w.taskId, patchId, w.patchPath, 'harness', this.approvedPatches.has(patchId) ? 'approved' : 'waiting', signal);
    }
  }

  /**
   * A queued patch promoted late: onto its own base while that is still the branch tip;
   * otherwise replayed and re-verified at the tip in the scratch worktree, the re-based
   * patch queued (its predecessor stays queued until the outcome, so the task never looks
   * free meanwhile) and promoted onto exactly that tip — again if the tip moved, at most
   * MAX_LATE_REVERIFICATIONS times. A patch that no longer applies or passes is discarded
   * with the reason and its task goes back to pending. Null when the task or the patch is
   * no longer waiting for promotion.
   */
  async promoteLate(
    taskId: string,
    patchId: string,
    patchPath: string,
    actor: string,
    origin: LateOrigin,
    signal?: AbortSignal,
  ): Promise<PromotionOutcome | null> {
    return this.lateLock.run(async () => {
      const at = { id: patchId, path: patchPath };
      try {
        return await this.promoteLateLocked(taskId, at, actor, origin, signal ?? this.d.signal ?? NEVER_ABORTED);
      } catch (e) {
        return this.lateError(taskId, at, actor, e);
      }
    });
  }

  /**
   * The harness itself failed mid-way (git, the file system): the patch waits and is tried
   * again with the other waiting ones, visibly; the third failure gives it up with the error.
   */
  private async lateError(taskId: string, at: { id: string; path: string }, actor: string, e: unknown): Promise<PromotionOutcome> {
    const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const n = (this.lateErrors.get(at.id) ?? 0) + 1;
    this.lateErrors.set(at.id, n);
    const task = this.d.control.task(taskId);
    if (n >= 3 && task) return this.giveUpLate(task, actor, `the harness failed ${n} times promoting the patch: ${msg}`);
    const reason = `the harness failed promoting the patch (try ${n} of 3, retried later): ${msg}`;
    this.waiting.set(at.id, { taskId, patchPath: at.path, reason });
    await this.d.control.note('patch', at.id, 'patch.waiting', actor, { task_id: taskId, reason }).catch(() => undefined);
    this.d.emitter.emit({ type: 'patch.waiting', taskId, patchId: at.id, reason });
    return { kind: 'waiting', patchId: at.id, reason };
  }

  /** `cur` is updated in place as re-based patches replace it, so an error names the live one. */
  private async promoteLateLocked(
    taskId: string,
    cur: { id: string; path: string },
    actor: string,
    origin: LateOrigin,
    signal: AbortSignal,
  ): Promise<PromotionOutcome | null> {
    const { control, branch } = this.d;
    const first = { ...cur };
    const live = control.patches(taskId).find((p) => p.patch_id === first.id);
    const start = control.task(taskId);
    if (
      !start ||
      start.status !== 'proposed' ||
      !live ||
      (live.status !== 'queued' && live.status !== 'applied' && live.status !== 'verified')
    ) {
      this.waiting.delete(first.id);
      return null;
    }
    let reverified = 0;
    for (;;) {
      const task = control.task(taskId) ?? start;
      if (signal.aborted) return { kind: 'waiting', patchId: cur.id, reason: 'the loop stopped before the promotion finished' };
      const gone = this.notPromotable(taskId, cur.id);
      if (gone !== null) return this.abandon(taskId, cur.id, gone, actor);
      const tip = await branchTip(this.d.projectDir, branch);
      if (tip === null) return this.giveUpLate(task, actor, `target branch ${branch} is gone`);
      const base = this.baseOf(cur.id);
      if (base === tip) {
        const r = await this.promoteQueued(task, cur.id, cur.path, actor, tip);
        if (r.kind === 'promoted') {
          await this.discardSuperseded(taskId, r.patchId, r.commit, actor);
          return r;
        }
        if (r.kind !== 'conflict') return r;
        // Moved between our read of the tip and the compare-and-swap: re-verify on the new one.
        if (!r.reason.startsWith('branch-moved'))
          return this.giveUpLate(
            task,
            actor,
            `${origin === 'approved' ? 'the approved patch' : 'the patch'} cannot be promoted: ${r.reason}`,
          );
        continue;
      }
      // A run killed after the branch update but before the store heard of it (recovery):
      // the commit is there, found by its trailer; re-verifying would find nothing to add.
      if (reverified === 0) {
        const done = await findPromotedCommit(this.d.projectDir, branch, cur.id, base ?? undefined);
        if (done !== null) {
          const r = await this.promotionLock.run(() => this.recordPromoted(taskId, cur.id, cur.path, done, actor));
          await this.discardSuperseded(taskId, cur.id, done, actor);
          return r;
        }
      }
      if (reverified >= MAX_LATE_REVERIFICATIONS) {
        const head = origin === 'approved' ? 'the approved patch was not promoted: ' : '';
        return this.giveUpLate(
          task,
          actor,
          `${head}${branch} kept moving: ${reverified} re-verifications of ${task.task_id}'s patch were each overtaken by another commit`,
        );
      }
      let files: string[];
      try {
        files = touchedPaths(filesTouchedByPatch(await readFile(cur.path, 'utf8')));
      } catch (e) {
        return this.giveUpLate(task, actor, `the patch file ${cur.path} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
      }
      // Waiting on the user's uncommitted edits to the patch's files: while they are still
      // there the promotion would only wait again, so the gates are not run for nothing on
      // every commit that moves the branch meanwhile.
      const waitingFor = this.waiting.get(cur.id);
      if (waitingFor !== undefined && (await this.checkoutHolds(files)))
        return { kind: 'waiting', patchId: cur.id, reason: waitingFor.reason };
      reverified++;
      const why = base === null ? 'the commit its gates ran on is not known' : `its gates ran on ${base.slice(0, 8)}`;
      this.log(
        'harness',
        'info',
        `${taskId}: ${branch} is at ${tip.slice(0, 8)} and ${why}; re-verifying patch ${cur.id} there (${origin})`,
      );
      const v = await reverifyOnTip({
        projectDir: this.d.projectDir,
        branch,
        task,
        tip,
        patchPath: cur.path,
        files,
        signal,
        verify: (t, wt, b, s) => this.verify('harness', t, wt, b, s),
        now: () => this.d.clock.now(),
      });
      if (v.kind === 'stopped') return { kind: 'waiting', patchId: cur.id, reason: 'the loop stopped during the re-verification' };
      if (v.kind !== 'ok') return this.giveUpLate(task, actor, lateFailureReason(origin, branch, tip, v));
      // The gates took a while: the human may have decided meanwhile, and their word stands.
      const changed = this.notPromotable(taskId, cur.id);
      if (changed !== null) {
        await rm(v.patch.path, { force: true });
        return this.abandon(taskId, cur.id, changed, actor);
      }
      const newFiles = touchedPaths(v.patch.files);
      const newId = await control.queuePatch(taskId, v.patch.path, actor);
      const tier = this.classifyFiles(task, newFiles);
      await control.recordRisk(taskId, tier, newFiles, newId, actor);
      this.patchBases.set(newId, tip);
      this.gateRecord.set(newId, v.gates);
      if (this.approvedPatches.has(cur.id)) this.approvedPatches.add(newId);
      await control.note('patch', newId, 'patch.gates', actor, {
        task_id: taskId,
        gates: v.gates.map((g) => ({ gate: g.gate, status: g.status })),
        base_commit: tip,
        reverified_from: cur.id,
      });
      this.d.emitter.emit({ type: 'patch.queued', taskId, patchId: newId, files: newFiles, tier });
      this.log('harness', 'info', `${taskId}: patch ${cur.id} re-verified on ${tip.slice(0, 8)} in ${v.durationMs} ms as ${newId}`);
      this.waiting.delete(cur.id);
      cur.id = newId;
      cur.path = v.patch.path;
    }
  }

  /** Whether the user's checkout of the target branch has uncommitted changes to any of `files`. */
  private async checkoutHolds(files: readonly string[]): Promise<boolean> {
    if ((await currentBranch(this.d.projectDir)) !== this.d.branch) return false;
    return (await dirtyPaths(this.d.projectDir, files)).length > 0;
  }

  /** The commit a queued patch's gates ran on: this run's record, else the store's (if it can tell). */
  private baseOf(patchId: string): string | null {
    const known = this.patchBases.get(patchId);
    if (known !== undefined) return known;
    // Optional on the port: without it a patch from an earlier run is simply re-verified.
    return this.d.control.patchBase?.(patchId) ?? null;
  }

  /** The task is done: its other live patches (predecessors of the promoted one) are closed with the reason. */
  private async discardSuperseded(taskId: string, promotedId: string, commit: string, actor: string): Promise<void> {
    for (const p of this.d.control.patches(taskId)) {
      if (p.patch_id === promotedId || !isLive(p.status)) continue;
      const why = `superseded by ${promotedId}, re-verified on the moved branch and promoted as ${commit.slice(0, 8)}`;
      await this.d.control.discardPatch(p.patch_id, why, actor);
      this.waiting.delete(p.patch_id);
      this.d.emitter.emit({ type: 'patch.discarded', taskId, patchId: p.patch_id, reason: why });
    }
  }

  /** A late patch that cannot land: every live patch of the task discarded, the task back to pending, said once. */
  private async giveUpLate(task: LoopTask, actor: string, why: string): Promise<PromotionOutcome> {
    for (const p of this.d.control.patches(task.task_id)) {
      if (!isLive(p.status)) continue;
      await this.d.control.discardPatch(p.patch_id, why, actor);
      this.waiting.delete(p.patch_id);
      this.d.emitter.emit({ type: 'patch.discarded', taskId: task.task_id, patchId: p.patch_id, reason: why });
    }
    const now = this.d.control.task(task.task_id);
    if (now !== undefined && now.status !== 'pending' && now.status !== 'done' && now.status !== 'dropped') {
      await this.d.control
        .releaseTask(task.task_id, actor, why)
        .catch((e: unknown) => this.log('harness', 'warn', `${task.task_id}: release failed: ${String(e)}`));
    }
    this.totals.released++;
    this.log('harness', 'warn', `${task.task_id}: ${why}`);
    this.d.emitter.emit({ type: 'task.released', taskId: task.task_id, reason: why });
    return { kind: 'conflict', reason: why };
  }

  /** Lessons: REFLECTIONS.md always, GUARDRAILS.md when the reflection names one. */
  async recordLesson(
    task: LoopTask | null,
    gate: string,
    klass: string,
    lesson: string,
    guardrail: { trigger: string; instruction: string } | null,
  ): Promise<void> {
    const ts = new Date(this.d.clock.now()).toISOString();
    const id = task?.task_id ?? '-';
    await appendFile(join(this.d.ralphDir, 'REFLECTIONS.md'), `\n## ${ts} ${id} (${gate}, ${klass})\n${lesson.trim()}\n`).catch(
      () => undefined,
    );
    if (guardrail) {
      await appendFile(
        join(this.d.ralphDir, 'GUARDRAILS.md'),
        `\n- **${guardrail.trigger.trim()}** → ${guardrail.instruction.trim()} (${id}, ${ts.slice(0, 10)})\n`,
      ).catch(() => undefined);
    }
  }

  /** Tier of a patch file already queued (used by recovery). */
  classifyFiles(task: LoopTask, files: readonly string[]): RiskTier {
    return classifyRisk(files, { effort: task.effort, source: task.source }, this.d.settings.riskPatterns);
  }
}

function isLive(status: string): boolean {
  return status === 'queued' || status === 'applied' || status === 'verified';
}
