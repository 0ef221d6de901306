// The analysis group: breaking points (threshold cards and detail rows), the
// usage charts (top 20) and the upgrade view (active clusters, versions).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { breakingPoints, compareVersions, upgrades, usage } from '../../shared/scoring/analysis.js';
import { scoreFleet } from '../../shared/scoring/fleet-score.js';
import { riskSnapshot } from '../../shared/scoring/risk.js';
import { clusterData, dimension, NOW, riskRule, riskRules, scoringRules } from './fixtures.js';

const DISK = riskRule({ metric_key: 'disk_used_pct', warning: 80, critical: 90, aggregation: 'last' });
const NODES = riskRule({ metric_key: 'node_count', warning: 4, critical: 2, inverted: true, aggregation: 'min' });
const COMPACTION = riskRule({ metric_key: 'compaction_score', warning: 500, critical: 1000, aggregation: 'max' });
const RISK = riskRules([DISK, NODES, COMPACTION]);

describe('breakingPoints', () => {
  const fleet = [
    clusterData('a-disk', { cluster: { customer_name: 'A Co' }, today: { disk_used_pct: 95, node_count: 3 } }), // disk critical, nodes warning
    clusterData('b-disk', { cluster: { customer_name: 'B Co' }, today: { disk_used_pct: 85, node_count: 6 } }), // disk warning
    clusterData('c-disk', { cluster: { customer_name: 'C Co' }, today: { disk_used_pct: 85 } }), // disk warning (same value as b)
    clusterData('d-nodes', { cluster: { customer_name: 'D Co' }, today: { disk_used_pct: 50, node_count: 1 } }), // nodes critical
    clusterData('e-none', { cluster: { customer_name: 'E Co' } }), // no data
  ];
  const snapshots = fleet.map((d) => riskSnapshot(d, RISK, 70, NOW));

  it('one card per rule: warning threshold, unit, count and the breaching clusters worst first (inverted: lowest first)', () => {
    const { thresholds } = breakingPoints(snapshots, RISK);
    expect(thresholds).toEqual([
      {
        metric: 'disk_used_pct',
        threshold: 80,
        unit: '%',
        count: 3,
        clusters: [
          { cluster_name: 'a-disk', customer_name: 'A Co', value: 95 },
          { cluster_name: 'b-disk', customer_name: 'B Co', value: 85 }, // tie on value: by name
          { cluster_name: 'c-disk', customer_name: 'C Co', value: 85 },
        ],
      },
      {
        metric: 'node_count',
        threshold: 4,
        unit: 'nodes',
        count: 2,
        clusters: [
          { cluster_name: 'd-nodes', customer_name: 'D Co', value: 1 },
          { cluster_name: 'a-disk', customer_name: 'A Co', value: 3 },
        ],
      },
      { metric: 'compaction_score', threshold: 500, unit: 'score', count: 0, clusters: [] },
    ]);
  });

  it('cards break value ties by cluster name whatever the input order', () => {
    const { thresholds } = breakingPoints([...snapshots].reverse(), RISK);
    expect(thresholds[0]!.clusters.map((c) => c.cluster_name)).toEqual(['a-disk', 'b-disk', 'c-disk']);
  });

  it('detail rows: critical first, then by metric, then by value; threshold is the one breached', () => {
    const { details } = breakingPoints(snapshots, RISK);
    expect(details).toEqual([
      {
        metric: 'disk_used_pct',
        cluster_id: fleet[0]!.cluster.cluster_id,
        cluster_name: 'a-disk',
        customer_name: 'A Co',
        value: 95,
        threshold: 90,
        unit: '%',
        severity: 'critical',
      },
      {
        metric: 'node_count',
        cluster_id: fleet[3]!.cluster.cluster_id,
        cluster_name: 'd-nodes',
        customer_name: 'D Co',
        value: 1,
        threshold: 2,
        unit: 'nodes',
        severity: 'critical',
      },
      {
        metric: 'disk_used_pct',
        cluster_id: fleet[1]!.cluster.cluster_id,
        cluster_name: 'b-disk',
        customer_name: 'B Co',
        value: 85,
        threshold: 80,
        unit: '%',
        severity: 'warning',
      },
      {
        metric: 'disk_used_pct',
        cluster_id: fleet[2]!.cluster.cluster_id,
        cluster_name: 'c-disk',
        customer_name: 'C Co',
        value: 85,
        threshold: 80,
        unit: '%',
        severity: 'warning',
      },
      {
        metric: 'node_count',
        cluster_id: fleet[0]!.cluster.cluster_id,
        cluster_name: 'a-disk',
        customer_name: 'A Co',
        value: 3,
        threshold: 4,
        unit: 'nodes',
        severity: 'warning',
      },
    ]);
  });

  it('detail rows with the same severity, metric and value are ordered by cluster name (not by input order)', () => {
    const { details } = breakingPoints([...snapshots].reverse(), RISK);
    const warnings = details.filter((d) => d.severity === 'warning' && d.metric === 'disk_used_pct').map((d) => d.cluster_name);
    expect(warnings).toEqual(['b-disk', 'c-disk']);
  });

  it('no snapshots → empty cards and no rows', () => {
    const { thresholds, details } = breakingPoints([], RISK);
    expect(thresholds.map((t) => t.count)).toEqual([0, 0, 0]);
    expect(details).toEqual([]);
  });
});

