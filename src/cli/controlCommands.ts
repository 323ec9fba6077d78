// The ralphctl-compatible commands of `ralph`: arguments and output text as the reference
// ralphctl prints them (scripts written for it keep working), plus `--json` where a program reads the answer. One table, in
// the order `ralph help` lists them, from the modules that own each group.
import type { CommandSpec } from './commandSpec';
import { TASK_COMMANDS } from './taskCommands';
import { PATCH_COMMANDS } from './patchCommands';
import { REVIEW_COMMANDS } from './reviewCommands';
import { VIEW_COMMANDS } from './viewCommands';
import { REPAIR_COMMANDS } from './repairCommands';

export type { CliIo, CommandSpec, StoreNeed } from './commandSpec';
export { pyJson, relativeToCwd } from './commandSpec';

export const CONTROL_COMMANDS: readonly CommandSpec[] = [
  ...TASK_COMMANDS,
  ...PATCH_COMMANDS,
  ...REVIEW_COMMANDS,
  ...VIEW_COMMANDS,
  ...REPAIR_COMMANDS,
];
