// The `ralph` launcher the extension puts on the integrated terminal's PATH
// (terminalPath.ts): a short script that runs the CLI shipped in the extension with a
// given runtime (the extension host's own, as Node). Rewritten when the extension moves (an
// update), left alone otherwise; written whole or not at all. Like the CLI's shebang, it
// starts the runtime without NODE_EXTRA_CA_CERTS and hands its value to the CLI
// (shared/extraCaCerts.ts says why). No `vscode` import.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { DEFERRED_CA_VAR } from '../shared/extraCaCerts';

/** The launcher files for this platform: name and content. */
export function launcherFiles(
  runtime: string,
  cli: string,
  platform: NodeJS.Platform = process.platform,
): { name: string; text: string }[] {
  if (platform === 'win32') {
    return [
      {
        name: 'ralph.cmd',
        text:
          '@echo off\r\nrem Written by the Ralph Loop extension: runs the ralph CLI it ships.\r\nsetlocal\r\n' +
          `set "${DEFERRED_CA_VAR}=%NODE_EXTRA_CA_CERTS%"\r\nset NODE_EXTRA_CA_CERTS=\r\n` +
          `set ELECTRON_RUN_AS_NODE=1\r\n"${runtime}" "${cli}" %*\r\n`,
      },
    ];
  }
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    {
      name: 'ralph',
      text:
        '#!/bin/sh\n# Written by the Ralph Loop extension: runs the ralph CLI it ships.\n' +
        `${DEFERRED_CA_VAR}="\${NODE_EXTRA_CA_CERTS-}" NODE_EXTRA_CA_CERTS= ELECTRON_RUN_AS_NODE=1 exec ${q(runtime)} ${q(cli)} "$@"\n`,
    },
  ];
}

/** Writes the launchers into `binDir` unless they already say the same; returns whether it wrote. */
export async function writeLaunchers(binDir: string, runtime: string, cli: string): Promise<boolean> {
  let wrote = false;
  for (const f of launcherFiles(runtime, cli)) {
    const file = path.join(binDir, f.name);
    const current = await fsp.readFile(file, 'utf8').catch(() => undefined);
    if (current === f.text) continue;
    await fsp.mkdir(binDir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await fsp.writeFile(tmp, f.text, { mode: 0o755 });
    await fsp.rename(tmp, file);
    wrote = true;
  }
  return wrote;
}
