// One agent invocation as the loop performs it: run the backend, then append the metrics
// line (always, whatever the status), with the request's secrets scrubbed.
import { appendMetrics, metricsLineFor } from './metrics';
import type { MetricsContext, MetricsLine } from './metrics';
import { secretValuesOf } from '../shared/redaction';
import type { AgentBackend, AgentEventListener, AgentRequest, AgentResult } from './types';

export interface InvokeContext extends Omit<MetricsContext, 'backend' | 'promptBytes' | 'secrets'> {
  /** Project root holding `.ralph/logs/`. */
  readonly projectRoot: string;
}

export interface Invocation {
  readonly result: AgentResult;
  readonly metrics: MetricsLine;
  readonly metricsFile: string;
}

export async function invokeAgent(
  backend: AgentBackend,
  request: AgentRequest,
  ctx: InvokeContext,
  onEvent?: AgentEventListener,
): Promise<Invocation> {
  const result = await backend.run(request, onEvent);
  const metrics = metricsLineFor(result, {
    ...ctx,
    backend: backend.id,
    promptBytes: Buffer.byteLength(request.prompt, 'utf8'),
    secrets: secretValuesOf({ ...process.env, ...(request.env ?? {}) }),
  });
  const metricsFile = appendMetrics(ctx.projectRoot, metrics);
  return { result, metrics, metricsFile };
}
