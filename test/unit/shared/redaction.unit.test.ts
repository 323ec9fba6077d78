import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { REDACTED, redactArgs, Redactor, redactText, redactValue, registerSecretEnv, secretValuesOf } from '../../../src/shared/redaction';

describe('shared/redaction (as the agents use it)', () => {
  it('redacts values of secret-named env variables, whatever their shape', () => {
    const secrets = secretValuesOf({
      GITHUB_TOKEN: 'abc123def456',
      PATH: '/usr/bin:/bin',
      SHORT_KEY: 'abc',
      DB_PASSWORD: 'hunter2hunter2',
    });
    assert.deepEqual(secrets.sort(), ['abc123def456', 'hunter2hunter2']);
    assert.equal(redactText('pw=hunter2hunter2 gh=abc123def456 path=/usr/bin', secrets), `pw=${REDACTED} gh=${REDACTED} path=/usr/bin`);
  });

  it('redacts well-known key shapes in stderr tails', () => {
    const tail = [
      'Invalid API key: sk-ant-api03-AbCdEfGhIjKlMnOp',
      'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig',
      'token ghp_abcdefghijklmnopqrstuvwxyz0123',
      'aws AKIAABCDEFGHIJKLMNOP',
      'x-api-key: zzzzzzzzzz',
      'OPENAI_API_KEY=sk-proj-abcdefghijkl',
      '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----',
    ].join('\n');
    const out = redactText(tail);
    for (const s of ['AbCdEfGh', 'eyJhbGci', 'ghp_abc', 'AKIAABCD', 'zzzzzzzzzz', 'sk-proj', 'MIIE'])
      assert.ok(!out.includes(s), `${s} leaked: ${out}`);
    assert.match(out, /Authorization: Bearer \[REDACTED\]/);
    assert.match(out, /x-api-key: \[REDACTED\]/);
  });

  it('leaves ordinary text alone', () => {
    const text = 'Created hello.txt in /tmp/repo; 3 tests passed; task W1-001 done';
    assert.equal(redactText(text), text);
  });

  it('redacts arguments after secret-named flags', () => {
    assert.deepEqual(redactArgs(['--model', 'opus', '--api-key', 'abc', '-c', 'api_key=verysecret']), [
      '--model',
      'opus',
      '--api-key',
      REDACTED,
      '-c',
      `api_key=${REDACTED}`,
    ]);
  });
});

