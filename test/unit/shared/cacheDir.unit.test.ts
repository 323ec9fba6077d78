// Where Ralph's cache lives on each platform, and the repository key.
import { strict as assert } from 'node:assert';
import { ralphCacheDir } from '../../../src/shared/cacheDir';
import { repoKey, isInside } from '../../../src/git/repoCache';

describe('shared/cacheDir', () => {
  it('RALPH_CACHE_DIR wins, then an absolute XDG_CACHE_HOME, then the platform folder', () => {
    assert.equal(ralphCacheDir({ RALPH_CACHE_DIR: '/c/r', XDG_CACHE_HOME: '/x' }, 'linux', '/home/u'), '/c/r');
    assert.equal(ralphCacheDir({ XDG_CACHE_HOME: '/x' }, 'linux', '/home/u'), '/x/ralph');
    assert.equal(ralphCacheDir({ XDG_CACHE_HOME: 'relative' }, 'linux', '/home/u'), '/home/u/.cache/ralph');
    assert.equal(ralphCacheDir({}, 'linux', '/home/u'), '/home/u/.cache/ralph');
    assert.equal(ralphCacheDir({}, 'darwin', '/Users/u'), '/Users/u/Library/Caches/ralph');
  });

  it('keys a repository by its folder name and a hash of its git dir', () => {
    assert.match(repoKey('/home/u/src/my app/.git'), /^my_app-[0-9a-f]{12}$/);
    assert.notEqual(repoKey('/a/app/.git'), repoKey('/b/app/.git'));
    assert.equal(repoKey('/a/app/.git'), repoKey('/a/app/.git'));
    assert.match(repoKey('/srv/bare.git'), /^bare\.git-/);
  });

  it('isInside is strict and lexical', () => {
    assert.ok(isInside('/a/b/c', '/a/b'));
    assert.ok(!isInside('/a/b', '/a/b'));
    assert.ok(!isInside('/a/bc', '/a/b'));
    assert.ok(!isInside('/a/b/../c', '/a/b'));
  });
});
