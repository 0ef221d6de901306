/// <reference types="vite/client" />
// A small line chart over uPlot. uPlot and its CSS are imported when the first chart
// mounts, so they stay out of the first load (and out of pages that do not chart).
// The canvas is decorative for assistive technology: the figure has a caption, a
// one-line summary (latest, min and max per series) and a table of every point
// behind "Values" (open when the chart cannot be drawn), so screen readers, text
// browsers and anyone asking "what was it on that day?" get the same data.
// Times are UTC, as everywhere in the console (components/time.tsx): uPlot
// places and writes its time ticks in the browser's zone unless told otherwise.
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import type uPlot from 'uplot';
import './line-chart.css';
import { axisLabels, axisWidth } from './chart-axis';
import { compact, decimal } from './format';

export interface LineSeries {
  /** Legend and table-column name. */
  label: string;
  /** One value per x; null leaves a gap. */
  values: readonly (number | null)[];
  /** CSS colour; defaults to a palette that reads in light and dark themes. */
  color?: string;
}

export interface LineChartProps {
  /** The figure's caption and the chart's accessible name. */
  title: string;
  /** x values as Unix seconds (uPlot's time scale), ascending. */
  x: readonly number[];
  series: readonly LineSeries[];
  /** Plot height in CSS pixels (default 180); the width follows the container. */
  height?: number;
  /** Appended to values in the summary, table and tooltip legend, e.g. '%' or ' ms'. */
  unit?: string;
  /** Overrides the generated one-line summary under the caption. */
  summary?: string;
  /** Formats x for the table (default: the UTC date, e.g. 2024-05-01). */
  formatX?: (t: number) => string;
  /** Formats values for the summary and table (default: up to 2 decimals). */
  formatY?: (v: number) => string;
  /** Formats the y axis's ticks, where room is short (default: compact figures, 3.6M). */
  formatTick?: (v: number) => string;
  className?: string;
}

const PALETTE = ['#0b72d9', '#d9480f', '#2b8a3e', '#ae3ec9', '#e67700', '#1098ad'];

const defaultX = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

const [S, M, H, D] = [1, 60, 3600, 86_400];
/**
 * The time axis's labels, ISO-ordered like the console's UTC times: uPlot's templates per tick step
 * ([smallest step in s, label, then what a tick adds where the year, month, day, hour, minute or second rolls
 * over, 1: appended]). The first tick and each new year carry the year, hourly ticks each new day's date.
 */
const UTC_TICKS: (string | number | null)[][] = [
  [365 * D, '{YYYY}', null, null, null, null, null, null, 1],
  [28 * D, '{YYYY}-{MM}', null, null, null, null, null, null, 1],
  [D, '{MM}-{DD}', '\n{YYYY}', null, null, null, null, null, 1],
  [H, '{HH}:{mm}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
  [M, '{HH}:{mm}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
  [S, '{HH}:{mm}:{ss}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
];
const defaultY = decimal;

type UPlotModule = typeof uPlot;
let loading: Promise<UPlotModule> | undefined;
/** uPlot and its stylesheet, imported once on first use. */
function loadUPlot(): Promise<UPlotModule> {
  loading ??= Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([m]) => m.default);
  return loading;
}

function cssVar(el: Element, name: string, fallback: string): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

export function describe(series: readonly LineSeries[], fmt: (v: number) => string, unit = ''): string {
  return series
    .map((s) => {
      const vals = s.values.filter((v): v is number => v != null && Number.isFinite(v));
      if (vals.length === 0) return `${s.label}: no data`;
      const last = vals[vals.length - 1] as number;
      return `${s.label}: latest ${fmt(last)}${unit}, min ${fmt(Math.min(...vals))}${unit}, max ${fmt(Math.max(...vals))}${unit}`;
    })
    .join('; ');
}

export function LineChart({
  title,
  x,
  series,
  height = 180,
  unit = '',
  summary,
  formatX = defaultX,
  formatY = defaultY,
  formatTick = compact,
  className,
}: LineChartProps) {
  const id = useId();
  const host = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const text = useMemo(() => summary ?? describe(series, formatY, unit), [summary, series, formatY, unit]);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    let plot: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let cancelled = false;
    loadUPlot()
      .then((UPlot) => {
        if (cancelled) return;
        const axisStroke = cssVar(el, '--muted', '#59636e');
        const grid = cssVar(el, '--border', '#d0d7de');
        const axis = { stroke: axisStroke, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
        const opts: uPlot.Options = {
          width: Math.max(el.clientWidth, 200),
          height,
          legend: { show: series.length > 1, live: false },
          cursor: { drag: { x: false, y: false } },
          scales: { x: { time: true } },
          // Ticks at UTC midnights (hours, …) and labelled in UTC, whatever the browser's zone.
          tzDate: (t) => UPlot.tzDate(new Date(t * 1000), 'Etc/UTC'),
          axes: [
            { ...axis, values: UTC_TICKS },
            { ...axis, size: (_u, labels) => axisWidth(labels), values: (_u, ticks) => axisLabels(ticks, formatTick, unit) },
          ],
          series: [
            { value: (_u, t) => (t == null ? '' : formatX(t)) },
            ...series.map((s, i) => ({
              label: s.label,
              stroke: s.color ?? PALETTE[i % PALETTE.length],
              width: 2,
              points: { show: x.length <= 31, size: 5 },
              spanGaps: false,
              value: (_u: uPlot, v: number | null) => (v == null ? '–' : `${formatY(v)}${unit}`),
            })),
          ],
        };
        const data = [Array.from(x), ...series.map((s) => Array.from(s.values))] as uPlot.AlignedData;
        plot = new UPlot(opts, data, el);
        observer = new ResizeObserver(() => plot?.setSize({ width: Math.max(el.clientWidth, 200), height }));
        observer.observe(el);
      })
      .catch((e: unknown) => {
        if (!cancelled) setFailed(e instanceof Error ? e.message : String(e));
      });
    return () => {
      cancelled = true;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [x, series, height, unit, formatX, formatY, formatTick]);

  return (
    <figure className={['line-chart', className].filter(Boolean).join(' ')} aria-labelledby={`${id}-c`}>
      <figcaption id={`${id}-c`}>{title}</figcaption>
      <p className="line-chart-summary" id={`${id}-s`}>
        {text}
      </p>
      {failed ? (
        <p className="state problem" role="alert">
          The chart could not be drawn ({failed}); the values are in the table below.
        </p>
      ) : (
        <div ref={host} className="line-chart-plot" style={{ minHeight: height }} aria-hidden="true" />
      )}
      <details className="line-chart-values" open={Boolean(failed)}>
        {/* Named by its chart: a cluster page's 13 disclosures were 13 "Values" in a list of its controls. */}
        <summary>
          Values<span className="visually-hidden"> of {title}</span>
        </summary>
        <table className="line-chart-table">
          <caption>{title}: values</caption>
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              {series.map((s) => (
                <th scope="col" key={s.label}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {x.map((t, i) => (
              <tr key={t}>
                <th scope="row">{formatX(t)}</th>
                {series.map((s) => {
                  const v = s.values[i];
                  return <td key={s.label}>{v == null ? '–' : `${formatY(v)}${unit}`}</td>;
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