describe('shared/redaction: one step in front of every sink', () => {
  it('given the shapes the issue names, then each is replaced, keeping the harmless prefix', () => {
    const text = [
      'anthropic sk-ant-api03-Q2hhbmdlTWU0NTY3ODkw',
      'openai sk-abcdefghijklmnopqrstuv',
      'classic ghp_16C7e42F292c6912E7710c838347Ae178B4a',
      'fine-grained github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
      'aws AKIAIOSFODNN7EXAMPLE and ASIAIOSFODNN7EXAMPLE',
      'slack xoxb-1234567890-abcdefghij and xoxp-1234567890-abcdefghij',
      'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n(cut short, no END line)',
    ].join('\n');
    const out = redactText(text);
    for (const leak of [
      'Q2hhbmdl',
      'abcdefghijklmnopqrstuv',
      '16C7e42F',
      '11ABCDEFG',
      'IOSFODNN7',
      '1234567890-abc',
      'eyJzdWIi',
      'b3BlbnNzaC1r',
    ]) {
      assert.ok(!out.includes(leak), `${leak} leaked: ${out}`);
    }
    assert.match(out, /^anthropic \[REDACTED\]$/m);
  });

  it('given secret-named variables, then their values go, but paths, booleans and short values stay', () => {
    const env = {
      STRIPE_SECRET_KEY: 'rk_live_0123456789',
      DB_CREDENTIALS: 'user:pa55word@db',
      SSH_AUTH_SOCK: '/tmp/ssh-XXXX/agent.1',
      FEATURE_TOKEN_ENABLED: 'true',
      XAUTHORITY: 'not-a-secret-by-name',
      AUTHOR: 'Ada Lovelace',
    };
    assert.deepEqual(secretValuesOf(env), ['rk_live_0123456789', 'user:pa55word@db']);
    const r = new Redactor().addEnv(env);
    assert.equal(
      r.text('key rk_live_0123456789 at /tmp/ssh-XXXX/agent.1 by Ada Lovelace'),
      `key ${REDACTED} at /tmp/ssh-XXXX/agent.1 by Ada Lovelace`,
    );
  });

  it('given a payload, then prose is redacted deeply and ids, paths and hashes are kept; an unchanged payload is the same object', () => {
    registerSecretEnv({ DEPLOY_TOKEN: 'v3ry-s3cret-value-123' });
    const payload = {
      task_id: 'W1-005',
      patch_path: '/p/.ralph/commits/pending/W1-005_primary_1.patch',
      reflection: 'the deploy failed with v3ry-s3cret-value-123',
      gates: [{ gate: 'test', tail: 'curl -H "Authorization: Bearer abcdefghijklmnop"' }],
      files: ['src/sk-learn-adapter-1.ts'],
    };
    const out = redactValue(payload);
    assert.equal(out.reflection, `the deploy failed with ${REDACTED}`);
    assert.equal(out.gates[0]?.tail, `curl -H "Authorization: Bearer ${REDACTED}"`);
    assert.deepEqual(out.files, payload.files);
    assert.equal(out.patch_path, payload.patch_path);
    const clean = { task_id: 'W1-001', note: 'nothing to hide here' };
    assert.equal(redactValue(clean), clean);
  });
});

describe('shared/redaction: the quick check', () => {
  it('given texts made of credential shapes, secret values and prose, then text() answers exactly what the full scrub does', () => {
    const r = new Redactor(['hunter2hunter2', 'Zq9-local-secret']);
    const pieces = [
      'sk-ant-api03-AbCdEfGhIjKlMnOp',
      'SK-ANT-notakey',
      'ghp_abcdefghijklmnopqrstuvwxyz0123',
      'github_pat_11ABCDEFG0123456789_abc',
      'xoxb-1234567890-abcdef',
      'AKIAABCDEFGHIJKLMNOP',
      'ASIAQWERTYUIOPASDFGH',
      'AIzaSyA-abcdefghijklmnopqrstuv',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX2hlcmU',
      'Authorization: Bearer abcdefgh12345678',
      'basic   dXNlcjpwYXNzd29yZA==',
      'api_key="s3cr3tvalue"',
      'PASSWORD: letmein99',
      'token=abcd',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----',
      'hunter2hunter2',
      'Zq9-local-secret',
      'the task passed its gates',
      'W1-003 → done',
      'Asia and the keys of the piano',
      ' ',
      '\n',
    ];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 12 })), { maxLength: 8 }), (parts) => {
        const text = parts.join('');
        assert.equal(r.text(text), r.scrub(text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('shared/redaction: a value changed part way through', () => {
  it('given a secret after plain keys and elements, then the copy keeps every key, element and order, and the input is untouched', () => {
    const input = {
      a: 'plain words',
      n: 3,
      list: ['first', 'sk-ant-api03-AbCdEfGhIjKlMnOp', 'last'],
      nested: { ok: 'fine', auth: 'token=abcd1234', after: true },
      task_id: 'sk-notasecret-id',
    };
    const before = structuredClone(input);
    const out = redactValue(input);
    assert.deepEqual(input, before, 'the input is not changed');
    assert.deepEqual(Object.keys(out), Object.keys(input));
    assert.deepEqual(Object.keys(out.nested), ['ok', 'auth', 'after']);
    assert.deepEqual(out, {
      a: 'plain words',
      n: 3,
      list: ['first', REDACTED, 'last'],
      nested: { ok: 'fine', auth: `token=${REDACTED}`, after: true },
      task_id: 'sk-notasecret-id',
    });
    assert.equal(out.list === input.list, false);
  });
});
