// The environment of one agent process, as every CLI backend builds it: the base (the
// allow-listed part of the user's environment unless the caller gave its own), the
// request's variables over it, and, when the request names a scratch folder, that folder's
// HOME, TMPDIR, XDG and CLI config variables over everything (created, login copied in).
// An agent's own `ralph` calls never start the warm process (src/cli/warmAddress.ts): it
// would outlive the agent, and an unconfined agent's would go on serving the user's calls.
import type { AgentRequest } from '../types';
import { allowListedEnv, SCRATCH_VARIABLES } from './environment';
import type { AgentCli } from './environment';
import { prepareScratch, scratchEnv, scratchLayout, userCliConfigDir } from './scratch';

export function agentProcessEnv(
  cli: AgentCli,
  baseEnv: Readonly<Record<string, string | undefined>> | undefined,
  request: Pick<AgentRequest, 'env' | 'scratchDir'>,
  userEnv: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...(baseEnv ?? allowListedEnv(cli, userEnv)),
    ...(request.env ?? {}),
    RALPH_CLI_SERVER: '0',
  };
  if (request.scratchDir === undefined) return env;
  for (const name of SCRATCH_VARIABLES) delete env[name];
  const layout = scratchLayout(request.scratchDir, cli);
  prepareScratch(layout, cli, userCliConfigDir(cli, userEnv));
  return { ...env, ...scratchEnv(layout, cli) };
}
