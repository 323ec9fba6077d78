// One copy of esbuild's CommonJS interop helpers for all the node chunks of a production build.
//
// esbuild's CommonJS output starts every file with its own copy of the same ten helpers
// (__defProp, __copyProps, __toESM, __toCommonJS, …): about 470 bytes per chunk, some 19 KB of
// the .vsix's 1,000,000-byte budget over its ~95 chunks. After the build, each file whose
// opening `var` statements are exactly those helpers (under the names the minifier gave them
// there) has them replaced by one destructuring require of dist/interop.js, which defines each
// helper from the same template the file's copy was matched against: the code is the same
// code, only once. A file whose opening differs in any way is left as esbuild wrote it, and
// the build says how many files it rewrote.
const fs = require('node:fs');
const path = require('node:path');

/**
 * The helpers, as esbuild 0.28 writes them minified: `@role` is another helper, `$n` the
 * n-th other identifier (parameters, locals) in order of first appearance.
 */
const TEMPLATES = {
  create: 'Object.create',
  defProp: 'Object.defineProperty',
  getOwnPropDesc: 'Object.getOwnPropertyDescriptor',
  getOwnPropNames: 'Object.getOwnPropertyNames',
  getProtoOf: 'Object.getPrototypeOf',
  hasOwnProp: 'Object.prototype.hasOwnProperty',
  exportAll: '($0,$1)=>{for(var $2 in $1)@defProp($0,$2,{get:$1[$2],enumerable:!0})}',
  copyProps:
    '($0,$1,$2,$3)=>{if($1&&typeof $1=="object"||typeof $1=="function")for(let $4 of @getOwnPropNames($1))!@hasOwnProp.call($0,$4)&&$4!==$2&&@defProp($0,$4,{get:()=>$1[$4],enumerable:!($3=@getOwnPropDesc($1,$4))||$3.enumerable});return $0}',
  toESM:
    '($0,$1,$2)=>($2=$0!=null?@create(@getProtoOf($0)):{},@copyProps($1||!$0||!$0.__esModule?@defProp($2,"default",{value:$0,enumerable:!0}):$2,$0))',
  toCommonJS: '$0=>@copyProps(@defProp({},"__esModule",{value:!0}),$0)',
};

/** Words a template keeps as they are: globals, keywords, property names. */
const KEPT = new Set([
  'Object',
  'create',
  'defineProperty',
  'getOwnPropertyDescriptor',
  'getOwnPropertyNames',
  'getPrototypeOf',
  'prototype',
  'hasOwnProperty',
  'for',
  'var',
  'let',
  'in',
  'of',
  'if',
  'typeof',
  'return',
  'null',
  'get',
  'enumerable',
  'call',
  'value',
  '__esModule',
  'default',
]);

/** `expr` with string literals kept, helper names as `@role` and every other identifier as `$n`. */
function canonical(expr, roles) {
  const names = new Map();
  let out = '';
  for (let i = 0; i < expr.length;) {
    const c = expr[i];
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === '\\' ? 2 : 1;
      out += expr.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const id = /^[A-Za-z_$][\w$]*/.exec(expr.slice(i));
    if (id && !/[\w$]/.test(expr[i - 1] ?? '')) {
      const w = id[0];
      if (roles.has(w)) out += `@${roles.get(w)}`;
      else if (KEPT.has(w) && !names.has(w)) out += w;
      else {
        if (!names.has(w)) names.set(w, `$${names.size}`);
        out += names.get(w);
      }
      i += w.length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** The declarators of the `var` statement at `at` (`var a=…,b=…;`) and where it ends, or undefined. */
function varStatement(text, at) {
  if (!text.startsWith('var ', at)) return undefined;
  const decls = [];
  let depth = 0;
  let start = at + 4;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      i = j;
    } else if (c === '(' || c === '{' || c === '[') depth++;
    else if (c === ')' || c === '}' || c === ']') depth--;
    else if (depth === 0 && (c === ',' || c === ';')) {
      const d = text.slice(start, i);
      const eq = d.indexOf('=');
      if (eq < 0) return undefined;
      decls.push({ name: d.slice(0, eq), expr: d.slice(eq + 1) });
      start = i + 1;
      if (c === ';') return { decls, end: i + 1 };
    }
  }
  return undefined;
}

/**
 * `source` with its opening helper statements replaced by a require of `interopPath`; the
 * source unchanged when it does not open with them.
 */
function shareInterop(source, interopPath = './interop.js') {
  const shebang = source.startsWith('#!') ? source.slice(0, source.indexOf('\n') + 1) : '';
  const strict = source.startsWith('"use strict";', shebang.length) ? '"use strict";' : '';
  const roles = new Map();
  let at = shebang.length + strict.length;
  for (;;) {
    const st = varStatement(source, at);
    if (st === undefined) break;
    const found = [];
    for (const { name, expr } of st.decls) {
      const c = canonical(expr, roles);
      const role = Object.keys(TEMPLATES).find((r) => TEMPLATES[r] === c);
      if (role === undefined || !/^[A-Za-z_$][\w$]*$/.test(name)) break;
      found.push([name, role]);
    }
    if (found.length !== st.decls.length) break;
    for (const [name, role] of found) roles.set(name, role);
    at = st.end;
  }
  if (roles.size === 0) return source;
  const bindings = [...roles].map(([name, role]) => (name === role ? name : `${role}:${name}`)).join(',');
  return `${shebang}${strict}var{${bindings}}=require(${JSON.stringify(interopPath)});${source.slice(at)}`;
}

/** dist/interop.js: each helper defined once from its template. */
function interopModule() {
  const params = ['a', 'b', 'c', 'd', 'e'];
  const lines = Object.entries(TEMPLATES).map(([role, t]) => {
    const body = t.replace(/@(\w+)/g, '$1').replace(/\$(\d)/g, (_, n) => params[Number(n)]);
    return `exports.${role}=${body};`;
  });
  // The helpers call each other through these names.
  const locals = Object.keys(TEMPLATES)
    .map((role) => `${role}=exports.${role}`)
    .join(',');
  return `"use strict";\n// esbuild's CommonJS interop helpers, once for every chunk (scripts/sharedInterop.cjs).\n${lines.join('\n')}\nvar ${locals};\n`;
}

/**
 * Rewrites every .js file directly in `dir` (but interop.js) to share the helpers, and writes
 * interop.js; returns how many files were rewritten and how many bytes that saved.
 */
function shareInteropIn(dir) {
  let files = 0;
  let saved = 0;
  for (const f of fs.readdirSync(dir)) {
    if (!f.endsWith('.js') || f === 'interop.js') continue;
    const file = path.join(dir, f);
    const text = fs.readFileSync(file, 'utf8');
    const shared = shareInterop(text);
    if (shared === text) continue;
    fs.writeFileSync(file, shared);
    files++;
    saved += text.length - shared.length;
  }
  fs.writeFileSync(path.join(dir, 'interop.js'), interopModule());
  return { files, saved };
}

module.exports = { shareInterop, shareInteropIn, interopModule, TEMPLATES };
