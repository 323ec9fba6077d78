// `codicon-paths:<name>` is resolved by the build (esbuild.js): the path data of one codicon,
// read out of @vscode/codicons' own SVG file for that icon.
declare module 'codicon-paths:*' {
  interface CodiconPath {
    readonly d: string;
    readonly fillRule?: 'evenodd' | 'nonzero';
  }
  const paths: readonly CodiconPath[];
  export default paths;
}
