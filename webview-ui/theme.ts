// Theme colours, read only from the `--vscode-*` variables VS Code sets on the page. They are
// re-read whenever the theme changes (VS Code swaps the body class and the variables).

export interface ThemeColors {
  readonly foreground: string;
  readonly muted: string;
  readonly grid: string;
  readonly background: string;
  readonly fontFamily: string;
  readonly blue: string;
  readonly green: string;
  readonly yellow: string;
  readonly orange: string;
  readonly red: string;
  readonly purple: string;
  readonly lines: string;
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  return style.getPropertyValue(name).trim() || fallback;
}

export function readTheme(): ThemeColors {
  const s = getComputedStyle(document.documentElement);
  const fg = cssVar(s, '--vscode-foreground', '#cccccc');
  return {
    foreground: cssVar(s, '--vscode-charts-foreground', fg),
    muted: cssVar(s, '--vscode-descriptionForeground', fg),
    grid: cssVar(s, '--vscode-editorWidget-border', cssVar(s, '--vscode-panel-border', 'rgba(128,128,128,0.35)')),
    background: cssVar(s, '--vscode-editor-background', '#1e1e1e'),
    fontFamily: cssVar(s, '--vscode-font-family', 'system-ui, sans-serif'),
    blue: cssVar(s, '--vscode-charts-blue', '#3794ff'),
    green: cssVar(s, '--vscode-charts-green', '#89d185'),
    yellow: cssVar(s, '--vscode-charts-yellow', '#cca700'),
    orange: cssVar(s, '--vscode-charts-orange', '#d18616'),
    red: cssVar(s, '--vscode-charts-red', '#f14c4c'),
    purple: cssVar(s, '--vscode-charts-purple', '#b180d7'),
    lines: cssVar(s, '--vscode-charts-lines', 'rgba(128,128,128,0.5)'),
  };
}

/** The colour with alpha `a` (hex #rgb/#rrggbb/#rrggbbaa or rgb()/rgba()); others unchanged. */
export function withAlpha(color: string, a: number): string {
  const c = color.trim();
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i.exec(c)?.[1];
  if (hex) {
    const full = hex.length === 3 ? [...hex].map((x) => x + x).join('') : hex.slice(0, 6);
    const n = Number.parseInt(full, 16);
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
  }
  const rgb = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)/i.exec(c);
  if (rgb) return `rgba(${rgb[1]}, ${rgb[2]}, ${rgb[3]}, ${a})`;
  return c;
}

/** Calls `onChange` when VS Code switches theme (body class or the root's variables change). */
export function observeTheme(onChange: () => void): MutationObserver {
  let pending = false;
  const mo = new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      onChange();
    });
  });
  mo.observe(document.body, { attributes: true, attributeFilter: ['class', 'data-vscode-theme-id'] });
  mo.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  return mo;
}
