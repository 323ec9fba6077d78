// `ralph doctor [--json]`: the preflight in full (every check, passed ones too) and which
// confinement each role's agents get; exit 1 when a check would keep the loop from starting.
import { ConfigError, loadConfig } from '../project/config';
import { defaultPreflightDeps, formatPreflight, runPreflight } from './preflight';
import type { PreflightDeps } from './preflight';

export interface DoctorIo {
  out(text: string): void;
  err(text: string): void;
}

export function doctorCommand(projectDir: string, argv: readonly string[], io: DoctorIo, deps?: Partial<PreflightDeps>): number {
  const json = argv.includes('--json');
  const unknown = argv.filter((a) => a !== '--json');
  if (unknown.length > 0) {
    io.err(`ralph doctor: unknown argument '${unknown[0]}' (usage: ralph doctor [--json])\n`);
    return 2;
  }
  const loaded = loadConfig(projectDir);
  if (!loaded.ok) {
    const message = loaded.error instanceof ConfigError ? loaded.error.message : String(loaded.error);
    if (json) io.out(`${JSON.stringify({ ok: false, checks: [{ id: 'config', ok: false, severity: 'error', message }] }, null, 2)}\n`);
    else io.err(`FAIL config: ${message}\n`);
    return 1;
  }
  const report = runPreflight(loaded.value, projectDir, defaultPreflightDeps(deps));
  if (json) {
    io.out(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? 0 : 1;
  }
  io.out(`${formatPreflight(report, { all: true })}\n\nConfinement:\n`);
  for (const r of report.confinement) io.out(`  ${r.role.padEnd(7)} ${r.backend.padEnd(8)} ${r.kind.padEnd(11)} ${r.summary}\n`);
  io.out(report.ok ? '\nReady: agents can start.\n' : '\nNot ready: fix the FAIL lines above before `ralph start`.\n');
  return report.ok ? 0 : 1;
}
