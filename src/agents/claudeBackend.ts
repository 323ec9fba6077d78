// The Claude Code CLI backend: builds the headless `claude -p` command line, runs it
// through the process wrapper with the prompt on stdin, folds stream-json into events and
// the final result. The scripted backend is this same backend with another executable.
import { claudeResult, foldClaudeLine, INITIAL_CLAUDE_STATE } from './claudeStream';
import { CLAUDE_NO_MCP_ARGS } from './noMcpServers';
import { runProcess } from './process';
import { redactText, secretValuesOf } from '../shared/redaction';
import { agentProcessEnv } from './sandbox/agentProcess';
import { CLAUDE_SANDBOX_SETTINGS, confineSpawn, NO_CONFINEMENT } from './sandbox/confinement';
import type { Confinement } from './sandbox/confinement';
import { SANDBOX_START_FAILED, sandboxStartFailure } from './sandbox/startFailure';
import type { AgentBackend, AgentEventListener, AgentRequest, AgentResult, PermissionMode } from './types';
import { validateAgentRequest } from './types';

export interface ClaudeBackendOptions {
  /** Backend id for metrics; default 'claude'. */
  readonly id?: string;
  /** The executable; default 'claude' from PATH. */
  readonly command?: string;
  /** Arguments before the CLI flags (e.g. the script path when command is `node`). */
  readonly commandArgs?: readonly string[];
  /**
   * Base environment; default: the allow-listed part of process.env (sandbox/environment.ts).
   * The request's env is laid over it.
   */
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
  /** How the process is confined (sandbox/confinement.ts); default none. */
  readonly confinement?: Confinement;
  /** Which CLI this speaks for (environment allow-list, scratch layout); default 'claude'. */
  readonly cli?: 'claude' | 'scripted';
  /** Files the agent must read wherever they are (the scripted backend's script and scenario). */
  readonly readable?: readonly string[];
  /** SIGTERM -> SIGKILL grace; default 5 s. */
  readonly graceMs?: number;
  /** Default permission mode when the request names none; default see `defaultPermissionMode`. */
  readonly permissionMode?: PermissionMode;
  /** Extra flags appended verbatim (e.g. --allowedTools ...). */
  readonly extraArgs?: readonly string[];
}

/**
 * Why acceptEdits: its permission checks are one layer of confinement (measured: in -p mode
 * it denies Write/Edit outside the working directory and Bash that writes outside it or
 * runs git's writing commands), and Claude Code refuses `bypassPermissions` as root unless
 * IS_SANDBOX=1. A caller that explicitly asks for bypassPermissions while running as root
 * gets IS_SANDBOX=1 set (it opted in).
 */
export function defaultPermissionMode(): PermissionMode {
  return 'acceptEdits';
}

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** The CLI arguments for a request (prompt excluded: it goes to stdin). Pure. */
export function claudeArgs(request: AgentRequest, permissionMode: PermissionMode, extraArgs: readonly string[] = []): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--model', request.model, '--max-turns', String(request.maxTurns)];
  if (request.budgetUsd !== undefined) args.push('--max-budget-usd', String(request.budgetUsd));
  args.push('--permission-mode', permissionMode);
  // No MCP server reaches an agent (noMcpServers.ts): Ralph's own would let it decide on patches.
  args.push(...CLAUDE_NO_MCP_ARGS);
  if (request.jsonSchema !== undefined) args.push('--json-schema', JSON.stringify(schemaForClaude(request.jsonSchema)));
  if (request.appendSystemPrompt !== undefined && request.appendSystemPrompt.length > 0) {
    args.push('--append-system-prompt', request.appendSystemPrompt);
  }
  args.push(...extraArgs);
  return args;
}

/**
 * The CLI validates --json-schema with a validator that only knows draft-07 and rejects a
 * `$schema` naming 2020-12 (what zod 4's toJSONSchema emits), so the top-level `$schema`
 * is dropped; the keywords our schemas use mean the same in both drafts.
 */
export function schemaForClaude(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}

export function createClaudeBackend(options: ClaudeBackendOptions = {}): AgentBackend {
  const id = options.id ?? 'claude';
  return {
    id,
    confinement: options.confinement ?? NO_CONFINEMENT,
    async run(request: AgentRequest, onEvent?: AgentEventListener): Promise<AgentResult> {
      validateAgentRequest(request);
      const permissionMode = request.permissionMode ?? options.permissionMode ?? defaultPermissionMode();
      const cli = options.cli ?? 'claude';
      const confinement = options.confinement ?? NO_CONFINEMENT;
      const env = agentProcessEnv(cli, options.baseEnv, request);
      if (permissionMode === 'bypassPermissions' && isRoot()) env.IS_SANDBOX = '1';
      const secrets = secretValuesOf(env);
      // Claude Code's own sandbox where it is the confinement (macOS); inside bubblewrap it
      // cannot start (a capability-less user namespace), and bubblewrap covers every tool.
      // Measured: acceptEdits alone denies most Bash (`sed -i`, `node -e`, `git add`, any
      // compound command), so an agent could not build or test; inside bubblewrap, Bash is
      // allowed (bubblewrap confines it) while Write/Edit outside the worktree stay denied
      // by the permission mode as well.
      const extra =
        confinement.kind === 'cli-sandbox' && cli === 'claude'
          ? [...(options.extraArgs ?? []), '--settings', JSON.stringify(CLAUDE_SANDBOX_SETTINGS)]
          : confinement.kind === 'bwrap'
            ? ['--allowedTools', 'Bash', ...(options.extraArgs ?? [])]
            : options.extraArgs;
      const spawn = confineSpawn(
        confinement,
        options.command ?? 'claude',
        [...(options.commandArgs ?? []), ...claudeArgs(request, permissionMode, extra)],
        { cwd: request.cwd, scratch: request.scratchDir, path: env.PATH, ...(options.readable ? { readable: options.readable } : {}) },
      );

      let state = INITIAL_CLAUDE_STATE;
      let sawOutput = false;
      const outcome = await runProcess({
        file: spawn.file,
        args: spawn.args,
        cwd: request.cwd,
        env,
        input: request.prompt,
        timeoutMs: request.timeoutMs,
        ...(request.signal !== undefined ? { signal: request.signal } : {}),
        ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
        ...(request.processLedger !== undefined ? { ledger: request.processLedger } : {}),
        onStdoutLine: (line) => {
          sawOutput = true;
          const out = foldClaudeLine(state, line);
          state = out.state;
          if (onEvent !== undefined) for (const e of out.events) onEvent(e);
        },
      });
      const result = claudeResult(state, {
        exitCode: outcome.exitCode,
        ...(outcome.stopReason !== undefined ? { stopReason: outcome.stopReason } : {}),
        durationMs: outcome.durationMs,
        stderrTail: redactText(outcome.stderrTail, secrets),
        requestedModel: request.model,
        maxTurns: request.maxTurns,
      });
      const unstarted = sandboxStartFailure(confinement, {
        sawOutput,
        exitCode: outcome.exitCode,
        stopReason: outcome.stopReason,
        stderrTail: result.stderrTail,
      });
      if (unstarted !== null) return { ...result, status: 'crashed', subtype: SANDBOX_START_FAILED, errors: [unstarted] };
      return { ...result, errors: result.errors.map((e) => redactText(e, secrets)) };
    },
  };
}
