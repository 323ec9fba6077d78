// One agent invocation under the budget guards: the day's and the task's spend checked
// first, the per-invocation cap passed to the CLI, the backend run with the loop's stop
// signal, then the metrics line, the totals and the agent.* notifications. Every agent the
// loop starts (primary, workers, judge, decomposition) goes through `Invocation.invoke`, so
// anything that must wrap every agent run belongs in `runBackend`.
import { basename, dirname, relative } from 'node:path';
import { SANDBOX_START_FAILED } from '../agents/sandbox/startFailure';
import type { AgentEventListener, AgentResult } from '../agents/types';
import { TranscriptWriter, transcriptPath } from '../agents/transcript';
import { agentScratchDir, worktreesRoot } from '../git/repoCache';
import { removeWorktree } from '../git/worktrees';
import type { Incident } from '../integrity/integrity';
import { metricsLineFor } from '../agents/metrics';
import { registerSecretEnv, secretValuesOf } from '../shared/redaction';
import { extractJsonAnswer } from '../agents/structured';
import { domainEvent } from '../domain/events';
import type { DomainEvent } from '../domain/events';
import { validatePhaseOutput } from '../domain/phaseOutputs';
import type { AgentPhase, PhaseOutput } from '../domain/phaseOutputs';
import type { HarnessContext } from './context';
import type { AgentName } from './events';
import { checkBudget, invocationBudget, summarizeSpend, utcDay } from './guards';
import type { CostLine } from './guards';
import type { LoopTask, MetricsLine } from './ports';

export type Role = 'primary' | 'worker' | 'judge';

/** A failed run's reason in its agent.finished event: this many errors of at most this many characters. */
const MAX_REASON_ERRORS = 5;
const MAX_REASON_CHARS = 2000;
/** An agent would run with no confinement while the user has not opted in. */
export class UnconfinedAgentError extends Error {
  override readonly name = 'UnconfinedAgentError';
  constructor(
    readonly backend: string,
    readonly why: string,
    readonly remedy: string | undefined,
  ) {
    super(
      `refusing to start the ${backend} agent ${why}; ${remedy ?? 'confine it'}, or set "agents": {"unconfined": true} in ralph.config.json to run it anyway`,
    );
  }
}

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
  /**
   * The integrity check found changes the agent may not make: the incident is recorded, the
   * agent's worktree removed (its work discarded); the caller blocks the task with `message`.
   */
  | { readonly kind: 'incident'; readonly incidentId: string; readonly message: string }
  | { readonly kind: 'budget'; readonly scope: 'day' | 'task'; readonly message: string }
  | { readonly kind: 'stopped' };

/** The structured answer of a run, validated against the phase's schema. */
export function structuredOutput<P extends AgentPhase>(
  phase: P,
  result: AgentResult,
): { ok: true; value: PhaseOutput<P> } | { ok: false; message: string } {
  const raw = result.structured ?? extractJsonAnswer(result.text);
  return validatePhaseOutput(phase, raw);
}

export class Invocation {
  /** Today's spend: loaded from the metrics log at start, then one line per invocation. */
  private readonly costLines: CostLine[] = [];

  constructor(private readonly ctx: HarnessContext) {
    // Whatever the agents are given, every sink (events, logs, lesson files) redacts too.
    registerSecretEnv(ctx.agentEnv ?? {});
  }

  /** Loads today's spend from the metrics log (budgets survive restarts). */
  async loadSpend(): Promise<void> {
    const today = utcDay(new Date(this.ctx.clock.now()).toISOString());
    const { lines, problems } = await this.ctx.metrics.read([today]);
    for (const l of lines) this.costLines.push({ ts: l.ts, cost: l.cost, task: l.task });
    // A torn line (a crash mid-write) may have held spend the budget now cannot count.
    for (const p of problems) this.ctx.log('harness', 'warn', `metrics line not counted for today's budget: ${p}`);
  }

  private spend(): ReturnType<typeof summarizeSpend> {
    return summarizeSpend(this.costLines, utcDay(new Date(this.ctx.clock.now()).toISOString()));
  }

  /** Day-level budget check, for the loop's pause decision. */
  dayBudget(): { ok: true } | { ok: false; message: string } {
    const v = checkBudget(this.spend(), this.ctx.settings.budgets, null);
    return v.ok ? { ok: true } : { ok: false, message: v.message };
  }

