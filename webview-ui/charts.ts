// The three charts no peer shows: cost & tokens over time, the cumulative flow of task
// states, and per-phase durations. Chart.js with only the pieces used registered; colours
// from the theme, re-applied on theme change; resized when their tab becomes visible
// (a chart created or updated while hidden has size 0).
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import type { ChartConfiguration, ChartDataset } from 'chart.js';
import type { MonitorSeries, TaskStatus } from '../src/protocol/monitor.js';
import { bucketLabel, compact, duration, usd, usdTick } from './format.js';
import type { ThemeColors } from './theme.js';
import { readTheme, withAlpha } from './theme.js';

Chart.register(LineController, LineElement, PointElement, BarController, BarElement, CategoryScale, LinearScale, Filler, Legend, Tooltip);

/** Bottom to top: finished work at the base, as cumulative flow diagrams read. */
const FLOW_ORDER: readonly TaskStatus[] = ['done', 'proposed', 'claimed', 'deferred', 'blocked', 'pending'];

function statusColor(t: ThemeColors, s: TaskStatus): string {
  switch (s) {
    case 'done':
      return t.green;
    case 'proposed':
      return t.purple;
    case 'claimed':
      return t.blue;
    case 'deferred':
      return t.yellow;
    case 'blocked':
      return t.red;
    case 'pending':
    case 'dropped':
      return t.lines;
  }
}

function spansDays(points: readonly { t: string }[]): boolean {
  const a = points[0]?.t;
  const b = points[points.length - 1]?.t;
  return !!a && !!b && Date.parse(b) - Date.parse(a) >= 86_400_000;
}

function labels(points: readonly { t: string }[], bucketSec: number): string[] {
  const days = spansDays(points);
  return points.map((p) => bucketLabel(p.t, bucketSec, days));
}

function bucketName(sec: number): string {
  if (sec % 86_400 === 0) return sec === 86_400 ? 'day' : `${sec / 86_400} days`;
  if (sec % 3600 === 0) return sec === 3600 ? 'hour' : `${sec / 3600} h`;
  if (sec % 60 === 0) return sec === 60 ? 'minute' : `${sec / 60} min`;
  return sec === 1 ? 'second' : `${sec} s`;
}

/** Round tick steps for durations: 10 s, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h. */
function niceStep(maxSec: number): number {
  for (const step of [10, 30, 60, 300, 600, 1800, 3600]) if (maxSec / step <= 6) return step;
  return 7200;
}

type Kind = 'cost' | 'flow' | 'phases';

export class MonitorCharts {
  private readonly charts = new Map<Kind, Chart>();
  /** What each chart's options were built for (bucket width): when it changes, the chart is rebuilt. */
  private readonly shapes = new Map<Kind, string>();
  private theme: ThemeColors = readTheme();
  private series: MonitorSeries | undefined;

  constructor(private readonly canvases: Record<Kind, HTMLCanvasElement>) {}

  /** Latest data; charts are (re)built only when their canvas can be measured. */
  update(series: MonitorSeries): void {
    this.series = series;
    this.render();
  }

  /** Call when the charts' tab is shown or the window resizes. */
  resize(): void {
    this.render();
    for (const c of this.charts.values()) c.resize();
  }

  /** Call when the theme changed: colours and fonts are baked into the chart options. */
  retheme(): void {
    this.theme = readTheme();
    for (const c of this.charts.values()) c.destroy();
    this.charts.clear();
    this.shapes.clear();
    this.render();
  }

  dispose(): void {
    for (const c of this.charts.values()) c.destroy();
    this.charts.clear();
  }

  private visible(canvas: HTMLCanvasElement): boolean {
    const box = canvas.parentElement?.getBoundingClientRect();
    return !!box && box.width > 0 && box.height > 0;
  }

  private render(): void {
    const s = this.series;
    if (!s) return;
    this.apply('cost', s.cost.length > 0, () => this.costConfig(s), this.costSummary(s), String(s.costBucketSec));
    this.apply('flow', s.flow.length > 0, () => this.flowConfig(s), this.flowSummary(s), String(s.flowBucketSec));
    const maxSec = Math.max(0, ...s.phases.map((p) => p.maxSec));
    this.apply('phases', s.phases.length > 0, () => this.phasesConfig(s), this.phasesSummary(s), String(niceStep(maxSec)));
  }

