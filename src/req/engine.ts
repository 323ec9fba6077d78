// Over 400 lines because a REQ's rounds (prompt, layers L1 to L3, commit) and the run around them share one context and its state.
// The REQ loop (seed 001, Phase 1): up to max_iterations steps, each taking the next READY
// requirement (dependencies done, lowest priority number, Kahn order) through up to 3 rounds
// of one fresh agent invocation in the REQ's own confined worktree, verified by the harness
// layer by layer (L1 typecheck + lint + forbidden patterns, L1b test share and mock density,
// L2 the whole suite, L3 coverage). PASS: the change is committed as
// `ralph-loop: REQ-XXX - <title>` through the main loop's checkout-safe promotion, the REQ
// marked done in the event log and in specification.yaml, learnings recorded and AGENTS.md
// updated by the orchestrator. FAIL x3 (or two timeouts): BLOCK, with blocked(auto) for its
// dependents, while independent REQs go on. Every fact is a req.* event; the status is their fold.
import { enableSpawnRelay } from '../shared/spawnRelay';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentBackend } from '../agents/types';
import { extractJsonAnswer } from '../agents/structured';
import { domainEvent } from '../domain/events';
import type { DomainEvent } from '../domain/events';
import { checkTestShare, parseCoveragePercent, apiSummary, exportedNames } from '../domain/reqChecks';
import { REQ_RUN_ENTITY } from '../domain/reqEvents';
import type { ReqBlockKind, ReqDecision, ReqLayer, ReqTerminalState } from '../domain/reqEvents';
import { classifyLearnings, contextualWindow } from '../domain/reqLearnings';
import { failureSummary, reqAnswerSchema, reqPrompt } from '../domain/reqPrompt';
import type { ReqAnswer, RoundFailure } from '../domain/reqPrompt';
import { reqStatusReport, reqTitle } from '../domain/reqStatus';
import type { ReqRow, ReqStatusReport, ReqView } from '../domain/reqStatus';
import { formatZodIssues } from '../domain/events';
import { capturePatch } from '../git/capture';
import type { CapturedPatch } from '../git/capture';
import { runGit } from '../git/exec';
import { describeRecovery, recoverInterruptedPromotion } from '../git/promote';
import { touchedPaths } from '../git/patchParse';
import { branchTip, changedFiles, currentBranch } from '../git/repo';
import { rebaseWorktree } from '../git/rebase';
import { ensureWorktree } from '../git/worktrees';
import type { RalphWorktree } from '../git/worktrees';
import type { Requirement } from '../project/specification';
import { nextReadyRequirement } from '../project/specification';
import type { ReqStatus } from '../project/specification';
import { idFilePath } from '../shared/idFiles';
import type { ControlAdapter } from '../loop/controlAdapter';
import { LoopEmitter } from '../loop/events';
import type { LoopEvent } from '../loop/events';
import { forbiddenPatternsGate } from '../loop/gates';
import type { GateResult, GateSpec } from '../loop/gates';
import { Harness } from '../loop/harness';
import { JsonlMetrics } from '../loop/metricsFile';
import type { LoopSettings } from '../loop/settings';
import { systemClock } from '../loop/sleep';
import type { Clock } from '../loop/sleep';
import type { EventStore } from '../store/types';
import { appendAgentsMd, AGENTS_MD } from './agentsMd';
import type { AgentsMdWrite } from './agentsMd';
import { readCheckpoint, writeCheckpoint } from './checkpoint';
import type { ReqSettings } from './settings';
import { loadSpecification, writeSpecStatuses } from './spec';
import type { OrderedSpecification } from './spec';
import { reqEvents, viewOf } from './view';
import { doneReqDecision, failReqDecision, pendingReqDecisions } from './decisions';
import { decideReq, markLearningPermanent, ReqDecisionError } from '../domain/reqDecide';

const ACTOR = 'req';
/** Files only the orchestrator writes: an agent's edit of them in its worktree is undone before capture. */
const ORCHESTRATOR_FILES = [AGENTS_MD, '.sprint-state', '.ralph', 'ralph.config.json'];

export interface ReqEngineDeps {
  readonly projectDir: string;
  readonly store: EventStore;
  readonly control: ControlAdapter;
  readonly backend: AgentBackend;
  readonly settings: LoopSettings;
  readonly req: ReqSettings;
  readonly agentEnv?: Readonly<Record<string, string>>;
  readonly clock?: Clock;
  readonly signal?: AbortSignal;
  /** Live notifications (the loop's agent.*, gate.* events) for the CLI and the extension. */
  readonly onLoopEvent?: (e: LoopEvent) => void;
  /** One line per REQ step, for the CLI. */
  readonly onLine?: (line: string) => void;
}

export class ReqSpecificationError extends Error {
  override readonly name = 'ReqSpecificationError';
}

