// Putting NODE_EXTRA_CA_CERTS back (src/shared/extraCaCerts.ts): the launchers start Node with
// it emptied and its value in RALPH_EXTRA_CA_CERTS; the CLI restores the user's environment
// for every process it starts, and remembers the file its own Node did not load.
import assert from 'node:assert/strict';
import { deferredExtraCaCerts, restoreExtraCaCerts } from '../../../src/shared/extraCaCerts';

describe('shared/extraCaCerts', () => {
  it('given no launcher moved anything, then the environment is left alone', () => {
    const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '/a.pem', OTHER: 'x' };
    restoreExtraCaCerts(env);
    assert.deepEqual(env, { NODE_EXTRA_CA_CERTS: '/a.pem', OTHER: 'x' });
  });

  it('given a moved value, then it is back and remembered; given an empty one, then there is none', () => {
    const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '', RALPH_EXTRA_CA_CERTS: '/corp/ca.pem' };
    restoreExtraCaCerts(env);
    assert.deepEqual(env, { NODE_EXTRA_CA_CERTS: '/corp/ca.pem' });
    assert.equal(deferredExtraCaCerts(), '/corp/ca.pem');
    const none: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '', RALPH_EXTRA_CA_CERTS: '' };
    restoreExtraCaCerts(none);
    assert.deepEqual(none, {});
  });
});
