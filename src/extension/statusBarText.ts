// What the status bar item says, from the facts the item gathers (pure, so it is tested
// without VS Code): the icon and text, the tooltip, and whether it wears the warning colour.

export type LoopRunState = 'running' | 'paused' | 'stopped';

export interface StatusBarFacts {
  /** ` [folder]` with several folders, else ''. */
  readonly name: string;
  readonly state: LoopRunState;
  /** This window follows a loop another process runs. */
  readonly observing: boolean;
  readonly observedPid: number | null;
  readonly phase: string;
  readonly task: string | null;
  readonly cost: number;
  readonly forecast: string | null;
  /** Roles the last run left unconfined, as `role (backend)`. */
  readonly unconfined: readonly string[];
  /** The other folders' lines, already formatted ('' when there is one folder). */
  readonly others: string;
  /** Why the loop is paused (its loop.paused event), when it is. */
  readonly pause?: { readonly reason: string; readonly short: string } | null;
}

export interface StatusBarView {
  readonly text: string;
  readonly tooltip: string;
  /** Agents run unconfined right now: the item takes the warning background. */
  readonly warning: boolean;
}

export function statusBarView(f: StatusBarFacts): StatusBarView {
  const { state, observing } = f;
  const icon = observing ? '$(eye)' : state === 'running' ? '$(sync~spin)' : state === 'paused' ? '$(debug-pause)' : '$(debug-stop)';
  const parts = [
    observing ? 'observing' : undefined,
    state === 'running' ? f.phase || 'running' : state === 'paused' && f.pause ? `paused: ${f.pause.short}` : state,
    state === 'stopped' ? undefined : (f.task ?? undefined),
    `$${f.cost.toFixed(2)} today`,
  ].filter((p): p is string => !!p);
  // Unconfined agents are worth a colour while they run; the tooltip says so after the run too.
  const warning = f.unconfined.length > 0 && state !== 'stopped';
  const safety =
    f.unconfined.length > 0
      ? `${state === 'stopped' ? "WARNING: the last run's agents ran" : 'WARNING: agents run'} UNCONFINED (agents.unconfined: true): ${f.unconfined.join(', ')} could write anything your user can.\n`
      : '';
  const who = observing
    ? `run by another process (pid ${f.observedPid ?? '?'}); this window follows it`
    : state === 'stopped'
      ? 'not running'
      : 'run by this window';
  const paused = state === 'paused' && f.pause ? `Paused: ${f.pause.reason}\n` : '';
  return {
    text: `${warning ? '$(warning) ' : ''}${icon} Ralph${f.name}: ${parts.join(' · ')}`,
    tooltip: `${safety}${paused}Ralph loop${f.name} ${state}: ${who}\nPhase: ${state === 'stopped' ? 'stopped' : f.phase || '-'}\nTask: ${f.task ?? '-'}\nCost today: $${f.cost.toFixed(4)}${f.forecast ? `\n${f.forecast}` : ''}\nClick to open the monitor.${f.others}`,
    warning,
  };
}