  private apply(kind: Kind, hasData: boolean, build: () => ChartConfiguration, summary: string, shape: string): void {
    const canvas = this.canvases[kind];
    canvas.setAttribute('aria-label', summary);
    canvas.textContent = summary; // fallback content for assistive tech
    // No data: a sentence instead of empty axes with made-up ticks.
    const area = canvas.parentElement;
    area?.classList.toggle('no-data', !hasData);
    if (area) {
      const reason = summary.replace(/^[^:]*:\s*/, '');
      area.dataset['empty'] = reason.charAt(0).toUpperCase() + reason.slice(1);
    }
    if (!hasData) {
      this.charts.get(kind)?.destroy();
      this.charts.delete(kind);
      return;
    }
    if (!this.visible(canvas)) return;
    const config = build();
    const existing = this.charts.get(kind);
    if (existing && this.shapes.get(kind) === shape) {
      existing.data = config.data;
      existing.update('none');
      return;
    }
    // Axis titles, tick steps and formatters depend on the bucket width: rebuild for a new one.
    existing?.destroy();
    this.shapes.set(kind, shape);
    Chart.defaults.font.family = this.theme.fontFamily;
    Chart.defaults.font.size = 11;
    Chart.defaults.color = this.theme.foreground;
    Chart.defaults.borderColor = this.theme.grid;
    this.charts.set(kind, new Chart(canvas, config));
  }

  private baseOptions(): NonNullable<ChartConfiguration['options']> {
    const t = this.theme;
    return {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      interaction: { mode: 'index', intersect: false },
      plugins: {
        legend: { position: 'bottom', labels: { boxWidth: 10, boxHeight: 10, padding: 10, color: t.foreground } },
        tooltip: {
          backgroundColor: withAlpha(t.background, 0.95),
          titleColor: t.foreground,
          bodyColor: t.foreground,
          borderColor: t.grid,
          borderWidth: 1,
          padding: 8,
          cornerRadius: 2,
          boxPadding: 4,
        },
      },
    };
  }

  private axis(title?: string): Record<string, unknown> {
    const t = this.theme;
    return {
      grid: { color: withAlpha(t.grid, 0.6), drawTicks: false },
      border: { display: false },
      ticks: { color: t.muted, padding: 6, maxRotation: 0, autoSkipPadding: 16 },
      title: title ? { display: true, text: title, color: t.muted, font: { size: 11 } } : { display: false },
    };
  }

  private costConfig(s: MonitorSeries): ChartConfiguration {
    const t = this.theme;
    // Tokens per bucket as steps that change at the bucket edges, like the cost bars under
    // them: a smoothed line would draw a ramp between buckets that never happened.
    const tokens = (label: string, data: number[], color: string): ChartDataset<'line'> => ({
      type: 'line',
      label,
      data,
      yAxisID: 'tokens',
      borderColor: color,
      backgroundColor: withAlpha(color, 0.18),
      fill: false,
      borderWidth: 1.5,
      stepped: 'middle',
      pointRadius: s.cost.length === 1 ? 3 : 0,
      pointHoverRadius: 3,
    });
    return {
      type: 'bar',
      data: {
        labels: labels(s.cost, s.costBucketSec),
        datasets: [
          {
            type: 'bar',
            label: 'Cost (USD)',
            data: s.cost.map((p) => p.cost),
            yAxisID: 'cost',
            backgroundColor: withAlpha(t.blue, 0.55),
            borderColor: t.blue,
            borderWidth: 1,
            barPercentage: 1,
            categoryPercentage: 0.9,
            order: 2,
          },
          {
            ...tokens(
              'Output tokens',
              s.cost.map((p) => p.outputTokens),
              t.orange,
            ),
            order: 1,
          },
          {
            ...tokens(
              'Input + cache tokens',
              s.cost.map((p) => p.inputTokens + p.cacheTokens),
              t.purple,
            ),
            order: 0,
          },
        ],
      },
      options: {
        ...this.baseOptions(),
        scales: {
          x: this.axis(),
          cost: {
            ...this.axis(`USD per ${bucketName(s.costBucketSec)}`),
            position: 'left',
            beginAtZero: true,
            ticks: {
              ...(this.axis().ticks as object),
              maxTicksLimit: 6,
              callback: (v: number | string, i: number, ticks: { value: number }[]) =>
                usdTick(Number(v), Math.abs((ticks[1]?.value ?? 0) - (ticks[0]?.value ?? 0))),
            },
          },
          tokens: {
            ...this.axis('tokens'),
            position: 'right',
            beginAtZero: true,
            grid: { display: false },
            ticks: {
              ...(this.axis().ticks as object),
              maxTicksLimit: 6,
              precision: 0,
              callback: (v: number | string) => compact(Number(v)),
            },
          },
        },
      },
    } as ChartConfiguration;
  }