type RoundOutcome =
  | {
      readonly kind: 'passed';
      readonly commit: string;
      readonly patchId: string;
      readonly answer: ReqAnswer | null;
      readonly agentsMd: AgentsMdWrite | null;
    }
  | { readonly kind: 'failed'; readonly failure: RoundFailure; readonly timedOut: boolean }
  | { readonly kind: 'blocked'; readonly blockKind: ReqBlockKind; readonly reason: string; readonly options: ReqDecision[] }
  | { readonly kind: 'stopped' };

export class ReqEngine {
  private readonly ralphDir: string;
  private readonly clock: Clock;
  private readonly emitter = new LoopEmitter();
  private harness: Harness | null = null;
  private branch = '';
  private ordered: OrderedSpecification | null = null;

  constructor(private readonly d: ReqEngineDeps) {
    this.ralphDir = join(d.projectDir, '.ralph');
    this.clock = d.clock ?? systemClock;
    if (d.onLoopEvent) this.emitter.on(d.onLoopEvent);
  }

  private line(s: string): void {
    this.d.onLine?.(s);
  }

  private async record(events: readonly DomainEvent[]): Promise<void> {
    await this.d.control.record(events);
  }

  private view(): ReqView {
    if (!this.ordered) throw new Error('REQ engine used before run()');
    return viewOf(this.ordered, reqEvents(this.d.store), this.d.req.maxIterations);
  }

  /** The status object now (the seed's contract). */
  status(): ReqStatusReport {
    return reqStatusReport(this.view());
  }

  /** Runs (or resumes) the REQ loop until a terminal state; returns the final status. */
  async run(options: { resume?: boolean } = {}): Promise<ReqStatusReport> {
    // A REQ run starts an agent and gates per step: a small helper forks them.
    enableSpawnRelay();
    const { req } = this.d;
    const loaded = loadSpecification(req.specFile, req.specShownAs);
    if (!loaded.ok) {
      if (loaded.error.kind === 'cycle') {
        const reqs = loaded.error.spec.requirements;
        this.ordered = { spec: loaded.error.spec, order: reqs, layers: [reqs] };
        await this.record([
          domainEvent('req.cycle', REQ_RUN_ENTITY, ACTOR, { spec_file: req.specShownAs, chain: [...loaded.error.error.chain] }),
        ]);
        this.line(`BLOCKED: ${loaded.error.message}`);
        return { ...this.status(), status: 'WAIT_USER', cycle: [...loaded.error.error.chain] };
      }
      throw new ReqSpecificationError(loaded.error.message);
    }
    this.ordered = loaded.value;
    const branch = this.d.settings.targetBranch ?? (await currentBranch(this.d.projectDir));
    if (branch === null) throw new Error(`${this.d.projectDir}: HEAD is detached; set target_branch in ralph.config.json`);
    this.branch = branch;
    this.harness = new Harness({
      projectDir: this.d.projectDir,
      ralphDir: this.ralphDir,
      branch,
      // One round is one invocation: the round timeout is its wall-clock limit.
      settings: { ...this.d.settings, invocationTimeoutMs: req.roundTimeoutMs },
      control: this.d.control,
      backends: { primary: this.d.backend, worker: this.d.backend, judge: this.d.backend },
      metrics: new JsonlMetrics(join(this.ralphDir, 'logs')),
      emitter: this.emitter,
      clock: this.clock,
      ...(this.d.agentEnv ? { agentEnv: this.d.agentEnv } : {}),
      ...(this.d.signal ? { signal: this.d.signal } : {}),
    });
    await this.harness.invocation.loadSpend();
    await this.record([
      domainEvent('req.run_started', REQ_RUN_ENTITY, ACTOR, {
        spec_file: req.specShownAs,
        order: loaded.value.order.map((r) => r.id),
        layers: loaded.value.layers.map((l) => l.map((r) => r.id)),
        max_iterations: req.maxIterations,
        resume: options.resume === true,
      }),
    ]);
    if (options.resume === true) this.resumeLine();
    await this.recoverInterrupted();
    await this.takeDecisions();
    await this.verifyManualFixes();
    const state = await this.loop();
    const report = this.status();
    const summary = `${report.requirements.done}/${report.requirements.total} done, ${report.requirements.blocked} blocked, ${report.requirements.skipped} skipped`;
    await this.record([domainEvent('req.run_finished', REQ_RUN_ENTITY, ACTOR, { state, iteration: report.iteration, summary })]);
    await this.checkpoint();
    this.line(`${state}: ${summary}`);
    return this.status();
  }

  private async loop(): Promise<ReqTerminalState> {
    for (;;) {
      await this.takeDecisions();
      const v = this.view();
      if (v.stopRequested || this.d.signal?.aborted) return this.terminal(v, true);
      const next = this.nextReady(v);
      if (next === undefined) return this.terminal(v, false);
      const row = v.rows.find((r) => r.id === next.id) as ReqRow;
      // An interrupted REQ (a crash mid-round) continues in its iteration; a new one takes the next.
      const iteration = row.status === 'in_progress' ? Math.max(1, v.iteration) : v.iteration + 1;
      if (iteration > v.maxIterations) return 'PARTIAL';
      await this.buildReq(next, row, iteration);
    }
  }

