// The agent backend port: one request shape, one stream of normalized events and one final
// result for every way of running a model (Claude Code CLI, Codex CLI, the scripted stand-in,
// and the in-process VS Code Language Model backend that src/extension implements).

/** How a run ended, as the loop needs to decide the next step. */
import type { ProcessLedgerPort } from '../shared/processLedger';
import type { Confinement } from './sandbox/confinement';
export type AgentStatus = 'success' | 'max_turns' | 'budget' | 'error' | 'cancelled' | 'crashed';

export const AGENT_STATUSES: readonly AgentStatus[] = ['success', 'max_turns', 'budget', 'error', 'cancelled', 'crashed'];

/** Claude Code's permission modes that make sense headless (2.1.332 names). */
export type PermissionMode = 'acceptEdits' | 'bypassPermissions' | 'dontAsk' | 'plan';

export interface AgentRequest {
  /** The full prompt text; CLIs receive it on stdin. */
  readonly prompt: string;
  /** The agent's working directory (its git worktree). */
  readonly cwd: string;
  /** Model alias or id, passed through to the backend. */
  readonly model: string;
  /** Model round trips allowed; the CLI stops the run with `max_turns` beyond it. */
  readonly maxTurns: number;
  /** Spend cap for this one invocation (USD); undefined = no cap from the CLI. */
  readonly budgetUsd?: number;
  /** Wall-clock limit; on expiry the run is stopped and reports `cancelled`. */
  readonly timeoutMs: number;
  /** Stop request from the loop (user stop, budget cap); the run reports `cancelled`. */
  readonly signal?: AbortSignal;
  /** Extra environment for the agent process, laid over the backend's base environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** JSON Schema (an object) for a structured final answer. */
  readonly jsonSchema?: Readonly<Record<string, unknown>>;
  readonly permissionMode?: PermissionMode;
  readonly appendSystemPrompt?: string;
  /** Where the agent's process group is recorded while it runs (crash recovery reaps it). */
  readonly processLedger?: ProcessLedgerPort;
  /**
   * The agent's scratch folder: its HOME, TMPDIR, XDG folders and CLI config are made there
   * (sandbox/scratch.ts), the only place besides `cwd` it may write under confinement. When
   * given, Ralph owns those variables: `env` cannot point them elsewhere.
   */
  readonly scratchDir?: string;
}

export interface TokenCounts {
  /** Uncached input tokens. */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheCreate: number;
}

export const ZERO_TOKENS: TokenCounts = { input: 0, output: 0, cacheRead: 0, cacheCreate: 0 };

/** Events every backend emits while it runs, in the order they happen. */
export type AgentEvent =
  | { readonly type: 'init'; readonly sessionId: string; readonly model: string; readonly cwd?: string; readonly tools?: readonly string[] }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_use'; readonly id: string; readonly name: string; readonly input: unknown }
  | { readonly type: 'tool_result'; readonly toolUseId: string; readonly isError: boolean; readonly output: string };

export interface AgentResult {
  readonly status: AgentStatus;
  /** The final answer text ('' when there is none). */
  readonly text: string;
  /** The structured answer when the request had a schema (or the text ended in a JSON block). */
  readonly structured: unknown;
  /** Model round trips, clamped to maxTurns when the limit stopped the run. */
  readonly turns: number;
  readonly durationMs: number;
  readonly tokens: TokenCounts;
  readonly costUsd: number;
  readonly model: string;
  readonly sessionId: string;
  /** The process's exit code; null when it was killed by a signal or there is no process. */
  readonly exitCode: number | null;
  /** The last part of stderr, secrets redacted. */
  readonly stderrTail: string;
  /** The backend's own end reason (result subtype, `turn.failed`, ...) for the metrics log. */
  readonly subtype: string;
  /** Error messages the backend reported, secrets redacted. */
  readonly errors: readonly string[];
  /** Why a cancelled run stopped. */
  readonly stopReason?: 'abort' | 'timeout';
}

export type AgentEventListener = (event: AgentEvent) => void;

/**
 * A backend runs one invocation. It never throws for a failed run (the status says how
 * it ended); it throws only for programming errors such as an invalid request. A CLI
 * backend spawns a process; an in-process backend (VS Code LM API) implements the
 * tools itself and fills the same result, counting tokens and timing the run itself.
 */
export interface AgentBackend {
  /** Stable id for metrics and config: 'claude' | 'codex' | 'scripted' | 'vscode-lm' | ... */
  readonly id: string;
  /**
   * How the processes it starts are confined (sandbox/confinement.ts). Every backend that
   * starts processes sets it; a kind of `none` is refused by the loop unless the user opted
   * in (`agents.unconfined`). Absent only for test doubles that start nothing.
   */
  readonly confinement?: Confinement;
  run(request: AgentRequest, onEvent?: AgentEventListener): Promise<AgentResult>;
}

/** Thrown for a request no backend could run (bad cwd, empty prompt, bad limits). */
export class InvalidAgentRequestError extends Error {
  override readonly name = 'InvalidAgentRequestError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`invalid agent request: ${field}: ${message}`);
  }
}

/** Checks the parts of a request every backend relies on. */
export function validateAgentRequest(request: AgentRequest): void {
  if (request.prompt.length === 0) throw new InvalidAgentRequestError('prompt', 'is empty');
  if (request.cwd.length === 0) throw new InvalidAgentRequestError('cwd', 'is empty');
  if (!Number.isInteger(request.maxTurns) || request.maxTurns < 1) {
    throw new InvalidAgentRequestError('maxTurns', `must be a positive integer, got ${request.maxTurns}`);
  }
  if (!(request.timeoutMs > 0)) throw new InvalidAgentRequestError('timeoutMs', `must be > 0, got ${request.timeoutMs}`);
  if (request.budgetUsd !== undefined && !(request.budgetUsd > 0)) {
    throw new InvalidAgentRequestError('budgetUsd', `must be > 0, got ${request.budgetUsd}`);
  }
}
