// Which transcript an Agents row opens: the one its latest agent.started event names, else
// the newest file of that agent; paths from the log that point anywhere else are refused.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isTranscriptFile, latestTranscriptOf, transcriptFileOf } from '../../../src/extension/transcripts/transcriptFiles';

describe('extension: transcript files', () => {
  let ralphDir: string;
  let dir: string;
  beforeEach(() => {
    ralphDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-tf-')), '.ralph');
    dir = path.join(ralphDir, 'logs', 'transcripts');
    fs.mkdirSync(dir, { recursive: true });
  });
  afterEach(() => fs.rmSync(path.dirname(ralphDir), { recursive: true, force: true }));

  const db = (t: string | null): { get: <R>() => R | undefined } => ({ get: <R>() => (t === null ? undefined : ({ t } as R)) });

  it('given a recorded transcript path, then only a transcript file directly in the folder is accepted', () => {
    assert.equal(
      transcriptFileOf(ralphDir, 'logs/transcripts/20261201090000000_worker-1_W1-001.log'),
      path.join(dir, '20261201090000000_worker-1_W1-001.log'),
    );
    assert.equal(transcriptFileOf(ralphDir, '../../etc/passwd'), undefined);
    assert.equal(transcriptFileOf(ralphDir, 'logs/transcripts/../../ralph.db'), undefined);
    assert.equal(transcriptFileOf(ralphDir, 'logs/transcripts/notes.txt'), undefined);
    assert.ok(isTranscriptFile(path.join(dir, '20261201090000000_primary.log')));
    assert.ok(!isTranscriptFile('/etc/20261201090000000_primary.log'));
    assert.ok(!isTranscriptFile(path.join(dir, 'x.log')));
  });

  it('given the event and files, then the newest of the agent is its current transcript; none without either', () => {
    assert.equal(latestTranscriptOf(db(null), ralphDir, 'worker-1'), undefined);
    const older = '20261201090000000_worker-1_W1-001.log';
    const newer = '20261201091000000_worker-1_W1-002.log';
    fs.writeFileSync(path.join(dir, older), '# x\n');
    fs.writeFileSync(path.join(dir, '20261201092000000_primary_W1-003.log'), '# x\n');
    assert.equal(latestTranscriptOf(db(null), ralphDir, 'worker-1'), path.join(dir, older));
    assert.equal(latestTranscriptOf(db(`logs/transcripts/${older}`), ralphDir, 'worker-1'), path.join(dir, older));
    // The file of a just-started invocation appears before its event is stored.
    fs.writeFileSync(path.join(dir, newer), '# x\n');
    assert.equal(latestTranscriptOf(db(`logs/transcripts/${older}`), ralphDir, 'worker-1'), path.join(dir, newer));
    // A hostile path in the log falls back to the files.
    assert.equal(latestTranscriptOf(db('../../../etc/passwd'), ralphDir, 'worker-1'), path.join(dir, newer));
    assert.equal(latestTranscriptOf(undefined, ralphDir, 'primary'), path.join(dir, '20261201092000000_primary_W1-003.log'));
  });
});
