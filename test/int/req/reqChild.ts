// A REQ run in its own process that kills itself with SIGKILL when the store acknowledges a
// chosen event (a hook on the store's append notification around unchanged product code):
// the crash `ralph req resume` must recover from. Usage:
//   reqChild <projectDir> <scripts.json> <event_type> <text the event must contain>
// Protocol on stdout: `kill <event_type>` just before the SIGKILL, `done <status>` at a clean end.
import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAgentClis } from '../../kit/agentEnv';
import { openSampleStore } from '../loop/sampleProject';
import { startReqRun } from './reqKit';

async function main(): Promise<void> {
  const [dir, scriptsFile, killType, killText] = process.argv.slice(2);
  if (!dir || !scriptsFile || !killType || killText === undefined) throw new Error('usage: reqChild <dir> <scripts.json> <type> <text>');
  const say = (line: string): void => void writeSync(1, `${line}\n`);
  const store = await openSampleStore(join(dir, '.ralph'));
  store.onDidAppend((events) => {
    if (events.some((e) => e.event_type === killType && JSON.stringify(e).includes(killText))) {
      say(`kill ${killType}`);
      process.kill(process.pid, 'SIGKILL');
    }
  });
  const scripts = JSON.parse(readFileSync(scriptsFile, 'utf8')) as Record<string, unknown>[];
  const p = { dir, ralphDir: join(dir, '.ralph'), scenarioFile: join(dir, '.ralph', 'scenario.json') };
  const run = await startReqRun(p, store, ensureAgentClis().claude, scripts);
  const report = await run.engine.run();
  await run.dispose();
  await store.close();
  say(`done ${report.status}`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