describe('usage charts', () => {
  const health = scoringRules([dimension({ metric_key: 'disk_used_pct', display_name: 'Disk Usage' })]); // 70/80/90, weights 7/3

  it('health distribution, compaction (max, with threshold), latency (avg and max) and qps (avg); no data → no bar', () => {
    const fleet = [
      clusterData('a', { today: { disk_used_pct: 95, compaction_score: [100, 700], avg_latency_ms: [100, 200], max_latency_ms: [900, 400], qps: [10, 30] } }),
      clusterData('b', { today: { disk_used_pct: 80, compaction_score: 700, avg_latency_ms: 300, qps: 50 } }), // no max latency
      clusterData('c', { today: {} }),
      clusterData('d', { today: { disk_used_pct: 10, compaction_score: 50 }, days: { 8: { compaction_score: 9999, qps: 1e6 } } }), // old data ignored
    ];
    // a: disk 95 → 10 → overall 10×0.7 + 30 = 37 Critical; b: disk 80 → 60 → 72 Warning; c, d: 100 Healthy
    const scores = scoreFleet(fleet, health, NOW);
    const u = usage(fleet, scores, health, RISK, NOW);
    expect(u.health_distribution).toEqual({ healthy: 2, warning: 1, critical: 1 });
    expect(u.compaction_bars).toEqual([
      { cluster_name: 'a', value: 700, threshold: 500 },
      { cluster_name: 'b', value: 700, threshold: 500 }, // tie: by name
      { cluster_name: 'd', value: 50, threshold: 500 },
    ]);
    expect(u.latency_trend).toEqual([
      // b has no max_latency_ms data: no bar rather than an invented maximum
      { cluster_name: 'a', avg_latency: 150, max_latency: 900 },
    ]);
    expect(u.qps_bars).toEqual([
      { cluster_name: 'b', value: 50 },
      { cluster_name: 'a', value: 20 },
    ]);
  });

  it('the compaction threshold falls back to the health dimension yellow, then 0', () => {
    const fleet = [clusterData('a', { today: { compaction_score: 10 } })];
    const withDim = scoringRules([dimension({ metric_key: 'compaction_score', green: 100, yellow: 400, red: 900 })]);
    const noCompaction = riskRules([DISK]);
    expect(usage(fleet, [], withDim, noCompaction, NOW).compaction_bars).toEqual([{ cluster_name: 'a', value: 10, threshold: 400 }]);
    expect(usage(fleet, [], health, noCompaction, NOW).compaction_bars).toEqual([{ cluster_name: 'a', value: 10, threshold: 0 }]);
  });

  it('each chart holds the top 20, highest first, ties by name', () => {
    // 25 clusters: q00..q24 with qps 0..24 except q23/q24 tied with q22 at 22
    const fleet = Array.from({ length: 25 }, (_, i) =>
      clusterData(`q${String(24 - i).padStart(2, '0')}`, {
        today: { qps: Math.min(24 - i, 22), compaction_score: 24 - i, avg_latency_ms: 24 - i, max_latency_ms: 100 },
      }),
    );
    const u = usage(fleet, [], health, RISK, NOW);
    expect(u.qps_bars).toHaveLength(20);
    expect(u.qps_bars.slice(0, 4)).toEqual([
      { cluster_name: 'q22', value: 22 },
      { cluster_name: 'q23', value: 22 },
      { cluster_name: 'q24', value: 22 },
      { cluster_name: 'q21', value: 21 },
    ]);
    expect(u.qps_bars.at(-1)).toEqual({ cluster_name: 'q05', value: 5 });
    expect(u.compaction_bars.map((b) => b.cluster_name)).toEqual(Array.from({ length: 20 }, (_, i) => `q${String(24 - i).padStart(2, '0')}`));
    expect(u.latency_trend).toHaveLength(20);
    expect(u.health_distribution).toEqual({ healthy: 0, warning: 0, critical: 0 });
  });
});

