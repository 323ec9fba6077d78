// Which machine a team process says it runs on: RALPH_MACHINE when set (a CI runner, a
// Kubernetes pod or a container whose hostname means nothing to the team), else the
// hostname. It qualifies every agent name (`worker-1@<machine>`) so the views can group the
// team's agents by machine; '@' and ':' separate the name, the machine and the pid in a
// lease's owner, so a machine name may contain neither.
import { hostname } from 'node:os';
import { z } from 'zod';

export const MACHINE_ENV = 'RALPH_MACHINE';

const MACHINE_NAME = z
  .string()
  .min(1, 'is empty')
  .max(128, 'is longer than 128 characters')
  .regex(/^[A-Za-z0-9._-]+$/, 'may hold only letters, digits, ".", "_" and "-"');

/** RALPH_MACHINE does not name a machine the agent names can carry. */
export class InvalidMachineNameError extends Error {
  override readonly name = 'InvalidMachineNameError';
  constructor(
    readonly value: string,
    readonly problem: string,
  ) {
    super(`${MACHINE_ENV}=${JSON.stringify(value)} ${problem}`);
  }
}

/** A hostname made fit for an agent name: anything outside the machine-name alphabet becomes '-'. */
function fromHostname(host: string): string {
  const cleaned = host.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 128);
  return cleaned === '' ? 'localhost' : cleaned;
}

/** This process's machine name: RALPH_MACHINE (validated) when set, else the hostname. */
export function resolveMachine(env: NodeJS.ProcessEnv = process.env, host: () => string = hostname): string {
  const raw = env[MACHINE_ENV];
  if (raw === undefined) return fromHostname(host());
  const parsed = MACHINE_NAME.safeParse(raw);
  if (!parsed.success) throw new InvalidMachineNameError(raw, parsed.error.issues[0]?.message ?? 'is not a machine name');
  return parsed.data;
}