  private terminal(v: ReqView, stopped: boolean): ReqTerminalState {
    const rows = v.rows;
    if (rows.every((r) => r.status === 'done')) return 'COMPLETE';
    if (!stopped && rows.some((r) => r.status === 'blocked' || r.status === 'blocked_auto' || r.status === 'manual')) return 'WAIT_USER';
    return 'PARTIAL';
  }

  private nextReady(v: ReqView): Requirement | undefined {
    const order = this.ordered?.order ?? [];
    const status = new Map<string, ReqStatus>();
    for (const r of v.rows) {
      const s: ReqStatus =
        r.status === 'done'
          ? 'done'
          : r.status === 'pending'
            ? 'pending'
            : r.status === 'in_progress'
              ? 'in_progress'
              : r.status === 'skipped'
                ? 'skipped'
                : 'blocked';
      status.set(r.id, s);
    }
    return nextReadyRequirement(order, status);
  }

  /** The store's task for a REQ, claimed by REQ mode (the main loop's promotion works on tasks). */
  private async claim(r: Requirement, level: number): Promise<void> {
    const { control } = this.d;
    const t = control.task(r.id);
    if (t === undefined)
      await control.createTask({ id: r.id, title: reqTitle(r), source: this.d.req.specShownAs, effort: 'M', wave: level }, ACTOR);
    const now = control.task(r.id);
    if (now?.status === 'blocked' || now?.status === 'proposed') await control.releaseTask(r.id, ACTOR, 'REQ mode takes it again');
    if (control.task(r.id)?.status === 'pending') await control.claimTask(r.id, ACTOR);
  }

  private async buildReq(r: Requirement, row: ReqRow, iteration: number): Promise<void> {
    const title = reqTitle(r);
    this.line(`[${iteration}/${this.d.req.maxIterations}] ${r.id} ${title}`);
    await this.claim(r, row.level);
    // `continue` keeps the REQ's worktree; anything else starts fresh from the branch tip.
    const wt: RalphWorktree =
      row.status === 'pending' && row.worktree !== null && row.worktreeBase !== null && existsSync(row.worktree)
        ? await this.onTip({ name: `req-${r.id}`, path: row.worktree, branch: `ralph/req-${r.id}`, base: row.worktreeBase })
        : await ensureWorktree(this.d.projectDir, { name: `req-${r.id}`, branch: this.branch, keepIgnored: true });
    const failures: RoundFailure[] = [];
    let timeouts = 0;
    const infra = await this.testInfra(r, wt, iteration);
    for (let round = 1; round <= this.d.req.rounds; round++) {
      await this.record([domainEvent('req.started', r.id, ACTOR, { iteration, round, title, worktree: wt.path, base: wt.base })]);
      const out = await this.round(r, title, wt, round, iteration, failures, infra);
      if (out.kind === 'stopped') {
        await this.d.control.releaseTask(r.id, ACTOR, 'the REQ run stopped');
        return;
      }
      if (out.kind === 'passed') {
        await this.passed(r, title, out.commit, out.patchId, round, out.answer, out.agentsMd);
        return;
      }
      if (out.kind === 'blocked') {
        await this.block(r, out.blockKind, out.reason, out.options, round);
        return;
      }
      failures.push(out.failure);
      await this.record([
        domainEvent('req.round_failed', r.id, ACTOR, {
          round,
          layer: out.failure.layer,
          summary: out.failure.summary,
          timed_out: out.timedOut,
        }),
      ]);
      this.line(`  round ${round} failed at ${out.failure.layer}`);
      if (out.timedOut && ++timeouts >= 2) {
        await this.block(
          r,
          'too_large',
          `REQ too large: ${timeouts} rounds timed out after ${this.d.req.roundTimeoutMs / 1000} s; split it, skip it, or continue`,
          ['split', 'skip', 'continue'],
          round,
        );
        return;
      }
    }
    await this.block(
      r,
      'retries',
      `${this.d.req.rounds} rounds failed; last at ${failures.at(-1)?.layer ?? '?'}`,
      ['skip', 'manual', 'stop', 'rollback'],
      this.d.req.rounds,
    );
  }

  /** A kept worktree (a manual fix, `continue`) moved onto the branch's tip when other REQs landed since. */
  private async onTip(wt: RalphWorktree): Promise<RalphWorktree> {
    const tip = await branchTip(this.d.projectDir, this.branch);
    if (tip === null || tip === wt.base) return wt;
    const rb = await rebaseWorktree(wt.path, tip);
    if (rb.status !== 'rebased') this.line(`  ${wt.name}: rebase onto ${tip.slice(0, 8)} conflicts in ${rb.files.join(', ')}`);
    return { ...wt, base: rb.status === 'rebased' ? rb.base : wt.base };
  }

