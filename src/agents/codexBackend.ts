// The Codex CLI backend: `codex exec --json ... -` with the prompt on stdin, events folded by
// codexStream.ts. Codex has no turn or budget flags, so the harness enforces max turns by
// stopping the run when the agent starts more tool calls than allowed, and prices tokens
// itself from a price table. A JSON schema goes to `--output-schema` through a temp file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexResult, foldCodexLine, INITIAL_CODEX_STATE } from './codexStream';
import { DEFAULT_PRICES } from './pricing';
import type { PriceTable } from './pricing';
import { codexMcpOff, codexMcpOffArgs, type CodexMcpOff } from './noMcpServers';
import { runProcess } from './process';
import { redactText, secretValuesOf } from '../shared/redaction';
import { agentProcessEnv } from './sandbox/agentProcess';
import { confineSpawn, NO_CONFINEMENT } from './sandbox/confinement';
import type { Confinement } from './sandbox/confinement';
import { SANDBOX_START_FAILED, sandboxStartFailure } from './sandbox/startFailure';
import type { AgentBackend, AgentEventListener, AgentRequest, AgentResult } from './types';
import { validateAgentRequest } from './types';

export interface CodexBackendOptions {
  readonly id?: string;
  /** The executable; default 'codex' from PATH. */
  readonly command?: string;
  readonly commandArgs?: readonly string[];
  /** Default: the allow-listed part of process.env (sandbox/environment.ts). */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * How the process is confined; default none. Under `bwrap` codex runs with
   * `--sandbox danger-full-access`: its own sandbox cannot start inside bubblewrap's
   * capability-less user namespace, and bubblewrap already confines every tool it has.
   */
  readonly confinement?: Confinement;
  readonly graceMs?: number;
  readonly prices?: PriceTable;
  /** `-c key=value` overrides (TOML values), e.g. a custom model provider. */
  readonly configOverrides?: readonly string[];
  readonly sandbox?: 'read-only' | 'workspace-write' | 'danger-full-access';
  /** Extra flags before the final `-` (e.g. --disable plugins). */
  readonly extraArgs?: readonly string[];
}

/** The CLI arguments (prompt excluded: `-` reads it from stdin). Pure. */
export function codexArgs(
  request: AgentRequest,
  options: CodexBackendOptions,
  schemaFile?: string,
  mcpOff: CodexMcpOff = { disable: [] },
): string[] {
  const sandbox = options.confinement?.kind === 'bwrap' ? 'danger-full-access' : (options.sandbox ?? 'workspace-write');
  const args = ['exec', '--json', '--skip-git-repo-check', '-C', request.cwd, '-m', request.model, '--sandbox', sandbox, '--ephemeral'];
  // workspace-write also lets commands write all of /tmp by default: another project's
  // files, other agents' scratch. The agent keeps its own TMPDIR (its scratch folder).
  if (sandbox === 'workspace-write') args.push('-c', 'sandbox_workspace_write.exclude_slash_tmp=true');
  for (const c of options.configOverrides ?? []) args.push('-c', c);
  // No MCP server reaches an agent (noMcpServers.ts); after the caller's overrides, so none re-enables one.
  args.push(...codexMcpOffArgs(mcpOff));
  if (schemaFile !== undefined) args.push('--output-schema', schemaFile);
  args.push(...(options.extraArgs ?? []), '-');
  return args;
}

export function createCodexBackend(options: CodexBackendOptions = {}): AgentBackend {
  const id = options.id ?? 'codex';
  const prices = options.prices ?? DEFAULT_PRICES;
  return {
    id,
    confinement: options.confinement ?? NO_CONFINEMENT,
    async run(request: AgentRequest, onEvent?: AgentEventListener): Promise<AgentResult> {
      validateAgentRequest(request);
      const env = agentProcessEnv('codex', options.baseEnv, request);
      const secrets = secretValuesOf(env);
      let schemaDir: string | undefined;
      let schemaFile: string | undefined;
      if (request.jsonSchema !== undefined) {
        // In the scratch folder when there is one: the confined process cannot see /tmp.
        schemaDir = mkdtempSync(join(env.TMPDIR ?? tmpdir(), 'ralph-codex-schema-'));
        schemaFile = join(schemaDir, 'schema.json');
        writeFileSync(schemaFile, JSON.stringify(request.jsonSchema));
      }
      // The instructions codex has no flag for travel in the prompt.
      const prompt =
        request.appendSystemPrompt !== undefined && request.appendSystemPrompt.length > 0
          ? `${request.prompt}\n\n${request.appendSystemPrompt}`
          : request.prompt;

      const turnLimit = new AbortController();
      const signal = request.signal !== undefined ? AbortSignal.any([request.signal, turnLimit.signal]) : turnLimit.signal;
      let state = INITIAL_CODEX_STATE;
      let sawOutput = false;
      try {
        const mcpOff = await codexMcpOff({
          command: options.command ?? 'codex',
          ...(options.commandArgs ? { commandArgs: options.commandArgs } : {}),
          env,
          cwd: request.cwd,
          signal,
        });
        const spawn = confineSpawn(
          options.confinement ?? NO_CONFINEMENT,
          options.command ?? 'codex',
          [...(options.commandArgs ?? []), ...codexArgs(request, options, schemaFile, mcpOff)],
          { cwd: request.cwd, scratch: request.scratchDir, path: env.PATH, ...(schemaDir !== undefined ? { readable: [schemaDir] } : {}) },
        );
        const outcome = await runProcess({
          file: spawn.file,
          args: spawn.args,
          cwd: request.cwd,
          env,
          input: prompt,
          timeoutMs: request.timeoutMs,
          signal,
          ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
          ...(request.processLedger !== undefined ? { ledger: request.processLedger } : {}),
          onStdoutLine: (line) => {
            sawOutput = true;
            const out = foldCodexLine(state, line);
            state = out.state;
            if (onEvent !== undefined) for (const e of out.events) onEvent(e.type === 'init' ? { ...e, model: request.model } : e);
            if (state.toolItems > request.maxTurns && !turnLimit.signal.aborted) turnLimit.abort();
          },
        });
        const stopReason = turnLimit.signal.aborted && request.signal?.aborted !== true ? 'max_turns' : outcome.stopReason;
        const result = codexResult(state, {
          exitCode: outcome.exitCode,
          ...(stopReason !== undefined ? { stopReason } : {}),
          durationMs: outcome.durationMs,
          stderrTail: redactText(outcome.stderrTail, secrets),
          model: request.model,
          prices,
        });
        const unstarted = sandboxStartFailure(options.confinement ?? NO_CONFINEMENT, {
          sawOutput,
          exitCode: outcome.exitCode,
          stopReason,
          stderrTail: result.stderrTail,
        });
        if (unstarted !== null) return { ...result, status: 'crashed', subtype: SANDBOX_START_FAILED, errors: [unstarted] };
        return {
          ...result,
          turns: Math.min(result.turns, stopReason === 'max_turns' ? request.maxTurns : Infinity),
          errors: result.errors.map((e) => redactText(e, secrets)),
        };
      } finally {
        if (schemaDir !== undefined) rmSync(schemaDir, { recursive: true, force: true });
      }
    },
  };
}
