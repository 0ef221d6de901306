// Grouping alerts into issues by hand-made sequences: joins, flapping, quiet
// periods, late resolutions, severity rules, label keys, and determinism.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AlertRecord } from '../../shared/db/alerts.js';
import { severityOf } from '../../shared/fleet/ingest.js';
import { alertSeverity, groupAlerts, groupKeyOf, nameFits } from '../../shared/issues/grouping.js';
import type { IssueRules } from '../../shared/rules/schemas.js';

const NOW = new Date('2026-11-20T12:00:00Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

const RULES: IssueRules = {
  grouping: { keys: ['cluster', 'alert_name'], join_window_minutes: 60 },
  resolution: { quiet_minutes: 30 },
  severity: { default: 'Warning', label: 'severity', patterns: [{ match: '*Down', severity: 'Critical' }] },
};

let n = 0;
/** An alert that started `startedAgo` minutes ago; resolved `endedAgo` minutes ago, or firing. */
function alert(name: string, startedAgo: number, endedAgo: number | null, over: Partial<AlertRecord> = {}): AlertRecord {
  const fingerprint = over.fingerprint ?? `fp-${name}`;
  n++;
  return {
    alert_id: `a${n}`,
    cluster_id: 'c1',
    alert_name: name,
    severity: 'warning',
    status: endedAgo === null ? 'Firing' : 'Resolved',
    starts_at: minutesAgo(startedAgo),
    ends_at: endedAgo === null ? null : minutesAgo(endedAgo),
    fingerprint,
    labels: { alertname: name, cluster_id: over.cluster_id ?? 'c1', ...over.labels },
    annotations: {},
    summary: name,
    detail: '',
    dashboard_url: '',
    received_at: minutesAgo(startedAgo),
    updated_at: minutesAgo(startedAgo),
    ...over,
  };
}

describe('joining alerts into issues', () => {
  it('a flapping alert (fires, resolves, fires again within the window) stays one issue counting every firing', () => {
    const alerts = [alert('DiskHigh', 300, 290), alert('DiskHigh', 270, 260), alert('DiskHigh', 240, 235), alert('DiskHigh', 200, null)];
    const issues = groupAlerts(alerts, RULES, NOW);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      issue_name: 'DiskHigh',
      alert_count: 4,
      status: 'Ongoing',
      first_seen: minutesAgo(300),
      last_seen: minutesAgo(200),
      resolved_at: null,
    });
  });

  it('an alert after the join window opens a new issue; the old one is Resolved at its last resolution', () => {
    const issues = groupAlerts([alert('DiskHigh', 500, 480), alert('DiskHigh', 400, null)], RULES, NOW); // 80 min > 60 min window
    expect(issues.map((i) => [i.status, i.alert_count, i.resolved_at])).toEqual([
      ['Resolved', 1, minutesAgo(480)],
      ['Ongoing', 1, null],
    ]);
    expect(issues[0]!.issue_id).not.toBe(issues[1]!.issue_id);
  });

  it('the window counts from the latest resolution, and never closes while an alert fires', () => {
    // first alert fires for 5 hours (resolved 100 min ago); one starting 90 min after its start still joins
    const issues = groupAlerts([alert('Lag', 400, 100), alert('Lag', 310, 300), alert('Lag', 50, null)], RULES, NOW);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.alert_count).toBe(3);
  });

  it('stays Ongoing through the quiet period after the last alert resolved, then Resolved', () => {
    expect(groupAlerts([alert('Lag', 60, 20)], RULES, NOW)[0]).toMatchObject({ status: 'Ongoing', resolved_at: null }); // 20 < 30 quiet minutes
    expect(groupAlerts([alert('Lag', 60, 30)], RULES, NOW)[0]).toMatchObject({ status: 'Resolved', resolved_at: minutesAgo(30) });
  });

  it('a late resolved notification (the alert shows up already resolved) resolves the issue at its real end', () => {
    const late = alert('NodeDown', 600, 590);
    expect(groupAlerts([late], RULES, NOW)[0]).toMatchObject({ status: 'Resolved', resolved_at: minutesAgo(590), severity: 'Critical', alert_count: 1 });
  });

  it('different alert names and clusters are different issues under the default keys; one issue per cluster under [cluster]', () => {
    const alerts = [alert('A', 50, null), alert('B', 40, null), alert('A', 30, null, { cluster_id: 'c2' })];
    expect(groupAlerts(alerts, RULES, NOW)).toHaveLength(3);
    const byCluster = groupAlerts(alerts, { ...RULES, grouping: { ...RULES.grouping, keys: ['cluster'] } }, NOW);
    expect(byCluster.map((i) => [i.cluster_id, i.issue_name, i.alert_count])).toEqual([
      ['c1', 'A, B', 2],
      ['c2', 'A', 1],
    ]);
  });

  it('groups by a label when the rules say so, and names the issue with it', () => {
    const rules: IssueRules = { ...RULES, grouping: { ...RULES.grouping, keys: ['cluster', 'label:service'] } };
    const alerts = [
      alert('A', 50, null, { labels: { service: 'api' } }),
      alert('B', 40, null, { labels: { service: 'api' } }),
      alert('C', 30, null, { labels: { service: 'db' } }),
    ];
    const issues = groupAlerts(alerts, rules, NOW);
    expect(issues.map((i) => i.issue_name)).toEqual(['A, B (service=api)', 'C (service=db)']);
    expect(groupKeyOf(alerts[0]!, rules.grouping.keys)).toBe('cluster=c1|label:service=api');
  });
});