  private flowConfig(s: MonitorSeries): ChartConfiguration {
    const t = this.theme;
    return {
      type: 'line',
      data: {
        labels: labels(s.flow, s.flowBucketSec),
        datasets: FLOW_ORDER.map((status, i) => {
          const color = statusColor(t, status);
          return {
            label: status,
            data: s.flow.map((p) => p.counts[status]),
            borderColor: color,
            backgroundColor: withAlpha(color, status === 'pending' ? 0.22 : 0.5),
            // Stacked areas fill down to the band below, not to zero (no blended overlaps).
            fill: i === 0 ? 'origin' : '-1',
            borderWidth: 1,
            pointRadius: 0,
            pointHoverRadius: 3,
            stepped: false,
            tension: 0,
          };
        }),
      },
      options: {
        ...this.baseOptions(),
        scales: {
          x: this.axis(),
          y: { ...this.axis('tasks'), stacked: true, beginAtZero: true, ticks: { ...(this.axis().ticks as object), precision: 0 } },
        },
      },
    } as ChartConfiguration;
  }

  private phasesConfig(s: MonitorSeries): ChartConfiguration {
    const t = this.theme;
    return {
      type: 'bar',
      data: {
        labels: s.phases.map((p) => p.phase),
        datasets: [
          {
            label: 'Average',
            data: s.phases.map((p) => p.avgSec),
            backgroundColor: withAlpha(t.blue, 0.75),
            borderColor: t.blue,
            borderWidth: 1,
            borderRadius: 2,
            barPercentage: 0.8,
            categoryPercentage: 0.7,
            maxBarThickness: 12,
          },
          {
            label: 'Longest',
            data: s.phases.map((p) => p.maxSec),
            backgroundColor: withAlpha(t.orange, 0.45),
            borderColor: t.orange,
            borderWidth: 1,
            borderRadius: 2,
            barPercentage: 0.8,
            categoryPercentage: 0.7,
            maxBarThickness: 12,
          },
        ],
      },
      options: {
        ...this.baseOptions(),
        indexAxis: 'y',
        interaction: { mode: 'index', intersect: false, axis: 'y' },
        plugins: {
          ...this.baseOptions().plugins,
          tooltip: {
            ...this.baseOptions().plugins?.tooltip,
            callbacks: {
              label: (ctx) => `${ctx.dataset.label ?? ''}: ${duration(Number(ctx.raw))}`,
              afterBody: (items) => {
                const p = s.phases[items[0]?.dataIndex ?? -1];
                return p ? [`${p.invocations} invocations, ${duration(p.totalSec)} in total`] : [];
              },
            },
          },
        },
        scales: {
          x: {
            ...this.axis(),
            beginAtZero: true,
            ticks: {
              ...(this.axis().ticks as object),
              stepSize: niceStep(Math.max(0, ...s.phases.map((p) => p.maxSec))),
              callback: (v: number | string) => duration(Number(v)),
            },
          },
          y: { ...this.axis(), grid: { display: false }, ticks: { ...(this.axis().ticks as object), autoSkip: false } },
        },
      },
    } as ChartConfiguration;
  }

  private costSummary(s: MonitorSeries): string {
    const total = s.cost.reduce((a, p) => a + p.cost, 0);
    const peak = s.cost.reduce((m, p) => (p.cost > m.cost ? p : m), { cost: 0, t: '' });
    return s.cost.length === 0
      ? 'Cost and tokens over time: no invocations recorded yet.'
      : `Cost and tokens over time, per ${bucketName(s.costBucketSec)}: ${usd(total)} in total over ${s.cost.length} buckets, peak ${usd(peak.cost)}.`;
  }

  private flowSummary(s: MonitorSeries): string {
    const last = s.flow[s.flow.length - 1];
    if (!last) return 'Cumulative flow of task states: no task events yet.';
    return `Cumulative flow of task states, per ${bucketName(s.flowBucketSec)}; now ${FLOW_ORDER.map((x) => `${last.counts[x]} ${x}`).join(', ')}.`;
  }

  private phasesSummary(s: MonitorSeries): string {
    if (s.phases.length === 0) return 'Per-phase durations: no invocations recorded yet.';
    return `Per-phase durations: ${s.phases.map((p) => `${p.phase} average ${duration(p.avgSec)} over ${p.invocations}`).join('; ')}.`;
  }
}
