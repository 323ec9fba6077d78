// The monitor's icons: codicons (@vscode/codicons, CC-BY-4.0) drawn as inline SVG in the
// text's colour. The build reads each icon's path data out of the package's file for it
// (`codicon-paths:` in esbuild.js), so the page carries the few icons it shows instead of
// the whole icon font (126 KB) and its stylesheet (34 KB). An icon not listed here does not
// type-check, so a new one cannot silently render as nothing.
import check from 'codicon-paths:check';
import checklist from 'codicon-paths:checklist';
import circleLarge from 'codicon-paths:circle-large';
import close from 'codicon-paths:close';
import creditCard from 'codicon-paths:credit-card';
import debugPause from 'codicon-paths:debug-pause';
import diff from 'codicon-paths:diff';
import gitMerge from 'codicon-paths:git-merge';
import gitPullRequest from 'codicon-paths:git-pull-request';
import history from 'codicon-paths:history';
import info from 'codicon-paths:info';
import pulse from 'codicon-paths:pulse';
import settingsGear from 'codicon-paths:settings-gear';
import warning from 'codicon-paths:warning';

const ICONS = {
  check,
  checklist,
  'circle-large': circleLarge,
  close,
  'credit-card': creditCard,
  'debug-pause': debugPause,
  diff,
  'git-merge': gitMerge,
  'git-pull-request': gitPullRequest,
  history,
  info,
  pulse,
  'settings-gear': settingsGear,
  warning,
} as const;

export type IconName = keyof typeof ICONS;

const SVG = 'http://www.w3.org/2000/svg';

/**
 * A 16×16 icon in `currentColor`. Decorative (hidden from screen readers) unless it has a
 * label, when it is an image with that name.
 */
export function icon(name: IconName, label?: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', `icon icon-${name}`);
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '16');
  svg.setAttribute('height', '16');
  svg.setAttribute('fill', 'currentColor');
  if (label === undefined) svg.setAttribute('aria-hidden', 'true');
  else {
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', label);
  }
  for (const p of ICONS[name]) {
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', p.d);
    if (p.fillRule !== undefined) {
      path.setAttribute('fill-rule', p.fillRule);
      path.setAttribute('clip-rule', p.fillRule);
    }
    svg.append(path);
  }
  return svg;
}
