// A writer killed with SIGKILL inside a checkpoint, for the checkpoint window tests (run with
// `node --import tsx`):
//   checkpointChild <ralphDir> <events> <where> [touch|change]
// appends <events> events (printing `ack <event_id>` once each is durable), then checkpoints
// and dies at <where>:
//   temp      ralph.db's temp file is being written (ralph.db.prev already kept)
//   renamed   ralph.db was just replaced, the journal not yet trimmed
//   none      no kill: closes cleanly
// `touch` changes ralph.db's mtime first, as a backup or sync tool would: the writer can no
// longer tell it is the file it wrote by its stamp, only by its bytes. `change` rewrites
// ralph.db's bytes in place (another valid database: its user_version set), as a tool
// editing it outside Ralph would: the checkpoint keeps it under .ralph/backup/ and replaces it.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type * as FsPromises from 'node:fs/promises';
import { fileCheckpointWriter, type CheckpointWriter } from '../../../src/store/checkpoint';
import { openStore } from '../../../src/store/sqlJsStore';
import { loadSqlJs } from '../../../src/store/sqlDb';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';

const req = createRequire(__filename);
const fsp = req('node:fs/promises') as typeof FsPromises;
const [ralphDir, eventsText, where = 'none', touch] = process.argv.slice(2);
if (ralphDir === undefined || eventsText === undefined)
  throw new Error('usage: checkpointChild <ralphDir> <events> <where> [touch|change]');

const die = (at: string): never => {
  fs.writeSync(1, `kill ${at}\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

async function main(): Promise<void> {
  const real = fileCheckpointWriter(ralphDir as string);
  let armed = false;
  const writer: CheckpointWriter = {
    async write(image, rotate) {
      const sum = await real.write(image, rotate);
      if (armed && where === 'renamed') die('renamed');
      return sum;
    },
    writeSync: (image, rotate) => real.writeSync(image, rotate),
  };
  const open = fsp.open.bind(fsp);
  fsp.open = (async (p: fs.PathLike, ...rest: unknown[]) => {
    if (armed && where === 'temp' && /[/\\]ralph\.db\.tmp-/.test(String(p))) die('temp');
    return (open as (p: fs.PathLike, ...r: unknown[]) => Promise<FsPromises.FileHandle>)(p, ...rest);
  }) as typeof fsp.open;
  const store = await openStore({
    ralphDir: ralphDir as string,
    mode: 'writer',
    projections: CONTROL_PROJECTIONS,
    checkpointWriter: writer,
    checkpointDebounceMs: 3_600_000,
  });
  for (let i = 0; i < Number(eventsText); i++) {
    const [e] = await store.append([{ entity_type: 'note', entity_id: `n-${i}`, event_type: 'test.note', actor: 'test', payload: { i } }]);
    fs.writeSync(1, `ack ${e?.event_id ?? '?'}\n`);
  }
  if (touch === 'touch') {
    const db = path.join(ralphDir as string, 'ralph.db');
    if (fs.existsSync(db)) fs.utimesSync(db, new Date(), new Date(Date.now() + 5_000));
  }
  if (touch === 'change') {
    const db = path.join(ralphDir as string, 'ralph.db');
    const SQL = await loadSqlJs();
    const other = new SQL.Database(fs.readFileSync(db));
    other.run('PRAGMA user_version = 7');
    fs.writeFileSync(db, other.export());
    other.close();
  }
  armed = true;
  await store.checkpoint();
  armed = false;
  await store.close();
  fs.writeSync(1, 'done\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