describe('compareVersions: numeric-aware semantic version order', () => {
  it.each([
    ['3.10.0', '3.9.2'],
    ['3.9.2', '3.9.1'],
    ['10.0.0', '9.99.99'],
    ['3.3.0', '3.3.0-rc1'], // a pre-release sorts before its release
    ['3.3.0-rc1', '3.2.9'],
    ['3.3.0-beta', '3.3.0-alpha'],
    ['3.2.1', '3.2'],
    ['v10.0.0', 'v3.10.0'], // a v is no part: not 0.0.0 against 0.10.0
    ['v3.10.0', 'v2.5.0'],
    ['v3.1.0', '3.0.9'],
  ])('%s > %s', (newer, older) => {
    expect(compareVersions(newer, older)).toBeGreaterThan(0);
    expect(compareVersions(older, newer)).toBeLessThan(0);
  });

  it('3.2 and 3.2.0 are the same version', () => {
    expect(compareVersions('3.2', '3.2.0')).toBe(0);
    expect(compareVersions('3.2.0', '3.2.0')).toBe(0);
  });

  it('numeric pre-release identifiers compare numerically (semver §11): 3.0.0-rc.10 > 3.0.0-rc.9', () => {
    expect(compareVersions('3.0.0-rc.10', '3.0.0-rc.9')).toBeGreaterThan(0);
    expect(compareVersions('3.0.0-beta.2', '3.0.0-beta.11')).toBeLessThan(0);
  });

  it('property: for x.y.z versions the order is the numeric tuple order', () => {
    const v = fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30));
    fc.assert(
      fc.property(v, v, ([a, b, c], [x, y, z]) => {
        const expected = Math.sign(a - x || b - y || c - z);
        expect(Math.sign(compareVersions(`${a}.${b}.${c}`, `${x}.${y}.${z}`))).toBe(expected);
      }),
    );
  });
});

describe('upgrades', () => {
  const fleet = [
    clusterData('n1', { cluster: { engine_version: '3.10.0' } }),
    clusterData('n3', { cluster: { engine_version: '3.9.2', resource_state: 'Running' } }),
    clusterData('n2', { cluster: { engine_version: '3.9.2' } }),
    clusterData('stopped', { cluster: { engine_version: '3.2.6', resource_state: 'STOPPED' } }),
    clusterData('gone', { cluster: { engine_version: '3.9.2', resource_state: 'deleted' } }), // case-insensitive
    clusterData('susp', { cluster: { engine_version: '3.10.0', resource_state: 'Suspended' } }),
    clusterData('rc', { cluster: { engine_version: '3.10.0-rc1' } }),
    clusterData('x', { cluster: { engine_version: '3.2.6', node_count: 3, cluster_type: 'SHARED_DATA', customer_name: 'Globex' } }),
  ];

  it('lists active clusters only, oldest version first, ties by name', () => {
    const { clusters } = upgrades(fleet);
    expect(clusters.map((c) => [c.cluster_name, c.engine_version])).toEqual([
      ['x', '3.2.6'],
      ['n2', '3.9.2'],
      ['n3', '3.9.2'],
      ['rc', '3.10.0-rc1'],
      ['n1', '3.10.0'],
    ]);
    expect(clusters[0]).toEqual({
      cluster_id: fleet[7]!.cluster.cluster_id,
      cluster_name: 'x',
      customer_name: 'Globex',
      cluster_type: 'SHARED_DATA',
      region: 'US East (us-east-1)',
      engine_version: '3.2.6',
      resource_state: 'RUNNING',
      node_count: 3,
    });
  });

  it.each(['STOPPED', 'SUSPENDED', 'DELETED', 'DELETING', 'TERMINATED', 'RELEASED', 'stopped', 'Deleting'])('resource state %s is inactive', (state) => {
    expect(upgrades([clusterData('z', { cluster: { resource_state: state } })]).clusters).toEqual([]);
  });

  it('available_versions: each version once, newest first by semantic version (3.10.0 > 3.9.2)', () => {
    expect(upgrades(fleet).available_versions).toEqual(['3.10.0', '3.10.0-rc1', '3.9.2', '3.2.6']);
    expect(upgrades([]).available_versions).toEqual([]);
  });

  it('available_versions: only what listed clusters run (a version only a stopped one runs is no upgrade target)', () => {
    const withStoppedNewest = [...fleet, clusterData('old-stopped', { cluster: { engine_version: '4.0.0', resource_state: 'STOPPED' } })];
    expect(upgrades(withStoppedNewest).available_versions).toEqual(['3.10.0', '3.10.0-rc1', '3.9.2', '3.2.6']);
  });
});
