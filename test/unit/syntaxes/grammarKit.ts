// Loads our TextMate grammars (and VS Code's Markdown grammar they inject into) into
// vscode-textmate with the real Oniguruma wasm, and answers "which scopes does this piece
// of the line get" — the equivalent of vscode-tmgrammar-test, inside mocha.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';

const repoRoot = path.resolve(__dirname, '..', '..', '..');

/** Grammar files by scope name: ours from syntaxes/, Markdown from the fixture. */
const grammarFiles: Record<string, string> = {
  'text.html.markdown': path.join(__dirname, 'fixtures', 'markdown.tmLanguage.json'),
  'ralph-backlog.markdown.injection': path.join(repoRoot, 'syntaxes', 'ralph-backlog.injection.tmLanguage.json'),
  'text.ralph-log': path.join(repoRoot, 'syntaxes', 'ralph-log.tmLanguage.json'),
};

/** What package.json's contributes.grammars[].injectTo says, as the registry sees it. */
const injections: Record<string, string[]> = {
  'text.html.markdown': ['ralph-backlog.markdown.injection'],
};

export interface Token {
  readonly text: string;
  readonly scopes: readonly string[];
}

let onigReady: Promise<void> | undefined;

function loadOniguruma(): Promise<void> {
  // loadWASM may run only once per process.
  onigReady ??= (async () => {
    const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  })();
  return onigReady;
}

let registry: textmate.Registry | undefined;

function getRegistry(): textmate.Registry {
  registry ??= new textmate.Registry({
    onigLib: loadOniguruma().then(() => ({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    })),
    loadGrammar: async (scopeName: string): Promise<textmate.IRawGrammar | null> => {
      const file = grammarFiles[scopeName];
      // Grammars the Markdown one embeds (fenced code languages) are not needed here.
      if (file === undefined) return null;
      return textmate.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
    getInjections: (scopeName: string): string[] => injections[scopeName] ?? [],
  });
  return registry;
}

/** Tokenizes a whole document (state carried line to line, as the editor does). */
export async function tokenize(scopeName: string, text: string): Promise<Token[][]> {
  const grammar = await getRegistry().loadGrammar(scopeName);
  if (grammar === null) throw new Error(`grammar ${scopeName} not found`);
  let state = textmate.INITIAL;
  const lines: Token[][] = [];
  for (const line of text.split('\n')) {
    const result = grammar.tokenizeLine(line, state);
    lines.push(
      result.tokens.map((t) => ({ text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes })),
    );
    state = result.ruleStack;
  }
  return lines;
}

/**
 * The scopes of every token that overlaps the `nth` occurrence of `fragment` in the line,
 * merged. Fails loudly when the fragment is absent so a typo in a test cannot pass.
 */
export function scopesOf(tokens: readonly Token[], fragment: string, nth = 0): string[] {
  const line = tokens.map((t) => t.text).join('');
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = line.indexOf(fragment, at + 1);
    if (at < 0) throw new Error(`"${fragment}" (occurrence ${nth}) not in line: ${line}`);
  }
  const end = at + fragment.length;
  const out = new Set<string>();
  let pos = 0;
  for (const t of tokens) {
    const tEnd = pos + t.text.length;
    if (tEnd > at && pos < end) for (const s of t.scopes) out.add(s);
    pos = tEnd;
  }
  return [...out];
}

/** Every scope on the line that one of our grammars' rules produced (root scopes aside). */
export function ralphScopes(tokens: readonly Token[]): string[] {
  const out = new Set<string>();
  for (const t of tokens) {
    for (const s of t.scopes) if (s !== 'text.ralph-log' && /\.ralph-(backlog|log)$/.test(s)) out.add(s);
  }
  return [...out];
}

/** A readable dump for failure messages. */
export function dump(tokens: readonly Token[]): string {
  return tokens.map((t) => `${JSON.stringify(t.text)} ${t.scopes.join(' ')}`).join('\n');
}
