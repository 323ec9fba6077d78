// The CLI's lazy-loading seams: each loads a part of the engine on first use. In the bundle
// every seam is a split point (esbuild puts the module and what only it needs in chunks of
// their own), so `ralph help` loads none of them and `ralph status` only the store and the
// part of the control plane it runs (control/statusPath.ts); under the sources a seam is a
// plain require().
/* eslint-disable @typescript-eslint/no-require-imports */
import type { GitPort } from '../control/context';
import type * as ControlModule from '../control/index';
import type * as CommitFilesModule from '../git/commitFiles';
import type * as StatusPathModule from '../control/statusPath';
import type * as StatusQuickModule from '../control/statusQuick';
import type * as IdsModule from '../domain/ids';
import type * as ConfigModule from '../project/config';
import type * as ConfigVerdictModule from './configVerdict';
import type * as SafetyStatusModule from '../control/safetyStatus';
import type * as LoopCommandsModule from './loopCommands';
import type * as McpCommandModule from '../mcp/cli';
import type * as ReqCommandModule from '../req/cli';
import type * as DoctorCommandModule from '../preflight/doctorCommand';
import type * as RestoreIncidentModule from '../integrity/restoreCommand';
import type * as GitPortModule from './gitPort';
import type * as LogsCommandModule from './logsCommand';
import type * as ProjectCommandsModule from './projectCommands';
import type * as WriterAccessModule from './writerAccess';
import type * as StoreCommandModule from './storeCommand';
import type * as StoreUrlModule from '../store/storeUrl';
import type * as TeamCommandsModule from '../team/cli';

/** The control plane (store, views, every ralphctl command). */
export const loadControl = (): Promise<typeof ControlModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../control/index.js')
    : Promise.resolve().then(() => require('../control/index') as typeof ControlModule);

/** The files a commit changed (`ralph show`'s landing commit). */
export const loadCommitFiles = (): Promise<typeof CommitFilesModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../git/commitFiles.js')
    : Promise.resolve().then(() => require('../git/commitFiles') as typeof CommitFilesModule);

/** What a store-opening command needs first (opening the store), and `status` all it needs. */
export const loadStatusPath = (): Promise<typeof StatusPathModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../control/statusPath.js')
    : Promise.resolve().then(() => require('../control/statusPath') as typeof StatusPathModule);

/** The id grammar (it carries zod for its schemas: not for `help`). */
export const loadIds = (): Promise<typeof IdsModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../domain/ids.js')
    : Promise.resolve().then(() => require('../domain/ids') as typeof IdsModule);

/** `status` from the image the store's last writer kept (no store, no sql.js). */
export const loadStatusQuick = (): Promise<typeof StatusQuickModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../control/statusQuick.js')
    : Promise.resolve().then(() => require('../control/statusQuick') as typeof StatusQuickModule);

/** ralph.config.json's reader (`status` warns about a broken one). */
export const loadProjectConfig = (): Promise<typeof ConfigModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../project/config.js')
    : Promise.resolve().then(() => require('../project/config') as typeof ConfigModule);

/** status's cached verdict on ralph.config.json (loads the config's schema only when it changed). */
export const loadConfigVerdict = (): Promise<typeof ConfigVerdictModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./configVerdict.js')
    : Promise.resolve().then(() => require('./configVerdict') as typeof ConfigVerdictModule);

/** status's safety lines (unconfined roles, incidents): not for `help`. */
export const loadSafetyStatus = (): Promise<typeof SafetyStatusModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../control/safetyStatus.js')
    : Promise.resolve().then(() => require('../control/safetyStatus') as typeof SafetyStatusModule);

/** How a state-changing command gets the writer: the lock wait and the running loop's inbox. */
export const loadWriterAccess = (): Promise<typeof WriterAccessModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./writerAccess.js')
    : Promise.resolve().then(() => require('./writerAccess') as typeof WriterAccessModule);

/** `init` and `repair` (the project layer). */
export const loadProjectCommands = (): Promise<typeof ProjectCommandsModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./projectCommands.js')
    : Promise.resolve().then(() => require('./projectCommands') as typeof ProjectCommandsModule);

