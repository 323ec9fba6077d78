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

/**
 * README picture ← the e2e screenshot it is made from, and the part of it worth showing
 * (`crop` in the source's pixels; the e2e screenshots are 1400×900). Each picture ships in the
 * .vsix, whose size has a budget (scripts/bench and the package check), so a picture is cropped
 * to what it illustrates, scaled to at most `width` pixels and kept under MAX_BYTES.
 */
const SCREENSHOTS = [
  { target: 'monitor.jpg', source: 'monitor-codeserver.png', crop: { x: 346, y: 62, w: 1054, h: 540 }, width: 900 },
  // The monitor page in a light theme, from the browser tests (npm run test:browser).
  { target: 'monitor-light.jpg', source: 'monitor-light.png', crop: { x: 0, y: 0, w: 1280, h: 440 }, width: 800 },
  { target: 'init-not-a-git-repository.jpg', source: 'first-run-01-not-a-git-repo-modal.png', width: 900 },
  { target: 'two-folders.jpg', source: 'first-run-03-two-folders.png', width: 900 },
  { target: 'extension-page.jpg', source: 'first-run-05-extension-page.png', crop: { x: 0, y: 30, w: 1300, h: 520 }, width: 780 },
  { target: 'first-run-error.jpg', source: 'first-run-04-preflight-failed.png', crop: { x: 700, y: 600, w: 700, h: 300 }, width: 700 },
  { target: 'transcript.jpg', source: 'history-02-transcript-followed.png', crop: { x: 0, y: 28, w: 1210, h: 630 }, width: 860 },
  { target: 'task-story.jpg', source: 'history-03-task-story.png', crop: { x: 346, y: 62, w: 1054, h: 440 }, width: 860 },
  {
    target: 'monitor-time-slider.jpg',
    source: 'history-04-monitor-slider-past.png',
    crop: { x: 346, y: 62, w: 1054, h: 440 },
    width: 900,
  },
];
const QUALITY = 60;
const MAX_BYTES = 30_000;

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
  for (const { target, source, crop, width: maxWidth } of SCREENSHOTS) {
    const file = path.join(shots, source);
    if (!fs.existsSync(file)) {
      console.log(`skipped ${target}: ${path.relative(root, file)} is missing (run the e2e that takes it first)`);
      continue;
    }
    const data = fs.readFileSync(file).toString('base64');
    await page.setViewportSize({ width: 64, height: 64 });
    await page.setContent(`<html><body style="margin:0;overflow:hidden"><img id="i" src="data:image/png;base64,${data}"></body></html>`);
    const natural = await page.evaluate(async () => {
      const img = document.getElementById('i');
      await img.decode();
      return { w: img.naturalWidth, h: img.naturalHeight };
    });
    const c = crop ?? { x: 0, y: 0, w: natural.w, h: natural.h };
    const scale = Math.min(1, maxWidth / c.w);
    const width = Math.round(c.w * scale);
    const height = Math.round(c.h * scale);
    await page.setViewportSize({ width, height });
    // The whole image scaled, shifted so the crop's corner is the page's.
    await page.evaluate(
      ([s, n, cx, cy]) => {
        const img = document.getElementById('i');
        Object.assign(img.style, {
          display: 'block',
          position: 'absolute',
          width: `${n.w * s}px`,
          height: `${n.h * s}px`,
          left: `${-cx * s}px`,
          top: `${-cy * s}px`,
        });
      },
      [scale, natural, c.x, c.y],
    );
    const target_ = path.join(out, target);
    await page.screenshot({ path: target_, type: 'jpeg', quality: QUALITY, clip: { x: 0, y: 0, width, height } });
    const bytes = fs.statSync(target_).size;
    console.log(
      `media/screenshots/${target} ${width}×${height} ${bytes} bytes${bytes > MAX_BYTES ? ` — over ${MAX_BYTES}: crop it tighter` : ''}`,
    );
    if (bytes > MAX_BYTES) process.exitCode = 1;
  }
} finally {
  await browser.close();
}
