// The esbuild plugins shared by esbuild.js and the browser test's build of the same monitor
// bundle, so both build it alike.
const fs = require('node:fs');
const path = require('node:path');

const NAMESPACE = 'codicon-paths';

/** @param {string} svg @param {string} file */
function pathsOf(svg, file) {
  const elements = [...svg.matchAll(/<([a-zA-Z][\w-]*)\b([^>]*)>/g)];
  const paths = [];
  for (const [, tag, attrs] of elements) {
    if (tag === 'svg') continue;
    if (tag !== 'path') throw new Error(`${file}: <${tag}> is not supported, only <path>`);
    const attr = (name) => /** @type {string | undefined} */ (new RegExp(`\\s${name}="([^"]*)"`).exec(attrs)?.[1]);
    const d = attr('d');
    if (d === undefined) throw new Error(`${file}: a <path> without d`);
    const fillRule = attr('fill-rule');
    paths.push(fillRule === undefined ? { d } : { d, fillRule });
  }
  if (paths.length === 0) throw new Error(`${file}: no <path>`);
  return paths;
}

/**
 * `import paths from 'codicon-paths:<name>'` gives the path data of one codicon, read out of
 * @vscode/codicons' SVG file for that icon (webview-ui/icons.ts draws them). An icon file
 * with anything but <path> elements fails the build rather than drawing half an icon.
 * @type {import('esbuild').Plugin}
 */
const codiconPaths = {
  name: NAMESPACE,
  setup(build) {
    const icons = path.join(path.dirname(require.resolve('@vscode/codicons/package.json')), 'src', 'icons');
    build.onResolve({ filter: /^codicon-paths:/ }, (args) => {
      const name = args.path.slice(NAMESPACE.length + 1);
      if (!/^[a-z0-9-]+$/.test(name)) return { errors: [{ text: `not a codicon name: ${name}` }] };
      return { path: path.join(icons, `${name}.svg`), namespace: NAMESPACE };
    });
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
      const svg = fs.readFileSync(args.path, 'utf8');
      return { contents: JSON.stringify(pathsOf(svg, args.path)), loader: 'json', watchFiles: [args.path] };
    });
  },
};

/**
 * One zod, English only. zod's namespace object re-exports every locale (about 265 KB
 * minified, more than the rest of zod) although only English messages are ever shown, and a
 * require('zod') (the CommonJS test kit the demo uses) would add zod's CommonJS build beside
 * the ESM one. So `locales` keeps only `en`, and every import of zod resolves to its ESM build.
 * @type {import('esbuild').Plugin}
 */
const oneEnglishZod = {
  name: 'one-english-zod',
  setup(build) {
    build.onResolve({ filter: /^zod(\/.*)?$/ }, (args) => {
      if (args.kind !== 'require-call' || args.pluginData === oneEnglishZod) return undefined;
      return build.resolve(args.path, { kind: 'import-statement', resolveDir: args.resolveDir, pluginData: oneEnglishZod });
    });
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";\n',
      resolveDir: path.dirname(args.path),
    }));
  },
};

module.exports = { codiconPaths, oneEnglishZod };