  /** Resume (seed 001): the checkpoint read back, the done REQs skipped, the next pending named. */
  private resumeLine(): void {
    const cp = readCheckpoint(this.d.projectDir);
    const v = this.view();
    const done = v.rows.filter((r) => r.status === 'done').map((r) => r.id);
    const next = this.nextReady(v)?.id ?? 'none';
    const from = cp.ok ? `checkpoint ${cp.value.checkpoint_at ?? '?'} (${cp.value.status})` : cp.reason;
    this.line(`resume from ${from}: skipping done ${done.length > 0 ? done.join(', ') : '(none)'}; next ${next}`);
  }

  /**
   * After a run that died: the agents and gates it left running ended, a half-done git
   * promotion repaired, and a REQ that was verified but not recorded done finished from its
   * patch. Promotion finds a commit already on the branch by the patch's trailer, so a run
   * killed between the commit and `req.done` never commits a REQ twice.
   */
  private async recoverInterrupted(): Promise<void> {
    const h = this.harness as Harness;
    for (const g of await h.ctx.ledger.reap()) if (g.killed) this.line(`  ended ${g.what} left running by a killed run in ${g.cwd}`);
    for (const x of await recoverInterruptedPromotion(this.d.projectDir))
      this.line(`  recovered an interrupted promotion in ${x.worktree}: ${describeRecovery(x)}`);
    const events = reqEvents(this.d.store);
    for (const row of this.view().rows) {
      if (row.status !== 'in_progress') continue;
      const r = this.ordered?.spec.requirements.find((x) => x.id === row.id);
      const mine = events.filter((e) => e.entity_id === row.id);
      const last = mine.at(-1);
      if (!r || last?.type !== 'req.verified') continue;
      const v = last.data;
      const title = reqTitle(r);
      const patch = this.d.control.patches(r.id).find((p) => p.patch_id === v.patch_id);
      let commit = patch?.status === 'promoted' ? patch.commit_hash : null;
      if (commit === null && patch?.status === 'queued' && patch.patch_path !== null && existsSync(patch.patch_path)) {
        const out = await h.promotion.promoteQueued(
          { task_id: r.id, title },
          v.patch_id,
          patch.patch_path,
          ACTOR,
          v.base_commit,
          reqCommitMessage(r.id, title),
        );
        if (out.kind === 'promoted') commit = out.commit;
      }
      if (commit === null) {
        this.line(`  ${r.id}: its verified patch ${v.patch_id} was not committed by the killed run; building it again`);
        continue;
      }
      this.line(`  ${r.id}: committed by the killed run (${commit.slice(0, 8)}); recorded done`);
      const a = v.agents_md;
      await this.passed(
        r,
        title,
        commit,
        v.patch_id,
        v.round,
        { learnings: v.learnings.map((l) => ({ kind: l.kind, text: l.text })), learnings_used: v.learnings_used },
        a
          ? { linesAdded: a.lines_added, totalLines: a.total_lines, archivedTo: a.archived_to ?? null, archivedLines: a.archived_lines }
          : null,
      );
    }
  }

  /** Decisions queued by other processes (`ralph req decide`, VS Code), each applied once. */
  private async takeDecisions(): Promise<void> {
    const applied = new Set(
      reqEvents(this.d.store).flatMap((e) =>
        (e.type === 'req.decided' || e.type === 'req.learning_promoted') && typeof e.data.file === 'string' ? [e.data.file] : [],
      ),
    );
    for (const t of pendingReqDecisions(this.ralphDir)) {
      if (!applied.has(t.name)) {
        try {
          if ('promotion' in t) {
            const { promote, actor } = t.promotion;
            await this.record(markLearningPermanent(this.view(), promote, actor, t.name));
            this.line(`learning marked permanent by ${actor}: ${promote}`);
          } else {
            const { req: id, decision, actor, note } = t.decision;
            await this.record(decideReq(this.view(), id, decision, actor, { note, file: t.name }));
            this.line(`decision: ${id} ${decision} (by ${actor})`);
          }
        } catch (e) {
          if (!(e instanceof ReqDecisionError)) throw e;
          failReqDecision(this.ralphDir, t.name, e.message);
          this.line(`decision refused: ${e.message}`);
          continue;
        }
      }
      doneReqDecision(this.ralphDir, t.name);
    }
  }

