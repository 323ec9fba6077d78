// `npm test`'s pretest step on a machine that lacks tools: it names every missing Debian
// package in one line to run (never installing in --check mode), and passes on this machine.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '..', '..', '..', 'scripts', 'ensure-system-deps.mjs');

describe('scripts/ensure-system-deps.mjs (the pretest step)', () => {
  it('given a PATH without git, python3, rg, pkg-config, bwrap and socat, then it stops with the one apt-get line and installs nothing', () => {
    const bin = mkdtempSync(join(tmpdir(), 'ralph-deps-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      const marker = join(bin, 'apt-ran');
      writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\ntouch ${marker}\nexit 99\n`);
      chmodSync(join(bin, 'apt-get'), 0o755);
      const r = spawnSync(process.execPath, [SCRIPT, '--check'], { env: { PATH: bin, HOME: bin }, encoding: 'utf8' });
      assert.equal(r.status, 1, r.stdout + r.stderr);
      const line = /Run this, then npm test again:\n {2}(.*)/.exec(r.stderr)?.[1] ?? '';
      assert.match(line, /^sudo apt-get update && sudo apt-get install -y --no-install-recommends /);
      for (const pkg of ['git', 'python3', 'ripgrep', 'pkg-config', 'bubblewrap', 'socat'])
        assert.ok(line.split(' ').includes(pkg), `${pkg}: ${line}`);
      assert.equal(existsSync(marker), false, 'apt-get ran in --check mode');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('given this machine (what CI and the README promise), then it passes', () => {
    const r = spawnSync(process.execPath, [SCRIPT, '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ok: git, python3, chromium, ripgrep, pkg-config, libkrb5-dev, bubblewrap, socat, postgresql/);
  });
});
