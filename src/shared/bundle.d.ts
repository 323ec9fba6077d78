// `true` inside the esbuild bundles of dist/ (esbuild.js defines it), undeclared when the
// sources run directly (mocha through tsx, scripts). A lazy-loading seam tests it with
// `typeof` so that the bundle splits at a dynamic import() (its own chunk, loaded on first
// use) while the sources keep a plain require(): tsx's CommonJS hook cannot import() a .ts file.
declare const RALPH_BUNDLE: true | undefined;

// The build the bundle came from (esbuild.js: the package version and when it was built),
// undeclared under the sources. What one build kept for itself (the status image) is not
// trusted by another, whose projections or facts may differ.
declare const RALPH_BUILD: string | undefined;