  /** REQs the user chose to fix by hand: their worktrees verified as they are now, committed when they pass. */
  private async verifyManualFixes(): Promise<void> {
    const signal = this.d.signal ?? new AbortController().signal;
    for (const row of this.view().rows) {
      if (row.status !== 'manual' || row.worktree === null || row.worktreeBase === null || !existsSync(row.worktree)) continue;
      const r = this.ordered?.spec.requirements.find((x) => x.id === row.id);
      if (!r) continue;
      const title = reqTitle(r);
      const wt = await this.onTip({ name: `req-${r.id}`, path: row.worktree, branch: `ralph/req-${r.id}`, base: row.worktreeBase });
      const round = row.round + 1;
      this.line(`${r.id}: verifying the manual fix in ${wt.path}`);
      await this.claim(r, row.level);
      await this.record([
        domainEvent('req.started', r.id, ACTOR, { iteration: this.view().iteration, round, title, worktree: wt.path, base: wt.base }),
      ]);
      await this.restoreOrchestratorFiles(wt);
      await writeSpecStatuses(join(wt.path, this.d.req.specShownAs), new Map([[r.id, 'done']]));
      const v = await this.verify(r, wt, round, signal);
      const out = v.ok ? await this.commit(r, title, wt, round, v.patch, v.gates, null, null) : null;
      if (out?.kind === 'passed') {
        await this.passed(r, title, out.commit, out.patchId, round, null, null);
        continue;
      }
      const summary = v.ok ? (out?.kind === 'failed' ? out.failure.summary : 'not committed') : v.summary;
      await this.record([
        domainEvent('req.round_failed', r.id, ACTOR, { round, layer: v.ok ? 'commit' : v.layer, summary, timed_out: false }),
      ]);
      await this.block(
        r,
        'retries',
        `the manual fix does not pass: ${summary.split('\n')[0] ?? ''}`,
        ['skip', 'manual', 'stop', 'rollback'],
        round,
      );
    }
  }

  private async block(r: Requirement, kind: ReqBlockKind, reason: string, options: ReqDecision[], rounds: number): Promise<void> {
    await this.d.control.blockTask(r.id, ACTOR, reason);
    await this.record([domainEvent('req.blocked', r.id, ACTOR, { kind, reason, options, rounds })]);
    this.line(`  ${r.id} BLOCKED: ${reason} (decide: ${options.join(' | ')})`);
    const dependents = this.view().rows.filter((x) => x.status === 'blocked_auto' && x.blockedBy === r.id);
    if (dependents.length > 0) {
      await this.record(dependents.map((x) => domainEvent('req.blocked_auto', x.id, ACTOR, { by: r.id })));
      this.line(`  blocked(auto): ${dependents.map((x) => x.id).join(', ')}`);
    }
    await this.checkpoint();
  }

  private readText(file: string): string {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  }

  /** AGENTS.md as the target branch has it (the orchestrator's additions are committed with their REQ). */
  private async agentsMdOnBranch(): Promise<string> {
    const r = await runGit(this.d.projectDir, ['show', `${this.branch}:${AGENTS_MD}`]);
    return r.exitCode === 0 ? r.stdout : '';
  }

  private async gitLog5(): Promise<string> {
    const r = await runGit(this.d.projectDir, ['log', '-5', '--format=%h %s', this.branch]);
    return r.exitCode === 0 ? r.stdout.trim() : '';
  }

  /**
   * The test-utilities module before the REQ: present with every export asked for → its API
   * summary goes into the context; missing or lacking exports → a dispatch creates or
   * extends it in the REQ's worktree (at most 2 tries), else the REQ goes on without.
   */
  private async testInfra(r: Requirement, wt: RalphWorktree, iteration: number): Promise<{ path: string; summary: string } | null> {
    const { req } = this.d;
    const rel = req.testUtilsPath;
    const file = join(wt.path, rel);
    const missingOf = (text: string): string[] => {
      const have = new Set(exportedNames(text));
      return req.testUtilsExports.filter((n) => !have.has(n));
    };
    const exists = existsSync(file);
    let missing = exists ? missingOf(this.readText(file)) : [...req.testUtilsExports];
    if (exists && missing.length === 0) {
      await this.record([domainEvent('req.test_infra', r.id, ACTOR, { path: rel, outcome: 'present', missing: [], tries: 0 })]);
      return { path: rel, summary: apiSummary(this.readText(file)) };
    }
    for (let tries = 1; tries <= 2; tries++) {
      const prompt = [
        'RALPH-PHASE: req_test_infra',
        'RALPH-AGENT: req',
        `RALPH-TASK: ${r.id}`,
        `RALPH-KEY: req_test_infra/${r.id}/try-${tries}/`,
        '',
        exists || existsSync(file)
          ? `Extend the test-utilities module ${rel} with the missing exports: ${missing.join(', ')}. Keep its existing exports as they are.`
          : `Create the project's test-utilities module ${rel}${missing.length ? ` exporting: ${missing.join(', ')}` : ''}: small helpers the tests of the requirements share (fixtures, builders, a real in-memory database or test server where there is one).`,
        'Work only in the current directory. Do not commit. Only the test-utilities module and its own tests.',
      ].join('\n');
      const h = this.harness as Harness;
      const out = await h.invocation.invoke(
        {
          agent: 'req',
          role: 'primary',
          phase: 'req_test_infra',
          task: this.d.control.task(r.id) ?? null,
          prompt,
          cwd: wt.path,
          iteration,
        },
        this.d.signal ?? new AbortController().signal,
      );
      if (out.kind === 'ran' && existsSync(file)) {
        missing = missingOf(this.readText(file));
        if (missing.length === 0) {
          await this.record([
            domainEvent('req.test_infra', r.id, ACTOR, { path: rel, outcome: exists ? 'extended' : 'created', missing: [], tries }),
          ]);
          return { path: rel, summary: apiSummary(this.readText(file)) };
        }
      }
    }
    await this.record([domainEvent('req.test_infra', r.id, ACTOR, { path: rel, outcome: 'failed', missing, tries: 2 })]);
    this.line(
      `  test utilities ${rel}: still ${existsSync(file) ? `missing ${missing.join(', ')}` : 'absent'} after 2 tries; ${r.id} goes on without`,
    );
    return existsSync(file) ? { path: rel, summary: apiSummary(this.readText(file)) } : null;
  }