/** `start`, `stop`, `pause`, `resume` and `demo` (the loop, agents, git). */
export const loadLoopCommands = (): Promise<typeof LoopCommandsModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./loopCommands.js')
    : Promise.resolve().then(() => require('./loopCommands') as typeof LoopCommandsModule);

/** `mcp` (the MCP server and its SDK, loaded by no other command). */
export const loadMcpCommand = (): Promise<typeof McpCommandModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../mcp/cli.js')
    : Promise.resolve().then(() => require('../mcp/cli') as typeof McpCommandModule);

/** `req` (REQ mode: the specification, the REQ engine). */
export const loadLogsCommand = (): Promise<typeof LogsCommandModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./logsCommand.js')
    : Promise.resolve().then(() => require('./logsCommand') as typeof LogsCommandModule);

export const loadReqCommand = (): Promise<typeof ReqCommandModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../req/cli.js')
    : Promise.resolve().then(() => require('../req/cli') as typeof ReqCommandModule);

/** `store` (team mode's upkeep: it loads the PostgreSQL driver, so no other command does). */
export const loadStoreCommand = (): Promise<typeof StoreCommandModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./storeCommand.js')
    : Promise.resolve().then(() => require('./storeCommand') as typeof StoreCommandModule);

/** `worker`, and `start` on a PostgreSQL store (team mode: the driver, leases, the promoter). */
export const loadTeamCommands = (): Promise<typeof TeamCommandsModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../team/cli.js')
    : Promise.resolve().then(() => require('../team/cli') as typeof TeamCommandsModule);

/** Where the project keeps its store (asked only when .ralph has no embedded store). */
export const loadStoreUrl = (): Promise<typeof StoreUrlModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../store/storeUrl.js')
    : Promise.resolve().then(() => require('../store/storeUrl') as typeof StoreUrlModule);

/** `doctor` (the preflight: agent CLIs, logins, confinement). */
export const loadDoctorCommand = (): Promise<typeof DoctorCommandModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../preflight/doctorCommand.js')
    : Promise.resolve().then(() => require('../preflight/doctorCommand') as typeof DoctorCommandModule);

/** `restore-incident` (the integrity records and git). */
export const loadRestoreIncidentCommand = (): Promise<typeof RestoreIncidentModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('../integrity/restoreCommand.js')
    : Promise.resolve().then(() => require('../integrity/restoreCommand') as typeof RestoreIncidentModule);

const loadGitPort = (): Promise<typeof GitPortModule> =>
  typeof RALPH_BUNDLE !== 'undefined' ? import('./gitPort.js') : Promise.resolve().then(() => require('./gitPort') as typeof GitPortModule);

/**
 * The CLI's git port (gitPort.ts), loaded when a command first asks git something: most
 * commands never do, and node:child_process alone costs a read-only command a fair share of
 * its start-up.
 */
export function lazyGitPort(projectDir: string): Required<GitPort> {
  let port: Promise<Required<GitPort>> | undefined;
  const get = (): Promise<Required<GitPort>> => (port ??= loadGitPort().then((m) => m.cliGitPort(projectDir) as Required<GitPort>));
  return {
    commitExists: async (hash) => (await get()).commitExists(hash),
    notOnTargetBranch: async (hash) => (await get()).notOnTargetBranch(hash),
  };
}

/**
 * Loads every part a store command may need and compiles SQLite's wasm: what the warm
 * process (warmServer.ts) does once, before its first call, so that no call pays for it.
 */
export async function warmUp(): Promise<void> {
  const [statusPath] = await Promise.all([
    loadStatusPath(),
    loadControl(),
    loadCommitFiles(),
    loadIds(),
    loadStatusQuick(),
    loadProjectConfig(),
    loadConfigVerdict(),
    loadSafetyStatus(),
    loadWriterAccess(),
    loadStoreUrl(),
    loadGitPort(),
  ]);
  await statusPath.loadSqlJs();
}
