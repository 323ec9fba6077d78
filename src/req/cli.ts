// `ralph req <verb>`: REQ mode on the command line. `status [--json]` prints the seed's
// output contract (plus the order and the iteration); `run`, `resume` build the
// specification; `decide REQ-… skip|manual|stop|rollback` answers a blocked REQ. Exit codes
// follow the CLI's: 0 ok, 1 failed, 2 usage.
import { reqStatusProblems, reqSummaryLine } from '../domain/reqStatus';
import type { ReqStatusReport } from '../domain/reqStatus';
import { readReqStatus } from './view';
import type * as HostModule from './host';
import { idProblem, quoteId } from '../domain/ids';
import { REQ_DECISIONS } from '../domain/reqEvents';
import type { ReqDecision } from '../domain/reqEvents';

/** The engine (agents, git, the loop's harness): loaded by `run` and `resume` only. */
const loadHost = (): Promise<typeof HostModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./host.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./host') as typeof HostModule);

async function runCommand(dir: string, args: readonly string[], io: ReqCliIo, resume: boolean): Promise<number> {
  const quiet = args.includes('--quiet') || args.includes('-q');
  const unknown = args.find((a) => a !== '--quiet' && a !== '-q');
  if (unknown !== undefined) {
    io.err(
      `ralph req ${resume ? 'resume' : 'run'}: unknown argument '${unknown}' (usage: ralph req ${resume ? 'resume' : 'run'} [--quiet])\n`,
    );
    return 2;
  }
  const { openReqHost } = await loadHost();
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals): void => {
    io.err(`\n${sig}: stopping the REQ run (the agent is being terminated)…\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let host: Awaited<ReturnType<typeof openReqHost>> | undefined;
  try {
    host = await openReqHost({ projectDir: dir, signal: stop.signal, onLine: (l) => (quiet ? undefined : io.out(`${l}\n`)) });
    const report = await host.engine.run({ resume });
    if (quiet) io.out(formatReqStatus(report));
    return report.status === 'COMPLETE' ? 0 : report.status === 'PARTIAL' || report.status === 'WAIT_USER' ? 0 : 1;
  } catch (e) {
    if (e instanceof Error && (e.name === 'ReqSpecificationError' || e.name === 'ConfigError' || e.name === 'StoreLockedError')) {
      io.err(`ralph: ${e.message}\n`);
      return e.name === 'StoreLockedError' ? 3 : 1;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await host?.close();
  }
}

export interface ReqCliIo {
  out(text: string): void;
  err(text: string): void;
}

export const REQ_USAGE =
  'req status [--json] | req run [--quiet] | req resume [--quiet] | req decide REQ-ID skip|manual|stop|rollback | req promote <learning>';

const STATUS_MARK: Record<string, string> = {
  done: '✓',
  in_progress: '▶',
  pending: '·',
  blocked: '✗',
  blocked_auto: '⊘',
  manual: '✎',
  skipped: '↷',
};

/** The human-readable status: the contract's counts, then the REQs by topological level. */
export function formatReqStatus(r: ReqStatusReport): string {
  const lines = [
    `REQ mode: ${r.status}${r.current ? ` (building ${r.current})` : ''} — ${reqSummaryLine(r)}; iteration ${r.iteration}/${r.max_iterations}`,
  ];
  if (r.cycle) lines.push(`dependency cycle: ${r.cycle.join(' → ')}`);
  let level = -1;
  for (const q of r.reqs) {
    if (q.level !== level) {
      level = q.level;
      lines.push(`level ${level}:`);
    }
    const extra = [
      q.status === 'blocked_auto' ? `blocked(auto) by ${q.blocked_by ?? '?'}` : q.status.replace('_', ' '),
      q.round > 0 && q.status === 'in_progress' ? `round ${q.round}${q.layer ? `, ${q.layer}` : ''}` : '',
      q.commit ? q.commit.slice(0, 8) : '',
    ].filter((x) => x !== '');
    lines.push(`  ${STATUS_MARK[q.status] ?? '?'} ${q.id} ${q.title} [${extra.join(', ')}]`);
  }
  if (r.learnings.permanent.length + r.learnings.contextual.length > 0) {
    lines.push('learnings:');
    for (const l of r.learnings.permanent) lines.push(`  permanent: ${l}`);
    for (const l of r.learnings.contextual) lines.push(`  contextual: ${l}`);
  }
  if (r.checkpoint_at) lines.push(`checkpoint: ${r.checkpoint_at}`);
  return `${lines.join('\n')}\n`;
}

async function statusCommand(dir: string, args: readonly string[], io: ReqCliIo): Promise<number> {
  const json = args.includes('--json');
  const unknown = args.find((a) => a !== '--json');
  if (unknown !== undefined) {
    io.err(`ralph req status: unknown argument '${unknown}' (usage: ralph req status [--json])\n`);
    return 2;
  }
  const r = await readReqStatus(dir);
  if (!r.ok) {
    io.err(`ralph: ${r.problem.message}\n`);
    return 1;
  }
  const problems = reqStatusProblems(r.report);
  if (problems.length > 0) {
    // Never printed as if it were fine: a broken invariant is a bug to report.
    io.err(`ralph: REQ status invariants do not hold: ${problems.join('; ')}\n`);
    return 1;
  }
  io.out(json ? `${JSON.stringify(r.report, null, 2)}\n` : formatReqStatus(r.report));
  return 0;
}

async function decideCommand(dir: string, args: readonly string[], io: ReqCliIo): Promise<number> {
  const [id, decision, ...noteParts] = args;
  if (id === undefined || decision === undefined) {
    io.err(`ralph req decide: usage: ralph req decide REQ-ID ${REQ_DECISIONS.join('|')} [note...]\n`);
    return 2;
  }
  const problem = idProblem(id, 'requirement');
  if (problem !== null) {
    io.err(`ralph req decide: invalid requirement id ${quoteId(id)}: ${problem}\n`);
    return 2;
  }
  if (!(REQ_DECISIONS as readonly string[]).includes(decision)) {
    io.err(`ralph req decide: unknown decision ${quoteId(decision)} (one of ${REQ_DECISIONS.join(', ')})\n`);
    return 2;
  }
  const note = noteParts.join(' ').trim();
  const actor = `cli:${process.env['USER'] ?? 'user'}`;
  const { applyReqDecision } = await loadHost();
  const r = await applyReqDecision(dir, { req: id, decision: decision as ReqDecision, actor, ...(note ? { note } : {}) });
  if (r.kind === 'queued') {
    io.out(`QUEUED ${r.file} (the running REQ loop applies it between REQs)\n`);
    return 0;
  }
  if (r.kind === 'refused') {
    io.err(`ralph: ${r.message}\n`);
    return 1;
  }
  io.out(`${id}: ${decision} — ${r.help}\n`);
  return 0;
}

async function promoteCommand(dir: string, args: readonly string[], io: ReqCliIo): Promise<number> {
  const text = args.join(' ').trim();
  if (text === '') {
    io.err('ralph req promote: usage: ralph req promote <learning text, or a unique part of it>\n');
    return 2;
  }
  const { applyLearningPromotion } = await loadHost();
  const r = await applyLearningPromotion(dir, { text, actor: `cli:${process.env['USER'] ?? 'user'}` });
  if (r.kind === 'queued') {
    io.out(`QUEUED ${r.file} (the running REQ loop applies it between REQs)\n`);
    return 0;
  }
  if (r.kind === 'refused') {
    io.err(`ralph: ${r.message}\n`);
    return 1;
  }
  io.out(`${r.help}\n`);
  return 0;
}

/** `ralph req <verb> ...`. */
export async function reqCommand(dir: string, args: readonly string[], io: ReqCliIo): Promise<number> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'status':
      return statusCommand(dir, rest, io);
    case 'run':
      return runCommand(dir, rest, io, false);
    case 'resume':
      return runCommand(dir, rest, io, true);
    case 'decide':
      return decideCommand(dir, rest, io);
    case 'promote':
      return promoteCommand(dir, rest, io);
    default:
      io.err(`ralph req: ${verb === undefined ? 'missing verb' : `unknown verb '${verb}'`} (usage: ralph ${REQ_USAGE})\n`);
      return 2;
  }
}
