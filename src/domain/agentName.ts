// Agent names in a team: `worker-1@ci-7` is the agent `worker-1` on the machine `ci-7`
// (a lease owner adds the process: `worker-1@ci-7:4242`). A one-machine loop's names
// (`primary`, `worker-1`) carry no machine. Views group agents by the machine part.

/** A local agent name qualified by its machine: `worker-1` on `ci-7` is `worker-1@ci-7`. */
export function machineAgentName(local: string, machine: string): string {
  return `${local}@${machine}`;
}

export interface QualifiedAgentName {
  /** The name on its machine (`worker-1`, `primary`). */
  readonly local: string;
  /** The machine, or null for a name that carries none (a one-machine loop's `primary`). */
  readonly machine: string | null;
}

/**
 * Splits `worker-1@ci-7` (or a lease owner `worker-1@ci-7:4242`) into its name and
 * machine; a name with no '@' has no machine.
 */
export function splitAgentName(name: string): QualifiedAgentName {
  const at = name.lastIndexOf('@');
  if (at <= 0 || at === name.length - 1) return { local: name, machine: null };
  const rest = name.slice(at + 1);
  const colon = rest.indexOf(':');
  const machine = colon >= 0 ? rest.slice(0, colon) : rest;
  return machine === '' ? { local: name, machine: null } : { local: name.slice(0, at), machine };
}

/**
 * The part of an agent's name its files on this machine are named by (scratch folder,
 * transcript, pending patch): the name without its machine. The files never leave the
 * machine, so the machine adds nothing there, and the '@' would break the id grammar file
 * names follow (domain/ids.ts).
 */
export function agentFileStem(name: string): string {
  return splitAgentName(name).local;
}
