// AGENTS.md as REQ mode's orchestrator writes it: one `## REQ-XXX` entry per addition, and
// past 500 lines the oldest whole entries archived (the preamble and the newest kept).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENTS_ARCHIVE_DIR, appendAgentsMd } from '../../../src/req/agentsMd';
import { registerSecretValues } from '../../../src/shared/redaction';

const clock = { now: () => Date.parse('2026-12-01T16:00:00Z'), sleep: async () => undefined };

describe('req: AGENTS.md written by the orchestrator', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-agentsmd-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('given no AGENTS.md, then the addition is the first entry under a preamble', async () => {
    const w = await appendAgentsMd(dir, 'REQ-001', '- one module per function', clock);
    const text = readFileSync(join(dir, 'AGENTS.md'), 'utf8');
    assert.match(text, /^# AGENTS\.md\n\n.*REQ mode.*\n\n## REQ-001\n- one module per function\n$/);
    assert.equal(w.archivedTo, null);
    assert.equal(w.totalLines, text.split('\n').length - 1);
  });

  it('given a file that passes 500 lines, then the oldest entries move to the archive and the newest stay', async () => {
    const entry = (n: number): string =>
      [`## REQ-${String(n).padStart(3, '0')}`, ...Array.from({ length: 49 }, (_, i) => `- note ${n}.${i}`)].join('\n');
    const preamble = '# AGENTS.md\n\nProject rules that stay.\n';
    writeFileSync(join(dir, 'AGENTS.md'), `${preamble}\n${Array.from({ length: 10 }, (_, i) => entry(i + 1)).join('\n\n')}\n`);
    const w = await appendAgentsMd(dir, 'REQ-011', '- the newest rule', clock);
    const text = readFileSync(join(dir, 'AGENTS.md'), 'utf8');
    const lines = text.split('\n').length - 1;
    assert.ok(lines <= 500, `${lines} lines`);
    assert.ok(text.startsWith(preamble), 'the preamble stays');
    assert.match(text, /## REQ-011\n- the newest rule\n$/);
    assert.doesNotMatch(text, /## REQ-001\n/, 'the oldest entry left');
    assert.match(text, /## REQ-010\n/, 'the newer entries stay');
    assert.ok(w.archivedTo !== null && w.archivedTo.startsWith(AGENTS_ARCHIVE_DIR));
    const archived = readFileSync(join(dir, w.archivedTo), 'utf8');
    assert.match(archived, /## REQ-001\n- note 1\.0\n/);
    assert.equal(w.archivedLines, 51, 'REQ-001 whole: its heading, 49 lines and the blank line after it');
    // Nothing lost: every entry is in one of the two files, once.
    for (let n = 1; n <= 10; n++) {
      const h = `## REQ-${String(n).padStart(3, '0')}\n`;
      assert.equal(Number(text.includes(h)) + Number(archived.includes(h)), 1, h);
    }
    // A second archiving never overwrites the first.
    for (let n = 12; n <= 22; n++) await appendAgentsMd(dir, `REQ-${n}`, Array.from({ length: 30 }, (_, i) => `- x${i}`).join('\n'), clock);
    const files = readdirSync(join(dir, AGENTS_ARCHIVE_DIR));
    assert.ok(files.length >= 2, files.join(', '));
    assert.ok(readFileSync(join(dir, w.archivedTo), 'utf8') === archived);
  });

  it('given an addition that quotes a known secret or a key-shaped token, then AGENTS.md gets it redacted', async () => {
    registerSecretValues(['s3cr3t-value-from-env-1234']);
    await appendAgentsMd(
      dir,
      'REQ-001',
      '- the API key is s3cr3t-value-from-env-1234\n- token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789',
      clock,
    );
    const text = readFileSync(join(dir, 'AGENTS.md'), 'utf8');
    assert.doesNotMatch(text, /s3cr3t-value-from-env-1234/);
    assert.match(text, /\[REDACTED\]/);
  });
});