describe('an issue of many alert names', () => {
  it('keeps the first 50 names in order of appearance, and its name counts them all', () => {
    const byCluster: IssueRules = { ...RULES, grouping: { ...RULES.grouping, keys: ['cluster'] } };
    const names = Array.from({ length: 120 }, (_, i) => `Alert${String(i).padStart(3, '0')}`);
    const issues = groupAlerts(
      names.map((name, i) => alert(name, 200 - i, null)),
      byCluster,
      NOW,
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]!.alert_names).toEqual(names.slice(0, 50));
    expect(issues[0]!.issue_name).toBe('Alert000, Alert001 and 118 more');
    expect(issues[0]!.alert_count).toBe(120);
  });
});

describe('severity', () => {
  it('a name pattern wins over the label; the label over the default; any Critical alert makes the issue Critical', () => {
    expect(alertSeverity(alert('BrokerDown', 1, null, { labels: { severity: 'warning' } }), RULES.severity)).toBe('Critical');
    expect(alertSeverity(alert('Lag', 1, null, { labels: { severity: 'CRITICAL' } }), RULES.severity)).toBe('Critical');
    expect(alertSeverity(alert('Lag', 1, null, { labels: { severity: 'info' } }), RULES.severity)).toBe('Warning');
    expect(alertSeverity(alert('Lag', 1, null, { labels: { severity: 'critical' } }), { ...RULES.severity, label: null })).toBe('Warning');
    const mixed = groupAlerts([alert('X', 50, 45, { labels: { severity: 'critical' } }), alert('X', 40, null)], RULES, NOW);
    expect(mixed[0]!.severity).toBe('Critical');
  });

  it('reads the label as the alert record does: page, error and high are Critical, warn and medium Warning, with a default of either', () => {
    const criticalDefault = { ...RULES.severity, default: 'Critical' as const };
    for (const value of ['page', 'Error', ' high ']) {
      const a = alert('Lag', 1, null, { labels: { severity: value } });
      expect(alertSeverity(a, RULES.severity)).toBe('Critical');
      expect(severityOf(value)).toBe('Critical');
    }
    for (const value of ['warn', 'MEDIUM']) {
      expect(alertSeverity(alert('Lag', 1, null, { labels: { severity: value } }), criticalDefault)).toBe('Warning');
      expect(severityOf(value)).toBe('Warning');
    }
    expect(alertSeverity(alert('Lag', 1, null, { labels: { severity: 'info' } }), criticalDefault)).toBe('Critical');
  });
});

