// On VS Code versions that have it, an MCP server definition provider: `ralph mcp` for the
// open folder appears in VS Code's MCP server list without any set-up. The API is newer than
// engines.vscode (^1.100.0), so its shapes are declared here and looked up at run time.
// VS Code 1.100 already has the function but checks the provider id against
// contributes.modelContextServerCollections (1.101+: mcpServerDefinitionProviders), so
// package.json declares both; a host that still refuses it costs only this provider.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ChatIds } from './chatIds';

interface McpStdioServerDefinitionLike {
  cwd?: vscode.Uri;
}
type McpStdioServerDefinitionCtor = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => McpStdioServerDefinitionLike;
interface McpServerDefinitionProviderLike {
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<McpStdioServerDefinitionLike[]>;
}
type RegisterMcpProvider = (id: string, provider: McpServerDefinitionProviderLike) => vscode.Disposable;

/** The API of VS Code ≥ 1.101, when this host has it. */
export function mcpDefinitionApi(
  api: unknown = vscode,
): { register: RegisterMcpProvider; Definition: McpStdioServerDefinitionCtor } | undefined {
  const v = api as { lm?: { registerMcpServerDefinitionProvider?: unknown }; McpStdioServerDefinition?: unknown };
  const register = v.lm?.registerMcpServerDefinitionProvider;
  const Definition = v.McpStdioServerDefinition;
  if (typeof register !== 'function' || typeof Definition !== 'function') return undefined;
  return { register: register.bind(v.lm) as RegisterMcpProvider, Definition: Definition as McpStdioServerDefinitionCtor };
}

/** The server VS Code starts: this extension's bundled CLI, `mcp`, for the folder. */
export function ralphServerCommand(
  extensionPath: string,
  folder: string,
): { command: string; args: string[]; env: Record<string, string> } {
  // The extension host's own Node (Electron's binary, run as Node).
  return {
    command: process.execPath,
    args: [path.join(extensionPath, 'dist', 'cli.js'), '--dir', folder, 'mcp'],
    env: { ELECTRON_RUN_AS_NODE: '1' },
  };
}

export function registerMcpDefinitions(
  extension: vscode.ExtensionContext,
  /** Each folder's directory and its name in the workspace (the server's label). */
  folders: () => readonly { readonly dir: string; readonly name: string }[],
  log: { warn(message: string): void },
  api: unknown = vscode,
): vscode.Disposable[] {
  const mcp = mcpDefinitionApi(api);
  if (!mcp) return [];
  const version = String((extension.extension.packageJSON as { version?: unknown }).version ?? '0');
  try {
    return [
      mcp.register(ChatIds.mcpProvider, {
        provideMcpServerDefinitions: () =>
          folders().map((folder) => {
            const s = ralphServerCommand(extension.extensionPath, folder.dir);
            const def = new mcp.Definition(`Ralph Loop (${folder.name})`, s.command, s.args, s.env, version);
            def.cwd = vscode.Uri.file(folder.dir);
            return def;
          }),
      }),
    ];
  } catch (e) {
    log.warn(`the MCP server definition was not registered: ${e instanceof Error ? e.message : String(e)}`);
    return [];
  }
}
