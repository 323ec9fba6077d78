// The monitor page's HTML, shared by the panel and the browser test so both serve the same
// document: one CSP (`default-src 'none'`, scripts and our stylesheet by nonce or from the
// webview's own origin); no fonts (the icons are inline SVG).
// No `vscode` import: plain strings in, a string out.
import { randomBytes } from 'node:crypto';

export interface MonitorHtmlInput {
  /** `webview.cspSource`. */
  readonly cspSource: string;
  readonly nonce: string;
  /** URIs (as strings) of dist/webview/monitor.js and monitor.css. */
  readonly scriptUri: string;
  readonly styleUri: string;
}

/** A fresh nonce from the crypto RNG (never Math.random). */
export function createNonce(): string {
  return randomBytes(18).toString('base64url');
}

export function monitorCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}

function attr(v: string): string {
  return v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

export function renderMonitorHtml(i: MonitorHtmlInput): string {
  const n = attr(i.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(monitorCsp(i.cspSource, i.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(i.styleUri)}" nonce="${n}">
<title>Ralph Monitor</title>
</head>
<body>
<main id="app" aria-label="Ralph Loop monitor"></main>
<script nonce="${n}" src="${attr(i.scriptUri)}"></script>
</body>
</html>`;
}
