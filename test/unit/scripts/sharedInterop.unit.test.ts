// scripts/sharedInterop.cjs: esbuild's per-chunk CommonJS helpers replaced by one shared copy.
// Real esbuild output, minified as the production build makes it, is loaded both ways: the
// rewritten files must export exactly what esbuild's own did, and a file that does not open
// with exactly those helpers is left as it is.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { shareInterop, shareInteropIn, TEMPLATES } = require('../../../scripts/sharedInterop.cjs') as {
  shareInterop: (source: string) => string;
  shareInteropIn: (dir: string) => { files: number; saved: number };
  TEMPLATES: Record<string, string>;
};

/** The chunks' shape: ESM with splitting, then each file to minified CommonJS, as esbuild.js does. */
async function chunks(dir: string, sources: Record<string, string>): Promise<string[]> {
  const src = path.join(dir, 'src');
  const esm = path.join(dir, 'esm');
  const out = path.join(dir, 'out');
  fs.mkdirSync(src, { recursive: true });
  for (const [name, text] of Object.entries(sources)) fs.writeFileSync(path.join(src, name), text);
  await build({
    entryPoints: Object.keys(sources)
      .filter((n) => n.startsWith('entry'))
      .map((n) => path.join(src, n)),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    outdir: esm,
    chunkNames: 'chunk-[hash]',
    minify: true,
    logLevel: 'silent',
  });
  const files = fs.readdirSync(esm).filter((f) => f.endsWith('.js'));
  await build({
    entryPoints: files.map((f) => path.join(esm, f)),
    outdir: out,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    supported: { 'dynamic-import': false },
    minify: true,
    logLevel: 'silent',
  });
  return files;
}

/** What a module exports, as plain data: its keys, what they hold, and the default's keys. */
function exported(file: string): unknown {
  delete require.cache[file];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const m = require(file) as Record<string, unknown>;
  const show = (v: unknown): unknown => {
    if (typeof v !== 'function') return v;
    const f = v as (() => unknown) & { x?: unknown };
    return /^class\b/.test(Function.prototype.toString.call(f)) ? `class:${f.name}:${String(f.x)}` : `fn:${f.name}:${String(f())}`;
  };
  return Object.keys(m)
    .sort()
    .map((k) => [k, show(m[k]), Object.getOwnPropertyDescriptor(m, k)?.enumerable]);
}

describe('scripts/sharedInterop.cjs: one copy of the CommonJS interop helpers', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-interop-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given chunks esbuild wrote (named exports, a shared chunk, node built-ins, a CommonJS dependency), then they export the same after the rewrite', async () => {
    const files = await chunks(dir, {
      'entryA.ts':
        "import * as fs from 'node:fs';\nimport { shared, Klass } from './shared';\nimport cjs from './dep.cjs';\nexport const a = (): string => shared() + typeof fs.readFileSync + cjs.v;\nexport default Klass;\n",
      'entryB.ts':
        "import * as path from 'node:path';\nimport { shared } from './shared';\nexport function b(): string { return shared() + path.sep; }\nexport const lazy = (): Promise<unknown> => import('./late');\n",
      'shared.ts': "export const shared = (): string => 'shared';\nexport class Klass { static x = 1; }\n",
      'late.ts': "export const late = (): string => 'late';\n",
      'dep.cjs': 'module.exports = { v: 42 };\n',
    });
    const out = path.join(dir, 'out');
    const before = new Map(files.map((f) => [f, exported(path.join(out, f))]));
    const r = shareInteropIn(out);
    assert.ok(r.files >= 3 && r.saved > 0, JSON.stringify(r));
    for (const f of files) {
      const text = fs.readFileSync(path.join(out, f), 'utf8');
      if (/\bObject\.defineProperty\b/.test(text.slice(0, 200)))
        assert.fail(`${f} still opens with its own helpers: ${text.slice(0, 200)}`);
      assert.deepEqual(exported(path.join(out, f)), before.get(f), f);
    }
  });

  it('given a file whose opening is not exactly the helpers, then it is left as it is', () => {
    // The first statement is esbuild's defProp; the second is not its __export (enumerable false).
    const own = '"use strict";var a=Object.defineProperty;var b=(c,d)=>{for(var e in d)a(c,e,{get:d[e],enumerable:!1})};module.exports={};';
    assert.equal(
      shareInterop(own),
      '"use strict";var{defProp:a}=require("./interop.js");var b=(c,d)=>{for(var e in d)a(c,e,{get:d[e],enumerable:!1})};module.exports={};',
    );
    const none = '"use strict";var x=1;module.exports=x;';
    assert.equal(shareInterop(none), none);
    assert.equal(shareInterop('module.exports=1;'), 'module.exports=1;');
  });

  it('given the templates, then each one is a helper esbuild writes (the interop module defines them all)', () => {
    assert.deepEqual(Object.keys(TEMPLATES).sort(), [
      'copyProps',
      'create',
      'defProp',
      'exportAll',
      'getOwnPropDesc',
      'getOwnPropNames',
      'getProtoOf',
      'hasOwnProp',
      'toCommonJS',
      'toESM',
    ]);
  });
});
