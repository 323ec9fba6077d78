// The MCP server of one project (official TypeScript SDK): the tool catalogue over the
// operations, and three resources — BACKLOG.md, STATE.json and each task's story. Decisions
// are recorded with actor `mcp` and the client's name and version from the MCP handshake;
// with `readOnly` only the reading tools exist. The SDK is loaded only by `ralph mcp`.
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { CommandClient } from '../control/context';
import { RalphOperations, type OperationResult, type RalphPort } from './operations';
import { hasControlChars, READING_TOOLS, TOOLS, taskIdSchema } from './tools';

export const MCP_ACTOR = 'mcp';

export interface RalphMcpServerOptions {
  readonly port: RalphPort;
  readonly readOnly: boolean;
  /** Ralph's version, told to the client in the handshake. */
  readonly version: string;
  /** Unexpected failures (the tool answers with the message; this gets the stack). */
  readonly log?: (message: string) => void;
}

/** The handshake's client name and version, made safe to store: printable, bounded, never empty. */
export function clientFromHandshake(info: { name?: unknown; version?: unknown } | undefined): CommandClient {
  const clean = (v: unknown, max: number): string =>
    typeof v === 'string'
      ? [...v]
          .map((ch) => (hasControlChars(ch) ? ' ' : ch))
          .join('')
          .trim()
          .slice(0, max)
      : '';
  const name = clean(info?.name, 100) || 'unknown-client';
  const version = clean(info?.version, 50);
  return version ? { name, version } : { name };
}

/**
 * Text only: the markdown is written for the model, and Claude Code hands a model the
 * structuredContent instead of the text when both are there (measured with 2.1.332).
 */
function toResult(r: OperationResult): CallToolResult {
  return { content: [{ type: 'text', text: r.text }], ...(r.isError ? { isError: true } : {}) };
}

/**
 * The SDK validates JSON Schema only for elicitation, which this server never asks for; its
 * default validator is ajv (about 130 KB minified with its formats), which the bundle
 * replaces by a stub (esbuild.js), so the server brings its own that refuses.
 */
const noJsonSchemaValidation: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'Ralph asks clients nothing: no JSON Schema to validate' }),
};

export function createRalphMcpServer(o: RalphMcpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'ralph', title: 'Ralph Loop', version: o.version },
    {
      jsonSchemaValidator: noJsonSchemaValidation,
      instructions:
        `Ralph Loop's control plane for the project in ${o.port.projectDir}: an autonomous loop of coding agents whose work is ` +
        'promoted by risk tier. Read its status, tasks, task stories and deferred queue' +
        (o.readOnly
          ? '. This server is read-only.'
          : '; add tasks (they go through the backlog policy), decide on deferred patches, pause, resume or stop the loop. Decisions are recorded with actor "mcp" and your client name.'),
    },
  );
  const ops = new RalphOperations(o.port, {
    actor: MCP_ACTOR,
    client: () => clientFromHandshake(server.server.getClientVersion()),
    source: 'mcp',
  });
  const guarded = async (run: () => Promise<OperationResult>): Promise<CallToolResult> => {
    try {
      return toResult(await run());
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      o.log?.(`tool failed: ${e instanceof Error ? (e.stack ?? message) : message}`);
      return { content: [{ type: 'text', text: `Ralph: ${message}` }], isError: true };
    }
  };

  for (const t of o.readOnly ? READING_TOOLS : TOOLS) {
    server.registerTool(
      t.name,
      {
        title: t.title,
        description: t.description,
        inputSchema: t.input(),
        annotations: {
          title: t.title,
          readOnlyHint: !t.decides,
          destructiveHint: t.name === 'decide' || t.name === 'stop',
          idempotentHint: !t.decides,
          openWorldHint: false,
        },
      },
      (args: Record<string, unknown>) => guarded(() => t.run(ops, args as never)),
    );
  }

  server.registerResource(
    'backlog',
    'ralph://backlog.md',
    { title: 'BACKLOG.md', description: 'The backlog by wave, as the event store has it now.', mimeType: 'text/markdown' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await ops.backlogMarkdown() }] }),
  );
  server.registerResource(
    'state',
    'ralph://state.json',
    { title: 'STATE.json', description: "The loop's position and the backlog's counts.", mimeType: 'application/json' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: await ops.stateJson() }] }),
  );
  server.registerResource(
    'task-story',
    new ResourceTemplate('ralph://tasks/{task_id}/story.md', {
      list: async () => ({
        resources: (await ops.taskIds())
          .slice(0, 500)
          .map((id) => ({ uri: `ralph://tasks/${encodeURIComponent(id)}/story.md`, name: `${id} story` })),
      }),
      complete: { task_id: async (prefix) => (await ops.taskIds()).filter((id) => id.startsWith(prefix)).slice(0, 100) },
    }),
    { title: "A task's story", description: 'Every event of one task, its attempts, patches and decisions.', mimeType: 'text/markdown' },
    async (uri, vars) => {
      const raw = Array.isArray(vars['task_id']) ? vars['task_id'][0] : vars['task_id'];
      const id = taskIdSchema().safeParse(decodeURIComponent(String(raw ?? '')));
      if (!id.success) throw new Error(`not a task id in ${uri.href}`);
      const r = await ops.showTask(id.data);
      if (r.isError) throw new Error(r.text);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: r.text }] };
    },
  );
  return server;
}