  private async round(
    r: Requirement,
    title: string,
    wt: RalphWorktree,
    round: number,
    iteration: number,
    failures: readonly RoundFailure[],
    infra: { path: string; summary: string } | null,
  ): Promise<RoundOutcome> {
    const h = this.harness as Harness;
    const signal = this.d.signal ?? new AbortController().signal;
    const view = this.view();
    const permanent = view.learnings.filter((l) => l.kind === 'permanent').map((l) => l.text);
    const contextual = contextualWindow(view.learnings).map((l) => l.text);
    const prompt = reqPrompt({
      req: r,
      title,
      round,
      rounds: this.d.req.rounds,
      permanent,
      contextual,
      agentsMd: await this.agentsMdOnBranch(),
      gitLog: await this.gitLog5(),
      testUtils: infra,
      failures,
    });
    const task = this.d.control.task(r.id) ?? null;
    const out = await h.invocation.invoke({ agent: 'req', role: 'primary', phase: 'req', task, prompt, cwd: wt.path, iteration }, signal);
    if (out.kind === 'stopped' || signal.aborted) return { kind: 'stopped' };
    if (out.kind === 'budget') return { kind: 'blocked', blockKind: 'retries', reason: out.message, options: ['continue', 'skip', 'stop'] };
    // The integrity check caught the agent: its work is gone, a human decides.
    if (out.kind === 'incident')
      return { kind: 'blocked', blockKind: 'retries', reason: out.message, options: ['continue', 'skip', 'stop'] };
    const res = out.result;
    if (res.stopReason === 'timeout')
      return {
        kind: 'failed',
        timedOut: true,
        failure: { round, layer: 'timeout', summary: `the round timed out after ${this.d.req.roundTimeoutMs / 1000} s` },
      };
    if (res.status !== 'success')
      return {
        kind: 'failed',
        timedOut: false,
        failure: {
          round,
          layer: 'agent',
          summary: `the agent run ended ${res.status}: ${res.errors.join('; ') || res.stderrTail || 'no detail'}`,
        },
      };
    const raw = res.structured ?? extractJsonAnswer(res.text);
    let answer: ReqAnswer | null = null;
    if (raw !== undefined && raw !== null) {
      const parsed = reqAnswerSchema.safeParse(raw);
      if (!parsed.success)
        return {
          kind: 'failed',
          timedOut: false,
          failure: { round, layer: 'answer', summary: `the answer's JSON block is not valid: ${formatZodIssues(parsed.error)}` },
        };
      answer = parsed.data;
    }
    await this.restoreOrchestratorFiles(wt);
    if ((await changedFiles(wt.path, wt.base)).length === 0)
      return {
        kind: 'failed',
        timedOut: false,
        failure: {
          round,
          layer: 'no_change',
          summary: 'the round changed no files: write the tests and the code for the acceptance criteria',
        },
      };
    // The orchestrator's AGENTS.md update goes into the REQ's own commit.
    // The REQ's commit also marks it done in specification.yaml (nothing is committed on a failure).
    await writeSpecStatuses(join(wt.path, this.d.req.specShownAs), new Map([[r.id, 'done']]));
    const addition = answer?.agentmd_addition?.trim();
    const agentsMd = addition ? await appendAgentsMd(wt.path, r.id, addition, this.clock) : null;
    const v = await this.verify(r, wt, round, signal);
    if (signal.aborted) return { kind: 'stopped' };
    if (!v.ok) return { kind: 'failed', timedOut: false, failure: { round, layer: v.layer, summary: v.summary } };
    return this.commit(r, title, wt, round, v.patch, v.gates, answer, agentsMd);
  }

  /** An agent's edit of AGENTS.md, Ralph's state or config in its worktree is not taken: restored from the base. */
  private async restoreOrchestratorFiles(wt: RalphWorktree): Promise<void> {
    for (const p of [...ORCHESTRATOR_FILES, this.d.req.specShownAs]) {
      const tracked = await runGit(wt.path, ['ls-tree', '--name-only', wt.base, '--', p]);
      if (tracked.stdout.trim() !== '') await runGit(wt.path, ['checkout', wt.base, '--', p]);
      await runGit(wt.path, ['clean', '-fdq', '--', p]);
    }
  }

