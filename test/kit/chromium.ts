// How tests launch Debian's chromium offline (test/e2e/README.md): one place for the path and the
// flags that keep it from reaching for the network.
export const chromiumPath: string = process.env['RALPH_E2E_CHROMIUM'] ?? process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