  /** One agent invocation under the budget guards; writes its metrics line. */
  async invoke(req: InvokeRequest, signal: AbortSignal): Promise<InvokeOutcome> {
    const { settings, emitter } = this.ctx;
    const taskId = req.task?.task_id ?? null;
    if (signal.aborted) return { kind: 'stopped' };
    const spend = this.spend();
    const verdict = checkBudget(spend, settings.budgets, taskId);
    if (!verdict.ok) {
      emitter.emit({ type: 'budget', scope: verdict.scope, spent: verdict.spent, limit: verdict.limit, message: verdict.message });
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
      emitter.emit({ type: 'budget', scope: 'invocation', spent: spend.today, limit: roleCap, message });
      return { kind: 'budget', scope: taskId !== null ? 'task' : 'day', message };
    }
    const backend = this.ctx.backends[req.role];
    const promptBytes = Buffer.byteLength(req.prompt);
    const run = { role: req.role, phase: req.phase, task_id: taskId, backend: backend.id };
    // Recorded while the agent starts, not before: the journal's fsync stays off the critical path.
    const transcript = this.openTranscript(req, taskId, backend.id);
    const recorded = this.record(req.agent, [
      domainEvent('agent.started', req.agent, req.agent, {
        ...run,
        prompt_bytes: promptBytes,
        budget_usd: budgetUsd,
        transcript: relative(this.ctx.ralphDir, transcript.file),
      }),
    ]);
    await this.bindWorktreesRoot();
    const started = this.ctx.clock.now();
    const ownBranch = this.worktreeName(req.cwd) !== null ? `ralph/${this.worktreeName(req.cwd)}` : null;
    const guard = await this.ctx.integrity.before(this.worktreeName(req.cwd) !== null ? req.cwd : null, ownBranch);
    const result = await this.runBackend(req, taskId, budgetUsd, signal, transcript.onEvent).catch((e: unknown) => {
      transcript.close();
      throw e;
    });
    const incident = await this.ctx.integrity.after(guard);
    const duration = this.ctx.clock.now() - started;
    transcript.finish({ ...result, durationMs: duration });
    await recorded;
    const ts = new Date(this.ctx.clock.now()).toISOString();
    this.costLines.push({ ts, cost: result.costUsd, task: taskId });
    // The seed's line, rounded and with secret values redacted, as src/agents/metrics writes
    // it; the duration is the harness's own measure (its clock).
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
        ts: new Date(this.ctx.clock.now()),
        secrets: secretValuesOf(this.ctx.agentEnv ?? {}),
      },
    );
    const line: MetricsLine = { ...fields, task };
    await this.ctx.metrics.append(line).catch((e: unknown) => this.ctx.log(req.agent, 'warn', `metrics write failed: ${String(e)}`));
    await this.record(req.agent, [
      domainEvent('agent.finished', req.agent, req.agent, {
        ...run,
        status: result.status,
        turns: result.turns,
        cost_usd: result.costUsd,
        duration_ms: duration,
        ...(result.status === 'success' ? {} : this.failureReason(result)),
      }),
    ]);
    if (incident !== null) return this.recordIncident(req, taskId, backend.id, backend.confinement?.kind ?? 'none', incident);
    if (result.subtype === SANDBOX_START_FAILED) {
      // Every invocation would fail the same way: stop the loop saying what the sandbox said,
      // rather than fail task after task as agent crashes.
      const reason = `the ${backend.id} agent cannot run confined: ${result.errors[0] ?? result.stderrTail}`;
      this.ctx.log(req.agent, 'error', reason);
      this.ctx.stop(reason);
      return { kind: 'stopped' };
    }
    return { kind: 'ran', result };
  }

  private record(agent: AgentName, events: readonly DomainEvent[]): Promise<void> {
    return this.ctx.control
      .record(events)
      .catch((e: unknown) => this.ctx.log(agent, 'warn', `${events[0]?.type ?? 'event'} not recorded: ${String(e)}`));
  }

  /** Why a run failed, as far as the process said, bounded (the store redacts what it appends). */
  private failureReason(result: AgentResult): { exit_code: number | null; errors: string[]; stderr_tail: string } {
    const clip = (s: string, n: number): string => (s.length > n ? `…${s.slice(-n)}` : s);
    return {
      exit_code: result.exitCode,
      errors: result.errors.slice(0, MAX_REASON_ERRORS).map((e) => clip(e, MAX_REASON_CHARS)),
      stderr_tail: clip(result.stderrTail, MAX_REASON_CHARS),
    };
  }

  /** The worktree name when `cwd` is one of Ralph's agent worktrees (set by `bindWorktreesRoot`). */
  private worktreeName(cwd: string): string | null {
    const root = this.worktreesRootPath;
    if (root === undefined || dirname(cwd) !== root) return null;
    return basename(cwd);
  }

  private worktreesRootPath: string | undefined;

  /** Resolves where agents' worktrees live (once per run, before the first invocation). */
  async bindWorktreesRoot(): Promise<void> {
    this.worktreesRootPath ??= await worktreesRoot(this.ctx.projectDir);
  }

  private async recordIncident(
    req: InvokeRequest,
    taskId: string | null,
    backendId: string,
    confinement: 'bwrap' | 'cli-sandbox' | 'none',
    incident: Incident,
  ): Promise<InvokeOutcome> {
    const restorable = incident.changes.some((c) => c.restorable);
    const restore = restorable ? `ralph restore-incident ${incident.incidentId}` : null;
    const name = this.worktreeName(req.cwd);
    const action = `the invocation's work was discarded${name !== null ? ` (worktree ${name} removed)` : ''}${taskId !== null ? `; ${taskId} blocked` : ''}`;
    const message =
      `integrity check: ${req.agent} ${req.phase} changed what agents may not change: ${incident.summary}; ${action}` +
      (restore !== null ? `; \`${restore}\` puts back what Ralph can restore` : '');
    // Recorded, not emitted: the notification comes from the store's append (storeFeed.ts),
    // so observer windows and the next run see the same incident.
    await this.ctx.control
      .record([
        domainEvent('incident', incident.incidentId, 'harness', {
          kind: 'integrity',
          incident_id: incident.incidentId,
          task_id: taskId,
          agent: req.agent,
          phase: req.phase,
          backend: backendId,
          confinement,
          changes: incident.changes.map((c) => ({ ...c })),
          summary: incident.summary,
          action,
          record_file: incident.recordFile,
          restore,
        }),
      ])
      .catch((e: unknown) => this.ctx.log('harness', 'error', `incident ${incident.incidentId} not recorded: ${String(e)}`));
    this.ctx.log(req.agent, 'error', message);
    // Nothing the agent left is kept: the worktree is made afresh at its next use. Removed
    // through the repository (not by git inside the worktree, whose .git the agent may have
    // pointed elsewhere).
    if (name !== null) {
      await removeWorktree(this.ctx.projectDir, name, { deleteBranch: false }).catch((e: unknown) =>
        this.ctx.log('harness', 'warn', `removing ${name} after ${incident.incidentId} failed: ${String(e)}`),
      );
    }
    return { kind: 'incident', incidentId: incident.incidentId, message };
  }

  /** The run's transcript under .ralph/logs/transcripts, redacting the agents' secret values too. */
  private openTranscript(req: InvokeRequest, taskId: string | null, backend: string): TranscriptWriter {
    const run = {
      agent: req.agent,
      role: req.role,
      phase: req.phase,
      taskId,
      backend,
      startedAt: new Date(this.ctx.clock.now()),
      cwd: req.cwd,
    };
    return new TranscriptWriter(
      transcriptPath(this.ctx.ralphDir, run),
      run,
      secretValuesOf(this.ctx.agentEnv ?? {}),
      () => new Date(this.ctx.clock.now()),
      (m) => this.ctx.log(req.agent, 'warn', m),
    );
  }

  /** The backend's run of one request: the one place an agent process is started from. */
  private async runBackend(
    req: InvokeRequest,
    taskId: string | null,
    budgetUsd: number,
    signal: AbortSignal,
    listener: AgentEventListener,
  ): Promise<AgentResult> {
    const { settings } = this.ctx;
    const backend = this.ctx.backends[req.role];
    // The preflight refuses this before the loop starts; this is the backstop for a backend
    // built some other way.
    if (backend.confinement?.kind === 'none' && !settings.agentsUnconfined) {
      throw new UnconfinedAgentError(backend.id, backend.confinement.summary, backend.confinement.remedy);
    }
    const scratchDir = await agentScratchDir(this.ctx.projectDir, req.agent);
    return backend.run(
      {
        prompt: req.prompt,
        cwd: req.cwd,
        scratchDir,
        model: settings.model,
        maxTurns: settings.maxTurns,
        ...(budgetUsd > 0 ? { budgetUsd } : {}),
        timeoutMs: settings.invocationTimeoutMs,
        signal,
        processLedger: this.ctx.ledger,
        env: { RALPH_PHASE: req.phase, RALPH_TASK: taskId ?? '', RALPH_AGENT: req.agent, ...this.ctx.agentEnv },
      },
      listener,
    );
  }
}