  private async layer(r: Requirement, round: number, layer: ReqLayer, ok: boolean, summary: string): Promise<void> {
    await this.record([domainEvent('req.layer', r.id, ACTOR, { round, layer, ok, summary: summary.slice(0, 4000) })]);
  }

  private async verify(
    r: Requirement,
    wt: RalphWorktree,
    round: number,
    signal: AbortSignal,
  ): Promise<{ ok: true; patch: CapturedPatch; gates: GateResult[] } | { ok: false; layer: ReqLayer | 'no_change'; summary: string }> {
    const h = this.harness as Harness;
    const s = this.d.settings;
    const gates: GateResult[] = [];
    const run = async (layer: ReqLayer, specs: GateSpec[]): Promise<{ ok: true } | { ok: false; summary: string }> => {
      const results = await h.verification.gates('req', r.id, specs, wt.path, signal);
      gates.push(...results);
      const bad = results.find((g) => !g.ok);
      const summary = bad
        ? failureSummary(layer, bad.gate, bad.outputTail)
        : results.map((g) => `${g.gate} ${g.status}`).join(', ') || 'nothing to run';
      await this.layer(r, round, layer, bad === undefined, summary);
      return bad ? { ok: false, summary } : { ok: true };
    };
    const gate = (name: string): GateSpec => s.verifyGates.find((g) => g.name === name) ?? { name, command: '', timeoutMs: 60_000 };
    // L1: typecheck (the build gate) + lint, then the forbidden patterns on the added lines.
    const l1 = await run('L1', [gate('build'), gate('lint')]);
    if (!l1.ok) return { ok: false, layer: 'L1', summary: l1.summary };
    const patch = await capturePatch(wt.path, wt.base, this.pendingPatchPath(r.id));
    if (patch.isEmpty) return { ok: false, layer: 'no_change', summary: 'the round changed no files: nothing to verify or commit' };
    const fp = forbiddenPatternsGate(patch.addedLines, s.forbiddenPatterns, s.forbiddenExclude);
    if (!fp.ok) {
      const summary = failureSummary('L1', fp.gate, fp.outputTail);
      await this.layer(r, round, 'L1', false, summary);
      return { ok: false, layer: 'L1', summary };
    }
    gates.push(fp);
    // L1b: the share of test lines, and the mock density rule.
    const share = checkTestShare(patch.addedLines, {
      testGlobs: this.d.req.testFiles,
      minSharePercent: this.d.req.testSharePercent,
      maxMockPercent: this.d.req.mockDensityPercent,
    });
    await this.layer(r, round, 'L1b', share.ok, share.message);
    if (!share.ok) return { ok: false, layer: 'L1b', summary: `L1b failed:\n${share.message}` };
    // L2: the whole suite (every earlier REQ's tests too).
    const l2 = await run('L2', [gate('test')]);
    if (!l2.ok) return { ok: false, layer: 'L2', summary: l2.summary };
    // L3: coverage with the language's tool.
    const cmd = this.d.req.coverageCommand.trim();
    if (cmd === '') {
      await this.layer(r, round, 'L3', true, 'skipped: no coverage command for this language (req.coverage_command)');
    } else {
      const [cov] = await h.verification.gates(
        'req',
        r.id,
        [{ name: 'coverage', command: cmd, timeoutMs: gate('test').timeoutMs }],
        wt.path,
        signal,
      );
      const pct = cov ? parseCoveragePercent(cov.outputTail) : null;
      const ok = cov?.ok === true && pct !== null && pct >= this.d.req.coveragePercent;
      const summary = !cov?.ok
        ? failureSummary('L3', 'coverage', cov?.outputTail ?? '')
        : pct === null
          ? `L3 (coverage) failed: no coverage percentage in the output of \`${cmd}\``
          : `L3 (coverage): lines ${pct}% ${ok ? '>=' : 'below the threshold'} ${this.d.req.coveragePercent}%`;
      await this.layer(r, round, 'L3', ok, summary);
      if (!ok) return { ok: false, layer: 'L3', summary };
      if (cov) gates.push(cov);
    }
    return { ok: true, patch, gates };
  }

  private patchSeq = 0;
  private pendingPatchPath(reqId: string): string {
    const stamp = new Date(this.clock.now()).toISOString().replace(/[-:.TZ]/g, '');
    return idFilePath(
      join(this.ralphDir, 'commits', 'pending'),
      [['task', reqId], ['agent', 'req'], ['part', stamp], ++this.patchSeq],
      '.patch',
    );
  }

