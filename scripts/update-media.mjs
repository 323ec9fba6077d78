#!/usr/bin/env node
// Refreshes the committed images under media/ from their sources, with Debian's chromium
// (playwright-core) as the only image tool: media/icon.svg → media/icon.png (128×128, the
// Marketplace icon), and the screenshots the e2e tests leave in .artifacts/screenshots/ →
// media/screenshots/*.jpg, scaled and compressed so the README's pictures can ship inside the
// .vsix (they must load in the Extensions view offline) without bloating it.
// Usage: node scripts/run-e2e.mjs --grep 'first run|monitor panel|transcripts' && node scripts/update-media.mjs
/* global document -- page.evaluate callbacks run in the browser */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shots = path.join(root, '.artifacts', 'screenshots');
const out = path.join(root, 'media', 'screenshots');

/** README picture ← the e2e screenshot it is made from. */
const SCREENSHOTS = [
  ['monitor.jpg', 'monitor-codeserver.png'],
  ['init-not-a-git-repository.jpg', 'first-run-01-not-a-git-repo-modal.png'],
  ['two-folders.jpg', 'first-run-03-two-folders.png'],
  ['transcript.jpg', 'history-02-transcript-followed.png'],
  ['task-story.jpg', 'history-03-task-story.png'],
  ['monitor-time-slider.jpg', 'history-04-monitor-slider-past.png'],
];
const MAX_WIDTH = 1100;
const QUALITY = 62;

const executablePath = process.env.RALPH_E2E_CHROMIUM ?? process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  // The icon: the SVG at its own size, the corners transparent.
  const svg = fs.readFileSync(path.join(root, 'media', 'icon.svg'), 'utf8');
  await page.setViewportSize({ width: 128, height: 128 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.screenshot({
    path: path.join(root, 'media', 'icon.png'),
    omitBackground: true,
    clip: { x: 0, y: 0, width: 128, height: 128 },
  });
  console.log(`media/icon.png ${fs.statSync(path.join(root, 'media', 'icon.png')).size} bytes`);

  fs.mkdirSync(out, { recursive: true });
  for (const [target, source] of SCREENSHOTS) {
    const file = path.join(shots, source);
    if (!fs.existsSync(file)) {
      console.log(`skipped ${target}: ${path.relative(root, file)} is missing (run the e2e that takes it first)`);
      continue;
    }
    const data = fs.readFileSync(file).toString('base64');
    await page.setViewportSize({ width: 64, height: 64 });
    await page.setContent(`<html><body style="margin:0"><img id="i" src="data:image/png;base64,${data}"></body></html>`);
    const { w, h } = await page.evaluate(async () => {
      const img = document.getElementById('i');
      await img.decode();
      return { w: img.naturalWidth, h: img.naturalHeight };
    });
    const scale = Math.min(1, MAX_WIDTH / w);
    const width = Math.round(w * scale);
    const height = Math.round(h * scale);
    await page.setViewportSize({ width, height });
    await page.evaluate(
      ([wd, ht]) => {
        const img = document.getElementById('i');
        img.style.width = `${wd}px`;
        img.style.height = `${ht}px`;
        img.style.display = 'block';
      },
      [width, height],
    );
    await page.screenshot({ path: path.join(out, target), type: 'jpeg', quality: QUALITY, clip: { x: 0, y: 0, width, height } });
    console.log(`media/screenshots/${target} ${width}×${height} ${fs.statSync(path.join(out, target)).size} bytes`);
  }
} finally {
  await browser.close();
}
