// A chart's y axis, drawn on uPlot's canvas where nothing wraps or scrolls: its labels must be short, and the
// axis as wide as the longest, or a figure is cut from the left (100,000 drew as "00,000" in a fixed 56 px).

/** The axis's labels: each tick as `format` writes it, with the unit (3.6M ms). */
export const axisLabels = (ticks: readonly number[], format: (v: number) => string, unit = '') => ticks.map((t) => `${format(t)}${unit}`);

/** The axis's width in CSS pixels for `labels` at the console's 12 px font (≈ 7.5 px a character, and room for the tick marks). */
export const axisWidth = (labels: readonly string[] | null | undefined) =>
  labels?.length ? Math.max(40, Math.ceil(Math.max(...labels.map((l) => l.length)) * 7.5 + 18)) : 56;
