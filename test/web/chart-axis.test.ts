// A chart's y axis (infra/web/src/components/chart-axis.ts) with the figures a cluster's metrics reach: an hour's
// maximum latency is 3,600,000 ms. A fixed 56 px axis drew 100,000 and up as "00,000", every tick alike.
import { describe, expect, it } from 'vitest';
import { axisLabels, axisWidth } from '../../infra/web/src/components/chart-axis.js';
import { compact, usd } from '../../infra/web/src/components/format.js';

describe('a chart’s y axis', () => {
  it('writes large ticks compactly, small ones whole, and in English', () => {
    expect(axisLabels([0, 2_000_000, 4_000_000, 6_000_000], compact, ' ms')).toEqual(['0 ms', '2M ms', '4M ms', '6M ms']);
    expect(axisLabels([40_000, 100_000, 3_650_000, 1.25e12], compact)).toEqual(['40K', '100K', '3.7M', '1.3T']);
    expect(axisLabels([0.5, 9_999, -25_000], compact, '%')).toEqual(['0.5%', '9,999%', '-25K%']);
  });

  it('is as wide as its longest label, so no figure is cut', () => {
    const narrow = axisWidth(axisLabels([0, 50, 100], compact, '%'));
    const wide = axisWidth(axisLabels([0, 5_000, 9_999.5], usd));
    expect(narrow).toBeGreaterThanOrEqual(40);
    // "$9,999.50" is 9 characters, "100%" 4: the wider labels get the wider axis.
    expect(wide).toBeGreaterThan(narrow);
    expect(wide).toBeGreaterThanOrEqual(9 * 7);
    expect(axisWidth([])).toBe(56);
    expect(axisWidth(null)).toBe(56);
  });
});
