// The suggested keybindings in package.json: one chord prefix (Ctrl+Alt+R, ⌘⌥R on macOS)
// for the commands used most, each enabled exactly where the Command Palette offers its
// command, so a key never runs what the palette would hide (Start in Restricted Mode, Pause
// with nothing running). One key is shared only by Pause and Resume, which never apply at once.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

interface Keybinding {
  command: string;
  key: string;
  mac: string;
  when?: string;
}
interface Manifest {
  contributes: {
    commands: { command: string }[];
    keybindings: Keybinding[];
    menus: { commandPalette: { command: string; when: string }[] };
  };
}

const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../package.json'), 'utf8')) as Manifest;
const { commands, keybindings, menus } = manifest.contributes;

describe('package.json keybindings', () => {
  it('binds the most used commands under one chord prefix, on every platform', () => {
    assert.deepEqual(
      keybindings.map((k) => k.command),
      [
        'ralph.showMonitor',
        'ralph.showStatus',
        'ralph.startLoop',
        'ralph.pauseLoop',
        'ralph.resumeLoop',
        'ralph.stopLoop',
        'ralph.addTask',
        'ralph.openTranscript',
      ],
    );
    for (const k of keybindings) {
      assert.ok(
        commands.some((c) => c.command === k.command),
        `${k.command} is not a contributed command`,
      );
      assert.match(k.key, /^ctrl\+alt\+r [a-z]$/, k.command);
      assert.equal(k.mac, k.key.replace('ctrl+', 'cmd+'), k.command);
    }
  });

  it('enables each key exactly where the Command Palette shows its command (always, without an entry)', () => {
    for (const k of keybindings) {
      const palette = menus.commandPalette.find((m) => m.command === k.command);
      assert.equal(k.when, palette?.when, k.command);
    }
  });

  it('shares a key only between Pause and Resume, whose contexts exclude each other', () => {
    const byKey = new Map<string, string[]>();
    for (const k of keybindings) byKey.set(k.key, [...(byKey.get(k.key) ?? []), k.command]);
    const shared = [...byKey.values()].filter((c) => c.length > 1);
    assert.deepEqual(shared, [['ralph.pauseLoop', 'ralph.resumeLoop']]);
  });
});
