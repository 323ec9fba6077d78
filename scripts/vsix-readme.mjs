#!/usr/bin/env node
// Writes the README that ships inside the .vsix (dist/vsix/README.md): README.md with each
// picture under media/ inlined as a data: URI. VS Code's Extensions view renders an
// extension's README under a Content-Security-Policy of `img-src https: data:`, so a
// relative link to a file in the extension never loads there, and an https link needs the
// network; inlined, the pictures show offline. The repository's README keeps its file links
// (GitHub renders those). vsce takes this file with --readme-path.
//
// Inlined pictures cost the .vsix about their own size each (base64 deflates back to roughly
// the JPEG), and the package has a 1,000,000-byte budget (scripts/vsixSize.mjs): only the
// pictures in VSIX_PICTURES are inlined; every other one becomes a line that says where it is.
//
// It writes the .vsix's changelog too (dist/vsix/CHANGELOG.md, vsce --changelog-path): the
// first sentence of each section's newest entries under its headings, how many more there
// are, and where the whole entries are. The full file,
// with each change's measurements and tests, is for the repository; deflated it would take a
// fiftieth of the package's budget. Sections about the project's own tests and CI are left
// out: the Extensions view's changelog is read by users of the extension.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TYPES = { '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png' };

/** The README pictures the Extensions view shows: what a user sees first and most. */
export const VSIX_PICTURES = ['media/screenshots/monitor.jpg', 'media/screenshots/first-run-error.jpg'];

export function inlinePictures(markdown, baseDir, keep = VSIX_PICTURES) {
  let count = 0;
  const text = markdown.replace(/!\[([^\]]*)\]\((media\/[^)\s]+)\)/g, (whole, alt, rel) => {
    const type = TYPES[path.extname(rel).toLowerCase()];
    const file = path.join(baseDir, rel);
    if (type === undefined) throw new Error(`README.md: ${rel}: only JPEG and PNG pictures can be inlined`);
    if (!fs.existsSync(file)) throw new Error(`README.md: ${rel} does not exist`);
    if (!keep.includes(rel)) return `*(Picture: ${alt}. It is in the project's README, \`${rel}\`.)*`;
    count++;
    return `![${alt}](data:${type};base64,${fs.readFileSync(file).toString('base64')})`;
  });
  return { text, count };
}

/**
 * README sections for whoever runs Ralph's servers rather than VS Code (PostgreSQL, roles,
 * systemd, Kubernetes): the Extensions view shows their first paragraph and where the rest is,
 * which keeps the package under its budget.
 */
export const VSIX_SHORT_SECTIONS = ['Running Ralph for a team'];

/** `markdown` with each `## ` section named in `short` cut to its first paragraph and where the rest is. */
export function shortenSections(markdown, short = VSIX_SHORT_SECTIONS) {
  const out = [];
  let state = 'keep';
  let title = '';
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) {
      title = line.slice(3).trim();
      state = short.includes(title) ? 'first' : 'keep';
      out.push(line);
      continue;
    }
    if (state === 'skip') continue;
    if (state === 'first' && line.trim() === '' && !(out.at(-1) ?? '').startsWith('## ')) {
      out.push('', `*(The rest of "${title}" is in the project's README.)*`, '');
      state = 'skip';
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** Characters of an entry's first sentence the condensed changelog keeps. */
export const SENTENCE_LIMIT = 120;

/** Headings of sections about the project's own tests and CI, which users of the extension do not need. */
const INTERNAL_SECTION = /^#{2,6} Tests and CI\s*$/;

/** The first sentence of a text (up to its first '.' before a space), cut at a word past SENTENCE_LIMIT characters. */
function firstSentence(text) {
  const m = /^(.+?\.)(\s|$)/.exec(text);
  const s = m ? m[1] : text;
  return s.length > SENTENCE_LIMIT ? `${s.slice(0, s.lastIndexOf(' ', SENTENCE_LIMIT - 1))} …` : s;
}

/** Entries of one section the condensed changelog keeps (the newest come first); the rest are counted. */
export const ENTRY_LIMIT = 6;

/**
 * The changelog's headings and the first sentence of each section's first ENTRY_LIMIT
 * top-level entries, with how many more there are; nested entries and the sections about
 * tests and CI left out.
 */
export function condenseChangelog(markdown) {
  const out = [];
  let entry;
  let skipping = false;
  let kept = 0;
  let more = 0;
  const flush = () => {
    if (entry !== undefined) {
      if (kept < ENTRY_LIMIT) out.push(`- ${firstSentence(entry)}`);
      else more++;
      kept++;
    }
    entry = undefined;
  };
  const closeSection = () => {
    flush();
    if (more > 0) out.push(`- … and ${more} more`);
    kept = 0;
    more = 0;
  };
  for (const line of markdown.split('\n')) {
    if (/^#{1,6} /.test(line)) {
      closeSection();
      skipping = INTERNAL_SECTION.test(line);
      if (skipping) continue;
      if (out.length > 0 && out.at(-1) !== '') out.push('');
      out.push(line, '');
    } else if (skipping) {
      continue;
    } else if (line.startsWith('- ')) {
      flush();
      entry = line.slice(2).trim();
    } else if (entry !== undefined && /^ {2}\S/.test(line)) {
      entry += ` ${line.trim()}`;
    } else if (line.trim() !== '' && !/^\s+[-*] /.test(line) && entry === undefined && out.length > 0 && out.at(-1) === '') {
      out.push(firstSentence(line.trim()));
    } else if (!/^\s/.test(line)) {
      flush();
    }
  }
  closeSection();
  out.push('', "Each entry in full, with what was measured and how it is tested: CHANGELOG.md in the project's repository.", '');
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { text, count } = inlinePictures(shortenSections(fs.readFileSync(path.join(root, 'README.md'), 'utf8')), root);
  const out = path.join(root, 'dist', 'vsix', 'README.md');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  console.log(`dist/vsix/README.md: ${count} picture(s) inlined, ${fs.statSync(out).size} bytes`);
  const changelog = path.join(root, 'dist', 'vsix', 'CHANGELOG.md');
  fs.writeFileSync(changelog, condenseChangelog(fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8')));
  console.log(
    `dist/vsix/CHANGELOG.md: ${fs.statSync(changelog).size} bytes (CHANGELOG.md: ${fs.statSync(path.join(root, 'CHANGELOG.md')).size})`,
  );
}