/** Whether `glob` (`*` any run, `?` one character) fits the whole `text`: the textbook table, row by row. */
function globReference(glob: string, text: string): boolean {
  let fits = [true, ...Array<boolean>(text.length).fill(false)]; // fits[j]: the glob so far fits text[0, j)
  for (const c of glob) {
    const next = Array<boolean>(text.length + 1).fill(false);
    for (let j = 0; j <= text.length; j++) {
      if (c === '*') next[j] = fits[j]! || (j > 0 && next[j - 1]!);
      else next[j] = j > 0 && fits[j - 1]! && (c === '?' || c === text[j - 1]);
    }
    fits = next;
  }
  return fits[text.length]!;
}

describe('alert-name patterns (globs)', () => {
  it('match the whole name, case-insensitively, with * and ? and | between alternatives', () => {
    expect(nameFits('*Down|*Unavailable', 'BrokerDown')).toBe(true);
    expect(nameFits('*Down|*Unavailable', 'brokerdown')).toBe(true);
    expect(nameFits('*Down', 'DownstreamLag')).toBe(false); // whole name, not a substring
    expect(nameFits('Disk*', 'DiskFull')).toBe(true);
    expect(nameFits('Node?Lost', 'Node1Lost')).toBe(true);
    expect(nameFits('Node?Lost', 'Node12Lost')).toBe(false);
    expect(nameFits('a*b*c', 'axxbyyc')).toBe(true);
  });

  // Checked for the right answer, not timed: how long the worst case takes is measured by
  // `npm run bench -- rules`. (A backtracking matcher would take minutes here and hit the test timeout.)
  it('answer right on the inputs that make regular expressions backtrack for minutes', () => {
    const many = 'a'.repeat(200);
    expect(nameFits('*a*a*a*a*a*a*a*a*b', many)).toBe(false);
    expect(nameFits('*a*a*a*a*a*a*a*a*b', `${many}b`)).toBe(true);
    expect(nameFits('*a*a*a*a*a*a*a*a*a', many)).toBe(true);
    expect(nameFits(`${'*'.repeat(50)}b`, many)).toBe(false);
    expect(nameFits(`${'?*'.repeat(100)}`, many)).toBe(true);
    expect(nameFits(`${'?*'.repeat(201)}`, many)).toBe(false); // 201 characters at least
  });

  it('agree with a reference matcher on any glob of a, b, ? and * over any text of the same (an alert name may hold * or ?)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'b', '?', '*'), maxLength: 12 }),
        fc.string({ unit: fc.constantFrom('a', 'b', '?', '*'), maxLength: 24 }),
        (glob, text) => {
          expect(nameFits(glob, text)).toBe(globReference(glob, text));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('determinism', () => {
  const arbitraryAlerts = fc
    .array(
      fc.record({
        name: fc.constantFrom('A', 'B'),
        start: fc.integer({ min: 1, max: 2000 }),
        length: fc.option(fc.integer({ min: 0, max: 300 })),
        cluster: fc.constantFrom('c1', 'c2'),
      }),
      { maxLength: 40 },
    )
    .map((specs) =>
      specs.map((s, i) => alert(s.name, s.start, s.length === null ? null : Math.max(0, s.start - s.length), { cluster_id: s.cluster, fingerprint: `fp${i}` })),
    );

  it('gives the same issues with the same ids whatever order the alerts come in', () => {
    fc.assert(
      fc.property(arbitraryAlerts, fc.array(fc.double({ noNaN: true }), { minLength: 1 }), (alerts, keys) => {
        const shuffled = alerts
          .map((a, i) => ({ a, k: keys[i % keys.length]! + i * 1e-9 }))
          .sort((x, y) => x.k - y.k)
          .map((x) => x.a);
        expect(groupAlerts(shuffled, RULES, NOW)).toEqual(groupAlerts(alerts, RULES, NOW));
      }),
    );
  });

  it('puts every alert in exactly one issue, and an Ongoing issue is one with a firing alert or a recent resolution', () => {
    fc.assert(
      fc.property(arbitraryAlerts, (alerts) => {
        const issues = groupAlerts(alerts, RULES, NOW);
        expect(issues.reduce((sum, i) => sum + i.alert_count, 0)).toBe(alerts.length);
        for (const issue of issues) expect(issue.status === 'Resolved').toBe(issue.resolved_at !== null);
      }),
    );
  });
});
