// `true` inside the esbuild bundles of dist/ (esbuild.js defines it), undeclared when the
// sources run directly (mocha through tsx, scripts). A lazy-loading seam tests it with
// `typeof` so that the bundle splits at a dynamic import() (its own chunk, loaded on first
// use) while the sources keep a plain require(): tsx's CommonJS hook cannot import() a .ts file.
declare const RALPH_BUNDLE: true | undefined;
