// The store port's contract against both adapters: the embedded sql.js store in a temp
// .ralph, and the PostgreSQL store in a fresh database of a throwaway cluster.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { openStore } from '../../../src/store/sqlJsStore';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { storeContract } from './storeContract';

describe('store contract: embedded (sql.js)', () => {
  storeContract(async () => {
    const ralphDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-contract-')), '.ralph');
    return (mode, o = {}) =>
      openStore({
        ralphDir,
        mode,
        projections: o.projections ?? [],
        ...(o.clock ? { clock: o.clock } : {}),
        ...(o.runId ? { runId: o.runId } : {}),
      });
  });
});

describe('store contract: PostgreSQL', function () {
  let cluster: PgCluster | undefined;
  let n = 0;
  before(async function () {
    cluster = await startPgClusterOrSkip(this);
  });
  after(() => cluster?.destroy());

  storeContract(async () => {
    const url = (cluster as PgCluster).createDatabase(`contract_${++n}`);
    return (mode, o = {}) =>
      openPgStore({
        url,
        mode,
        projections: o.projections ?? [],
        ...(o.clock ? { clock: o.clock } : {}),
        ...(o.runId ? { runId: o.runId } : {}),
      });
  });
});
