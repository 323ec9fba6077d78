// The numbers the fault suite reports at its end (the closing note's table): faults
// injected, bad inputs tried, and the losses that must stay 0. Tests add to the tally as
// they run; a root hook (loaded by .mocharc.faults.json) prints it once every test ran.
export interface Tally {
  /** Kills, crashes, misbehaving agents, concurrent user actions: each fault injected once. */
  faultsInjected: number;
  /** Malformed files and messages fed to a parser or a command. */
  badInputs: number;
  /** Acknowledged events missing after a restart. */
  eventsLost: number;
  /** User edits (files, commits, stashes) not found intact afterwards. */
  editsLost: number;
  /** Commands or promotions whose effect appears more than once. */
  appliedTwice: number;
  /** Processes still alive after a run ended or was recovered. */
  processesLeaked: number;
}

const tally: Tally = { faultsInjected: 0, badInputs: 0, eventsLost: 0, editsLost: 0, appliedTwice: 0, processesLeaked: 0 };

export function count(key: keyof Tally, n = 1): void {
  tally[key] += n;
}

export function currentTally(): Readonly<Tally> {
  return { ...tally };
}

export function formatTally(t: Readonly<Tally> = tally): string {
  const rows: [string, number][] = [
    ['faults injected', t.faultsInjected],
    ['bad inputs tried', t.badInputs],
    ['events lost', t.eventsLost],
    ['edits lost', t.editsLost],
    ['commands applied twice', t.appliedTwice],
    ['processes leaked', t.processesLeaked],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return ['fault suite tally:', ...rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`)].join('\n');
}

/** Mocha root hooks: the tally after the last test. */
export const mochaHooks = {
  afterAll(): void {
    process.stdout.write(`\n${formatTally()}\n`);
  },
};
