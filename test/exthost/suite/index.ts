// The extension-host test entry: VS Code's test runner requires this bundle inside the real
// extension host and awaits `run()`; a rejection makes the workbench exit with code 1.
// scripts/run-exthost-tests.mjs bundles it with mocha and every *.exthost.test.ts file.
import Mocha from 'mocha';

/**
 * Runs mocha over the suites that `load` registers. `load` runs after mocha's globals
 * (describe, it, before…) are installed, so test modules can be evaluated inside it.
 */
export function runSuites(load: () => void): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 60_000, reporter: 'spec' });
  mocha.suite.emit('pre-require', globalThis, 'exthost-bundle', mocha);
  load();
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} extension-host test(s) failed`)) : resolve()));
  });
}
