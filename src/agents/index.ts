// The agents package's public surface: the backend port and its implementations, the
// stream parsers, the process wrapper, metrics, prompt builders and pricing.
import { createClaudeBackend } from './claudeBackend';
import type { ClaudeBackendOptions } from './claudeBackend';
import { createCodexBackend } from './codexBackend';
import type { CodexBackendOptions } from './codexBackend';
import { createScriptedBackend } from './scriptedBackend';
import type { ScriptedBackendOptions } from './scriptedBackend';
import type { AgentBackend } from './types';

export * from './types';
export { claudeArgs, createClaudeBackend, defaultPermissionMode, schemaForClaude } from './claudeBackend';
export type { ClaudeBackendOptions } from './claudeBackend';
export { codexArgs, createCodexBackend } from './codexBackend';
export type { CodexBackendOptions } from './codexBackend';
export { createScriptedBackend, defaultScriptedClaudePath, ScriptedClaudeNotFoundError } from './scriptedBackend';
export type { ScriptedBackendOptions } from './scriptedBackend';
export { createInProcessBackend } from './inProcess';
export type { ChatMessage, ChatModelPort, ChatPart, InProcessBackendOptions } from './inProcess';
export { confinedPath, executeLocalTool, LOCAL_TOOLS, PathOutsideWorkspaceError } from './localTools';
export type { ToolContext, ToolOutcome, ToolSpec } from './localTools';
export { claudeResult, foldClaudeLine, INITIAL_CLAUDE_STATE, parseClaudeStream } from './claudeStream';
export { codexResult, foldCodexLine, INITIAL_CODEX_STATE, parseCodexStream } from './codexStream';
export { DEFAULT_GRACE_MS, groupAlive, killGroup, runProcess } from './process';
export type { ProcessOutcome, ProcessRequest } from './process';
export {
  appendMetrics,
  costToday,
  metricsDir,
  metricsFileName,
  metricsLineFor,
  metricsLineSchema,
  readMetrics,
  summarizeCost,
} from './metrics';
export type { CostSummary, MetricsContext, MetricsLine, MetricsProblem, MetricsRead } from './metrics';
export { invokeAgent } from './invoke';
export type { Invocation, InvokeContext } from './invoke';
export { DEFAULT_PRICES, mergePrices, priceRowFor, priceTableSchema, priceTokens } from './pricing';
export type { PriceRow, PriceTable } from './pricing';
export { REDACTED, redactArgs, redactText, redactValue, secretValuesOf } from '../shared/redaction';
export { extractJsonAnswer } from './structured';
export * from './prompts';

/** A backend chosen by configuration (ralph.config.json `backend`, the demo, tests). */
export type BackendSpec =
  | ({ readonly kind: 'claude' } & ClaudeBackendOptions)
  | ({ readonly kind: 'codex' } & CodexBackendOptions)
  | ({ readonly kind: 'scripted' } & ScriptedBackendOptions);

export function createBackend(spec: BackendSpec): AgentBackend {
  switch (spec.kind) {
    case 'claude':
      return createClaudeBackend(spec);
    case 'codex':
      return createCodexBackend(spec);
    case 'scripted':
      return createScriptedBackend(spec);
  }
}
