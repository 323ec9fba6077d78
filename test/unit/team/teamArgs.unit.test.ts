// The team verbs' arguments: `ralph worker` and `ralph start` on a PostgreSQL store.
import * as assert from 'node:assert/strict';
import { parseTeamStartArgs, parseWorkerArgs, TeamUsageError } from '../../../src/team/cli';

describe('team/cli arguments', () => {
  it('given no arguments, then one worker on origin with a 30 s lease that runs until stopped', () => {
    assert.deepEqual(parseWorkerArgs([]), { count: 1, remote: 'origin', leaseTtlMs: 30_000, exitWhenIdle: false, quiet: false });
  });

  it('given every option in both spellings, then each is read', () => {
    assert.deepEqual(
      parseWorkerArgs(['--store', 'postgres://h/db', '--count=3', '--remote', 'team', '--lease-ttl=2.5', '--exit-when-idle', '-q']),
      { store: 'postgres://h/db', count: 3, remote: 'team', leaseTtlMs: 2500, exitWhenIdle: true, quiet: true },
    );
  });

  it('given bad values, then a usage error names the option', () => {
    for (const [args, re] of [
      [['--count', '0'], /--count needs an integer 1\.\.16, got 0/],
      [['--count', 'x'], /--count/],
      [['--lease-ttl', '0'], /--lease-ttl needs seconds/],
      [['--remote', '--upload-pack=x'], /is not a git remote/],
      [['--store'], /--store needs a value/],
      [['--bogus'], /unknown argument '--bogus'/],
    ] as const) {
      assert.throws(
        () => parseWorkerArgs(args),
        (e: unknown) => e instanceof TeamUsageError && re.test(e.message),
      );
    }
  });

  it('given ralph start on a team store, then --once, --workers, --remote and --no-judge are read', () => {
    assert.deepEqual(parseTeamStartArgs([]), { once: false, quiet: false, remote: 'origin', workers: 0, judge: true });
    assert.equal(parseTeamStartArgs(['--no-judge']).judge, false);
    assert.deepEqual(parseTeamStartArgs(['--once', '--remote=up', '--workers', '2']), {
      once: true,
      quiet: false,
      remote: 'up',
      workers: 2,
      judge: true,
    });
    assert.throws(() => parseTeamStartArgs(['--workers', '17']), /--workers needs an integer 0\.\.16/);
    assert.throws(() => parseTeamStartArgs(['--bogus']), /usage on a team store/);
  });
});
