// The harness's own verification of a change: first what it touches is read without writing
// anything (a change to Ralph's control files, or a tier-3 one, is refused here, before a
// gate runs and before git stores a byte of it); then the configured command gates run in
// the agent's worktree with gate.* notifications and their time in the totals, then the
// change is captured as a patch file under .ralph/commits/pending/ and the forbidden
// patterns are checked on the lines it adds. What passes here is what promotion may land
// (never the model's word).
import { idFilePath } from '../shared/idFiles';
import { join } from 'node:path';
import { capturePatch } from '../git/capture';
import { agentScratchDir } from '../git/repoCache';
import type { CapturedPatch } from '../git/capture';
import { previewChanges } from '../git/preview';
import { assessChange } from '../domain/risk';
import type { RiskAssessment } from '../domain/risk';
import type { HarnessContext } from './context';
import type { AgentName } from './events';
import { forbiddenPatternsGate, runGates } from './gates';
import type { GateResult, GateSpec } from './gates';
import type { LoopTask } from './ports';
import { agentFileStem } from '../domain/agentName';

export interface Verified {
  readonly gates: GateResult[];
  readonly patch: CapturedPatch | null;
  /** Set when the change may not be kept at all (control files, tier 3): nothing was captured. */
  readonly restricted?: { readonly risk: RiskAssessment; readonly files: readonly string[] };
}

export class Verification {
  private patchSeq = 0;

  constructor(private readonly ctx: HarnessContext) {}

  /** Command gates with events; timings go to the totals. */
  async gates(
    agent: AgentName,
    taskId: string | null,
    specs: readonly GateSpec[],
    cwd: string,
    signal: AbortSignal,
  ): Promise<GateResult[]> {
    const { emitter, clock } = this.ctx;
    const started = clock.now();
    try {
      const confinement = this.ctx.gateConfinement;
      return await runGates(specs, {
        cwd,
        signal,
        ...(confinement.kind === 'bwrap' ? { confinement } : {}),
        scratch: await agentScratchDir(this.ctx.projectDir, `${agent}-gates`),
        onGateStart: (gate) => emitter.emit({ type: 'gate.started', agent, gate, taskId }),
        onGateEnd: (r) =>
          emitter.emit({
            type: 'gate.finished',
            agent,
            gate: r.gate,
            taskId,
            status: r.status,
            durationMs: r.durationMs,
            outputTail: r.outputTail,
          }),
        onProgress: (gate, line) => emitter.emit({ type: 'gate.progress', agent, gate, line }),
        ledger: this.ctx.ledger,
      });
    } finally {
      this.ctx.totals.gateMs += clock.now() - started;
    }
  }

  /**
   * Verify: the command gates, then the change is captured and the forbidden patterns are
   * checked on the lines it adds. Returns the results and the captured patch. `passed` are
   * gates that passed on the worktree exactly as it is now (the build the last implement
   * step ran): a verify gate with the same name and command is not run again, and its result
   * stands in the list.
   */
  async verify(
    agent: AgentName,
    task: LoopTask,
    worktree: string,
    base: string,
    signal: AbortSignal,
    passed: readonly GateResult[] = [],
  ): Promise<Verified> {
    const { settings } = this.ctx;
    const restricted = await this.restricted(task, worktree, base);
    if (restricted != null) return { gates: [], patch: null, restricted };
    const done = (spec: GateSpec): GateResult | undefined =>
      passed.find((r) => r.status === 'passed' && r.gate === spec.name && r.command === spec.command);
    const ran = await this.gates(
      agent,
      task.task_id,
      settings.verifyGates.filter((g) => done(g) === undefined),
      worktree,
      signal,
    );
    const results = settings.verifyGates.flatMap((g) => {
      const r = done(g) ?? ran.find((x) => x.gate === g.name);
      return r === undefined ? [] : [r];
    });
    if (results.some((r) => !r.ok)) return { gates: results, patch: null };
    const patch = await capturePatch(worktree, base, this.pendingPatchPath(task.task_id, agent));
    const fp = forbiddenPatternsGate(patch.addedLines, settings.forbiddenPatterns, settings.forbiddenExclude);
    this.ctx.emitter.emit({
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

  /**
   * The change's risk from the worktree itself (paths and symlink targets, nothing stored),
   * when it is one no patch file or git object may be made of; null otherwise. The captured
   * patch is classified again from its own text: that stays the final word.
   */
  private async restricted(task: LoopTask, worktree: string, base: string): Promise<Verified['restricted'] | null> {
    const changes = await previewChanges(worktree, base);
    const risk = assessChange(changes, task, this.ctx.settings.riskPatterns);
    return risk.tier === 3 || risk.controlFiles.length > 0 ? { risk, files: changes.map((c) => c.path) } : null;
  }

  private pendingPatchPath(taskId: string, agent: string): string {
    const stamp = new Date(this.ctx.clock.now()).toISOString().replace(/[-:.TZ]/g, '');
    return idFilePath(
      join(this.ctx.ralphDir, 'commits', 'pending'),
      [['task', taskId], ['agent', agentFileStem(agent)], ['part', stamp], ++this.patchSeq],
      '.patch',
    );
  }
}
