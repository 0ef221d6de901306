// Money, durations and counts as every AI and cost page writes them (one format each).
const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
/** Money as the LLM cost page writes it ($1,234.56, $0.0042); a cost too small for four decimals is not "$0.0000", which reads as free. */
export const usd = (v: number) => (v > 0 && v < 0.0001 ? '< $0.0001' : dollars.format(v));
/** 8.5 s, 42 s, 2 min 0 s: whole seconds before the minutes are split (119.6 s is 2 min 0 s, not 1 min 60 s). */
export const seconds = (v: number) => {
  if (v < 59.5) return `${v.toFixed(v < 10 ? 1 : 0)} s`;
  const whole = Math.round(v);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
};
export const count = (v: number) => v.toLocaleString('en');
/** A share from 0 to 1 (an investigation's confidence) as a whole percentage: 0.853 is 85%. */
export const percent = (v: number) => `${Math.round(v * 100)}%`;
