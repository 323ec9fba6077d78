import type { Plugin } from 'esbuild';

/** Resolves `codicon-paths:<name>` to that codicon's path data (see esbuildPlugins.cjs). */
export declare const codiconPaths: Plugin;
/** One zod, English only, ESM build (see esbuildPlugins.cjs). */
export declare const oneEnglishZod: Plugin;
