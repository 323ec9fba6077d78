// The environment an agent process gets: what its CLI needs to run and authenticate (PATH,
// locale, proxies and certificates, the CLI's own API key, base URL and provider variables),
// never the rest of the user's shell (tokens of other services, SSH agent sockets, cloud
// credentials the CLI does not use, VS Code's IPC handles). Its HOME, TMPDIR and CLI config
// folder are its scratch folder's (scratch.ts), so nothing it writes there reaches yours.

export type AgentCli = 'claude' | 'codex' | 'scripted';

/** Every agent: running programs, locale, terminal-free output, network through the user's proxy. */
const COMMON_NAMES: readonly string[] = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'TZ',
  'USER',
  'LOGNAME',
  'SHELL',
  'NO_COLOR',
  'FORCE_COLOR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
];
const COMMON_PREFIXES: readonly string[] = ['LC_'];

/** Per CLI: its API keys, endpoints and provider switches (Bedrock, Vertex, Azure). */
const CLI_NAMES: Readonly<Record<AgentCli, readonly string[]>> = {
  claude: [
    'DISABLE_AUTOUPDATER',
    'DISABLE_TELEMETRY',
    'DISABLE_ERROR_REPORTING',
    'DISABLE_NON_ESSENTIAL_MODEL_CALLS',
    'MAX_THINKING_TOKENS',
    'BASH_DEFAULT_TIMEOUT_MS',
    'BASH_MAX_TIMEOUT_MS',
    'BASH_MAX_OUTPUT_LENGTH',
    'MCP_TIMEOUT',
    'MCP_TOOL_TIMEOUT',
    'AWS_REGION',
    'AWS_PROFILE',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_BEARER_TOKEN_BEDROCK',
    'CLOUD_ML_REGION',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'GOOGLE_CLOUD_PROJECT',
  ],
  codex: [
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'OPENAI_ORGANIZATION',
    'OPENAI_PROJECT',
    'CODEX_API_KEY',
    'AZURE_OPENAI_API_KEY',
    'AZURE_OPENAI_ENDPOINT',
    'RUST_LOG',
  ],
  scripted: ['RALPH_SCENARIO'],
};
const CLI_PREFIXES: Readonly<Record<AgentCli, readonly string[]>> = {
  claude: ['ANTHROPIC_', 'CLAUDE_CODE_', 'VERTEX_REGION_'],
  codex: [],
  scripted: [],
};

/**
 * Set by Ralph from the agent's scratch folder (or the caller's explicit choice), never
 * taken from the user's shell: with the user's CLAUDE_CONFIG_DIR or CODEX_HOME the agent
 * would write the user's own CLI settings (hooks that run the next time they use it).
 */
export const SCRATCH_VARIABLES: readonly string[] = [
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'CLAUDE_CONFIG_DIR',
  'CODEX_HOME',
];

/** Whether an agent of `cli` may see the variable `name` from the user's environment. */
export function allowedVariable(cli: AgentCli, name: string): boolean {
  if (SCRATCH_VARIABLES.includes(name)) return false;
  if (COMMON_NAMES.includes(name) || CLI_NAMES[cli].includes(name)) return true;
  return [...COMMON_PREFIXES, ...CLI_PREFIXES[cli]].some((p) => name.startsWith(p));
}

/** The user's environment reduced to what an agent of `cli` may see. */
export function allowListedEnv(cli: AgentCli, source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && allowedVariable(cli, name)) out[name] = value;
  }
  return out;
}
