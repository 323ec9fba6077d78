// Agent confinement: bubblewrap around the whole agent process on Linux, the CLIs' own
// sandboxes where that is all there is, the environment allow-list and the scratch folder.
import { probeBwrap } from './bwrap';
import { chooseConfinement } from './confinement';
import type { Confinement } from './confinement';
import type { AgentCli } from './environment';

export {
  bwrapArgs,
  findOnPath,
  HIDDEN_ROOTS,
  installRoot,
  nodeModulesAbove,
  probeBwrap,
  ralphInstallRoot,
  resetBwrapProbes,
  symlinkHops,
} from './bwrap';
export type { BwrapProbe, BwrapProfile, SymlinkHop } from './bwrap';
export { credentialFreeHome, storeCredentialPaths } from './credentialFiles';
export type { HiddenPath } from './credentialFiles';
export { SANDBOX_START_FAILED, sandboxStartFailure } from './startFailure';
export type { StartFacts } from './startFailure';
export { CLAUDE_SANDBOX_SETTINGS, chooseConfinement, confineSpawn, NO_CONFINEMENT } from './confinement';
export type { ConfinedSpawn, Confinement, ConfinementKind, SpawnPlace } from './confinement';
export { allowedVariable, allowListedEnv, SCRATCH_VARIABLES } from './environment';
export type { AgentCli } from './environment';
export { prepareScratch, scratchEnv, scratchLayout, userCliConfigDir } from './scratch';
export type { ScratchLayout } from './scratch';
export { agentProcessEnv } from './agentProcess';

/** The confinement an agent of `cli` gets on this machine (bwrap probed on `env.PATH`). */
export function detectConfinement(cli: AgentCli, env: Readonly<Record<string, string | undefined>> = process.env): Confinement {
  return chooseConfinement(cli, process.platform, probeBwrap(env.PATH));
}
