// Every number the console writes, in English whatever the browser's language (one format each): a German
// browser read "26.000" on the fleet page beside "26,000" on the cost page, two decimal marks in one console.
// Like times (UTC, time.tsx), one team reads one figure the same way on every screen.
const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
/** Money as the LLM cost page writes it ($1,234.56, $0.0042); a cost too small for four decimals is not "$0.0000", which reads as free. */
export const usd = (v: number) => (v > 0 && v < 0.0001 ? '< $0.0001' : dollars.format(v));
/** 8.5 s, 42 s, 2 min 0 s: whole seconds before the minutes are split (119.6 s is 2 min 0 s, not 1 min 60 s). */
export const seconds = (v: number) => {
  if (v < 59.5) return `${v.toFixed(v < 10 ? 1 : 0)} s`;
  const whole = Math.round(v);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
};
/** A whole count with thousands separators: 26,000 tokens, 1,440 samples. */
export const count = (v: number) => v.toLocaleString('en');
const measured = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });
/** A measured value to at most two decimals (a metric's latest, min, average; a view's figures): 1,234.57, 0.5, 12. */
export const decimal = (v: number) => measured.format(v);
const compactFormat = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
/** A figure where room is short (a chart's axis): 10,000 and above as 10K, 3.6M, 1.2T; smaller ones as `decimal`. */
export const compact = (v: number) => (Math.abs(v) >= 10_000 ? compactFormat.format(v) : measured.format(v));
const tenths = new Intl.NumberFormat('en', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
/** A score out of 100 with one decimal, as the fleet and view pages write it: 36.0 beside 45.2, not 36. */
export const score = (v: number) => tenths.format(v);
/** A share from 0 to 1 (an investigation's confidence) as a whole percentage: 0.853 is 85%. */
export const percent = (v: number) => `${Math.round(v * 100)}%`;
/** A word or phrase with its first letter capitalised, as labels are written: "critical" → "Critical". */
export const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