  /** PASS: queue the patch on the REQ's task, check its risk, and promote it with the REQ's commit message. */
  private async commit(
    r: Requirement,
    title: string,
    wt: RalphWorktree,
    round: number,
    patch: CapturedPatch,
    gates: readonly GateResult[],
    answer: ReqAnswer | null,
    agentsMd: AgentsMdWrite | null,
  ): Promise<RoundOutcome> {
    const h = this.harness as Harness;
    const { control } = this.d;
    const files = touchedPaths(patch.files);
    const patchId = await control.queuePatch(r.id, patch.path, ACTOR);
    const task = control.task(r.id);
    if (!task) throw new Error(`${r.id}: its task is gone from the store`);
    const tier = h.promotion.classifyFiles(task, files);
    await control.recordRisk(r.id, tier, files, patchId);
    await control.record([
      domainEvent('patch.gates', patchId, ACTOR, {
        task_id: r.id,
        gates: gates.map((g) => ({ gate: g.gate, status: g.status })),
        base_commit: patch.baseCommit,
        files,
        risk_tier: tier,
      }),
    ]);
    if (tier >= 2) {
      // Verified, but sensitive or restricted files: a human decides (REQ mode has no judge).
      await control.discardPatch(patchId, `risk tier ${tier}: REQ mode leaves sensitive changes to the user`, ACTOR);
      return {
        kind: 'blocked',
        blockKind: 'risk',
        reason: `the change touches risk tier ${tier} files (${files.slice(0, 5).join(', ')}); review it in ${wt.path}`,
        options: ['manual', 'skip', 'stop', 'rollback'],
      };
    }
    // What the PASS records, and the checkpoint, before the commit: a run killed between the
    // commit and req.done finishes the REQ on resume from this patch (recoverInterrupted).
    await this.record([
      domainEvent('req.verified', r.id, ACTOR, {
        round,
        patch_id: patchId,
        base_commit: patch.baseCommit,
        learnings: (answer?.learnings ?? []).map((l) => ({ kind: l.kind, text: l.text })),
        learnings_used: [...(answer?.learnings_used ?? [])],
        agents_md: agentsMd ? agentsMdData(agentsMd) : null,
      }),
    ]);
    await this.checkpoint();
    const out = await h.promotion.promoteQueued(
      { task_id: r.id, title },
      patchId,
      patch.path,
      ACTOR,
      patch.baseCommit,
      reqCommitMessage(r.id, title),
    );
    if (out.kind === 'promoted') return { kind: 'passed', commit: out.commit, patchId, answer, agentsMd };
    if (out.kind === 'waiting')
      return {
        kind: 'blocked',
        blockKind: 'no_change',
        reason: `waiting for the checkout: ${out.reason}`,
        options: ['continue', 'skip', 'stop'],
      };
    if (out.kind === 'conflict') await control.discardPatch(patchId, out.reason, ACTOR);
    return {
      kind: 'failed',
      timedOut: false,
      failure: { round, layer: 'commit', summary: `the commit failed: ${'reason' in out ? out.reason : out.kind}` },
    };
  }

  private async passed(
    r: Requirement,
    title: string,
    commit: string,
    patchId: string,
    round: number,
    answer: Pick<ReqAnswer, 'learnings' | 'learnings_used'> | null,
    agentsMd: AgentsMdWrite | null,
  ): Promise<void> {
    await this.record([domainEvent('req.done', r.id, ACTOR, { commit, patch_id: patchId, title, round })]);
    this.line(`  PASS ${r.id}: ralph-loop: ${r.id} - ${title} (${commit.slice(0, 8)})`);
    if (answer) await this.learn(r, answer);
    if (agentsMd) await this.record([domainEvent('req.agents_md', r.id, ACTOR, agentsMdData(agentsMd))]);
    await this.checkpoint();
  }

  private async learn(r: Requirement, answer: Pick<ReqAnswer, 'learnings' | 'learnings_used'>): Promise<void> {
    const earlier = this.view().learnings;
    const { record, promote } = classifyLearnings(r.id, answer.learnings, answer.learnings_used, earlier);
    const events: DomainEvent[] = [
      ...record.map((l) => domainEvent('req.learning', r.id, ACTOR, { kind: l.kind, text: l.text, why: l.why })),
      ...promote.map((p) => domainEvent('req.learning_promoted', r.id, ACTOR, { text: p.text, why: p.why })),
    ];
    if (events.length > 0) await this.record(events);
  }

  private async checkpoint(): Promise<void> {
    const at = new Date(this.clock.now()).toISOString();
    const file = await writeCheckpoint(this.d.projectDir, { ...this.status(), checkpoint_at: at });
    await this.record([domainEvent('req.checkpoint', REQ_RUN_ENTITY, ACTOR, { file, at })]);
  }
}

function agentsMdData(a: AgentsMdWrite): { lines_added: number; total_lines: number; archived_to: string | null; archived_lines: number } {
  return { lines_added: a.linesAdded, total_lines: a.totalLines, archived_to: a.archivedTo, archived_lines: a.archivedLines };
}

/** The commit message of a REQ (seed 001): `ralph-loop: REQ-XXX - <title>`. */
export function reqCommitMessage(id: string, title: string): string {
  return `ralph-loop: ${id} - ${title.replace(/\s+/g, ' ').trim()}`;
}
